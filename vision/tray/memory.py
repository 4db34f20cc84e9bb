"""One camera's tray, remembered over its stream: :class:`TrayMemory`.

The tray finder (:func:`farklecam.vision.tray.detect.detect_tray`) seeds the floor's colour from
the dice: each die votes with the colour around it. When every die of a frame lies off
the tray (a lone die thrown out), no die votes for the floor, so no outline is found; and
an outline that most of a frame's dice are off is doubted on principle
(:mod:`farklecam.vision.tray.trust`). Either way nothing is called off the tray, in exactly the
throws where a die is. A hand over the tray does the same. A frame alone cannot do better.

A table's tray does not move, though, and a stream has shown it before: on the empty tray
between throws, and under the dice of earlier throws. So a stream keeps the outline that
was found, and not doubted, in ``confirm`` reads agreeing with each other; where a later
read has no outline or a doubted one, the remembered outline makes that read's off-tray
calls. It is not doubted for holding few of that frame's dice (earlier frames backed it),
but it still calls no die off where the ground around it has the floor's colour or where
the die reaches half its side into the floor (:func:`farklecam.vision.tray.trust.off_tray_calls`).
It is forgotten when the camera moves (:class:`farklecam.vision.camera.motion.CameraMotion`,
checked only when it is about to be used) and replaced when another outline is confirmed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.motion import CameraMotion
from farklecam.vision.reading import DieStatus, Reading, TrayState
from farklecam.vision.tray.outline import TrayOutline, footprint_inside
from farklecam.vision.tray.trust import off_tray_calls

__all__ = ["TrayMemory", "polygon_iou"]


def _signed_area(poly: npt.NDArray[np.float64]) -> float:
    """Area of a simple polygon (shoelace): positive when its vertices run counter-clockwise in x-right, y-up."""
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def _clip(subject: npt.NDArray[np.float64], clip: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The part of ``subject`` inside the convex polygon ``clip`` (Sutherland-Hodgman).

    Written out because OpenCV's ``intersectConvexConvex`` returns nonsense areas for
    polygons that share an edge (an outline remembered and found again often does).
    """
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

    Args:
        confirm: reads whose found, undoubted outlines agree before the outline is remembered.
        agree_iou: polygon IoU above which two found outlines are the same tray.
        min_inside: a die with less of its footprint inside the remembered outline is off it
            (the reader's ``ReaderConfig.off_tray_min_inside``).
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
        """Learn from a read with a found outline; give a read without one the remembered tray's calls.

        Args:
            frame: the BGR frame that was read.
            reading: its reading.

        Returns:
            ``reading`` itself, or, where it has no outline or a doubted one and a tray is
            remembered, a copy whose ``tray``, ``tray_state``, ``data["in_tray"]`` and off-tray
            statuses are the remembered tray's; where it found an outline unlike the remembered
            one (glare or a hand joined the floor to the table) and the camera has not moved, a
            copy with the dice off the remembered tray called off too (a frame's outline only
            ever adds off-tray calls).
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
