"""What the reader remembers of a tray across a camera's frames.

:class:`MarkedTrays` keeps a marked tray true: clicked corners are snapped to the
picture's edges once, and the tray is set aside while the camera has moved since its
first frame. :class:`FoundTray` spares a stream's reads the search for its tray (about half
of a read's time): an outline the picture gave is used again for the next reads while the
camera stays put. :class:`TrayMemory` keeps the tray a stream's reads found, for the reads
that cannot find it (a lone die thrown off the tray leaves the finder nothing to go by).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.motion import CameraMotion
from farklecam.vision.reading import DieStatus, Reading, TrayState
from farklecam.vision.tray.outline import TrayOutline, footprint_inside
from farklecam.vision.tray.sides import snap
from farklecam.vision.tray.trust import off_tray_calls

__all__ = ["REUSE_READS", "SNAP_TRIES", "WATCH_EVERY", "FoundTray", "MarkedTrays", "TrayMemory", "polygon_iou"]

#: Frames on which clicked corners are tried against the picture's edges before they are used as clicked.
SNAP_TRIES = 5
#: Trays whose snapping and watch are remembered (a server sees a few tables' corners).
_CACHE = 64
#: Calibrated trays that come from a frame of the camera and go stale when it moves.
_WATCHED_SOURCES = ("corners", "aruco")
#: A marked tray's watch compares one read in this many with the tray's first frame.
WATCH_EVERY = 4
#: Reads of a stream that use the outline the picture last gave before it is searched for again.
REUSE_READS = 8


class _TrayWatch:
    """A marked tray's watch for a bumped camera, looking one read in :data:`WATCH_EVERY` (the rest keep it)."""

    def __init__(self, motion: CameraMotion) -> None:
        self.motion, self.reads, self.verdict = motion, 0, False

    def moved(self, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether the picture has moved since the first frame, as last looked at."""
        if self.reads % WATCH_EVERY == 0:
            self.verdict = self.motion.moved(frame)
        self.reads += 1
        return self.verdict


class MarkedTrays:
    """The snaps and watches of the trays a reader was given, shared by all its copies (a server's per request)."""

    def __init__(self) -> None:
        self._snaps: dict[tuple[bytes, int, int], tuple[int, TrayOutline]] = {}
        self._watches: dict[bytes, _TrayWatch] = {}

    def moved(self, tray: TrayOutline, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether the picture moved since the first frame read with this tray (clicked or marker trays only)."""
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
        """``tray`` snapped to the edges of the first frames it is used with (:data:`SNAP_TRIES` per picture size)."""
        key = (tray.polygon.tobytes(), frame.shape[1], frame.shape[0])
        tries, outline = self._snaps.get(key, (0, tray))
        if outline.sides is not None or tries >= SNAP_TRIES:
            return outline
        outline = snap(tray, frame)
        if len(self._snaps) >= _CACHE:
            self._snaps.clear()
        self._snaps[key] = (tries + 1, outline)
        return outline


class FoundTray:
    """One fixed camera's tray as the picture last gave it, used again while the camera stays put.

    The search for a tray in the picture costs about as much as the rest of a read, and a
    table's tray does not move between the reads of a stream. An outline the search found
    serves the next ``reuse`` reads as found (its sides and corners with it); each compares
    its picture with the one the tray was found in (a thumbnail's phase correlation, a
    millisecond or two), and a moved camera, or the reuse running out, searches again. A
    search that finds nothing is not remembered.
    Not thread-safe: one per stream.
    """

    def __init__(self, reuse: int = REUSE_READS) -> None:
        if reuse < 0:
            raise ValueError(f"reuse must be >= 0, but got {reuse!r}")
        self.reuse = reuse
        self._outline: TrayOutline | None = None
        self._left = 0
        self._watch: CameraMotion | None = None

    def outline(self, frame: npt.NDArray[np.uint8], search: Callable[[], TrayOutline | None]) -> TrayOutline | None:
        """The tray for ``frame``: the remembered outline while it may serve, else ``search()``'s (remembered)."""
        reusable = self._outline is not None and self._left > 0 and self._watch is not None
        if reusable and self._watch is not None and not self._watch.moved(frame):
            self._left -= 1
            return self._outline
        outline = search()
        self._outline, self._left = outline, self.reuse
        if outline is not None:
            self._watch = CameraMotion(keep_first=True)
            self._watch.moved(frame)  # the picture it was found in: a moved camera differs from it
        return outline


def _signed_area(poly: npt.NDArray[np.float64]) -> float:
    """Area of a simple polygon (shoelace): positive when its vertices run counter-clockwise in x-right, y-up."""
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def _clip(subject: npt.NDArray[np.float64], clip: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The part of ``subject`` inside the convex polygon ``clip`` (Sutherland-Hodgman; OpenCV errs on shared edges)."""
    turn = 1.0 if _signed_area(clip) >= 0 else -1.0
    out = subject
    for p, q in zip(clip, np.roll(clip, -1, axis=0), strict=True):
        if len(out) == 0:
            break
        edge = q - p
        side = turn * (edge[0] * (out[:, 1] - p[1]) - edge[1] * (out[:, 0] - p[0]))  # >= 0: inside
        kept: list[npt.NDArray[np.float64]] = []
        for k in range(len(out)):
            a, b, sa, sb = out[k - 1], out[k], side[k - 1], side[k]
            if (sa >= 0) != (sb >= 0):
                kept.append(a + (b - a) * (sa / (sa - sb)))
            if sb >= 0:
                kept.append(b)
        out = np.asarray(kept, np.float64).reshape(-1, 2)
    return out


def polygon_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Intersection over union of two convex polygons (k, 2) in pixels."""
    pa, pb = (np.asarray(p, np.float64).reshape(-1, 2) for p in (a, b))
    area_a, area_b = abs(_signed_area(pa)), abs(_signed_area(pb))
    inside = _clip(pa, pb)
    inter = abs(_signed_area(inside)) if len(inside) >= 3 else 0.0
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


class TrayMemory:
    """The tray of one camera's stream, as its reads found it; used where a read could not find it.

    A frame whose dice all lie off the tray finds no outline, or one doubted for holding few
    dice, so nothing is called off in exactly the throws where a die is. A table's tray does
    not move: an outline found undoubted in ``confirm`` reads agreeing by ``agree_iou`` makes the
    off-tray calls (at ``min_inside``) of later reads that have none, and is forgotten when the
    camera moves.
    """

    def __init__(self, *, confirm: int = 3, agree_iou: float = 0.8, min_inside: float = 0.5) -> None:
        if confirm < 1 or not 0.0 < agree_iou <= 1.0 or not 0.0 <= min_inside <= 1.0:
            raise ValueError(
                f"confirm must be >= 1, agree_iou in (0, 1] and min_inside in 0..1, but got "
                f"{confirm!r}, {agree_iou!r} and {min_inside!r}"
            )
        self.confirm, self.agree_iou, self.min_inside = confirm, agree_iou, min_inside
        self.forget()

    @property
    def outline(self) -> TrayOutline | None:
        """The remembered tray, or None while none is confirmed."""
        return None if self._remembered is None else TrayOutline(self._remembered, source="auto")

    def forget(self) -> None:
        """Drop the remembered tray and any outline being confirmed (a new camera, or a moved one)."""
        self._remembered: npt.NDArray[np.float32] | None = None
        self._watch: CameraMotion | None = None
        self._candidate: npt.NDArray[np.float32] | None = None
        self._sightings = 0

    def apply(self, frame: npt.NDArray[np.uint8], reading: Reading) -> Reading:
        """Learn from a read with a found outline; give a read with none, or a doubted one, the remembered tray's calls.

        A read whose outline differs from the remembered one (glare or a hand joined floor and
        table) also gets the remembered tray's off-tray calls: a frame's outline only adds calls.
        """
        state = TrayState(reading.tray_state)
        if state is TrayState.FOUND and reading.tray is not None:
            found = np.asarray(reading.tray, np.float32)
            remembered = self._remembered
            self._learn(frame, found)
            if remembered is None or polygon_iou(found, remembered) >= self.agree_iou:
                return reading
            if self._watch is not None and self._watch.moved(frame):
                return reading
            # An outline unlike the stream's tray (glare or a hand swelled it): a die off the remembered tray is off.
            recalled = self._recall(frame, reading, TrayOutline(remembered, source="auto"))
            status = np.where(reading.status == DieStatus.OFF_TRAY.value, reading.status, recalled.status)
            return replace(reading, status=status)
        if state not in (TrayState.NONE, TrayState.UNSURE) or self._remembered is None:
            return reading
        if self._watch is not None and self._watch.moved(frame):
            self.forget()  # the camera moved since the tray was remembered: its outline is elsewhere now
            return reading
        return self._recall(frame, reading, TrayOutline(self._remembered, source="auto"))

    def _learn(self, frame: npt.NDArray[np.uint8], polygon: npt.NDArray[np.float32]) -> None:
        if self._candidate is not None and polygon_iou(polygon, self._candidate) >= self.agree_iou:
            self._sightings += 1
        else:
            self._sightings = 1
        self._candidate = polygon
        if self._sightings >= self.confirm:
            if self._remembered is None or polygon_iou(polygon, self._remembered) < self.agree_iou:
                self._watch = CameraMotion(keep_first=True)
                self._watch.moved(frame)  # the picture the tray was confirmed in: a moved camera differs from it
            self._remembered = polygon

    def _recall(self, frame: npt.NDArray[np.uint8], reading: Reading, outline: TrayOutline) -> Reading:
        inside = footprint_inside(reading.xyxy, outline)
        state, off = off_tray_calls(frame, outline, reading.xyxy, inside, self.min_inside, confirmed=True)
        status = reading.status.copy()
        status[off] = DieStatus.OFF_TRAY.value
        data = {**reading.data, "in_tray": inside}
        return replace(reading, status=status, tray=outline.polygon, tray_state=state.value, data=data)
