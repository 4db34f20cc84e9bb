"""A tray the player marked, kept true over a camera's frames: :class:`MarkedTrays`.

Clicked corners are a few pixels off, so they are snapped to the picture's edges on
the first frames they are used with (:func:`farklecam.vision.tray.sides.snap`). Marked corners
(clicks or ArUco markers) belong to one camera pose, so each tray keeps a watch on
its first frame (:class:`farklecam.vision.camera.motion.CameraMotion`) and is set aside while
the picture has moved since (a bumped camera). Both answers are kept per tray in
caches that every copy of a reader shares (:meth:`farklecam.vision.reader.DiceReader.with_tray`):
a server that makes a reader per request still snaps once and still compares each
frame with the tray's first one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.motion import CameraMotion
from farklecam.vision.tray.outline import TrayOutline
from farklecam.vision.tray.sides import snap

__all__ = ["SNAP_TRIES", "WATCH_EVERY", "MarkedTrays"]

#: Frames on which clicked corners are tried against the picture's edges before they are used as clicked.
SNAP_TRIES = 5
#: Trays whose snapping and watch are remembered (a server sees a few tables' corners).
_CACHE = 64
#: Calibrated trays that come from a frame of the camera and go stale when it moves.
_WATCHED_SOURCES = ("corners", "aruco")
#: A marked tray's watch looks at one read in this many (:class:`_TrayWatch`).
WATCH_EVERY = 4


class _TrayWatch:
    """A marked tray's watch for a bumped camera, looking every :data:`WATCH_EVERY` reads.

    Comparing a frame with the tray's first one costs about 1.5 ms (thumbnails, two phase
    correlations, a log-polar spectrum), a tenth of a read; a bump is still caught within a
    few reads, and a table reads only a few times per throw. The reads in between keep the
    last verdict.
    """

    def __init__(self, motion: CameraMotion) -> None:
        self.motion, self.reads, self.verdict = motion, 0, False

    def moved(self, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether the picture has moved since the first frame, as last looked at."""
        if self.reads % WATCH_EVERY == 0:
            self.verdict = self.motion.moved(frame)
        self.reads += 1
        return self.verdict


class MarkedTrays:
    """The snaps and watches of the trays a reader (and its copies) was given."""

    def __init__(self) -> None:
        self._snaps: dict[tuple[bytes, int, int], tuple[int, TrayOutline]] = {}
        self._watches: dict[bytes, _TrayWatch] = {}

    def moved(self, tray: TrayOutline, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether the picture moved since the first frame read with this marked tray (a bumped camera).

        Labelled trays (generated scenes) and found ones are not watched.
        """
        if tray.source not in _WATCHED_SOURCES:
            return False
        key = tray.polygon.tobytes()
        watch = self._watches.get(key)
        if watch is None:
            if len(self._watches) >= _CACHE:
                self._watches.clear()
            watch = self._watches[key] = _TrayWatch(CameraMotion(keep_first=True))
        return watch.moved(frame)

    def snapped(self, tray: TrayOutline, frame: npt.NDArray[np.uint8]) -> TrayOutline:
        """``tray`` snapped to the edges of the first frames it is used with (:func:`farklecam.vision.tray.sides.snap`).

        Kept per corners and picture size; after :data:`SNAP_TRIES` frames without a fit
        the clicks stand as given.
        """
        key = (tray.polygon.tobytes(), frame.shape[1], frame.shape[0])
        tries, outline = self._snaps.get(key, (0, tray))
        if outline.sides is not None or tries >= SNAP_TRIES:
            return outline
        outline = snap(tray, frame)
        if len(self._snaps) >= _CACHE:
            self._snaps.clear()
        self._snaps[key] = (tries + 1, outline)
        return outline
