"""Which dice a tray outline may send back to be thrown: :func:`off_tray_calls`.

A wrong outline sends good dice back, while a missed off-tray die only asks a player to
look; so an outline found by colour is ``"unsure"``, calling nothing off, where most dice
would be off it (unless earlier frames confirmed it) or the floor's colour goes on past it
around such a die, and calls no die off that reaches half its side into the floor (it rests
against a wall). A marked outline is the player's word.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.reading import TrayState
from farklecam.vision.tray.detect import FLOOR_TOLERANCE, lab_distance, work_lab
from farklecam.vision.tray.outline import TrayOutline

__all__ = ["REACH_ON_TRAY", "floor_goes_on", "off_tray_calls", "reach_into", "tray_state"]

#: How far a die's box may reach into a found floor, as a fraction of its side, and still be called off the tray.
REACH_ON_TRAY = 0.5

#: Pixels at the working width (160 across) of ground outside the outline around a die, below which it proves nothing.
_MIN_GROUND_PX = 4


def tray_state(
    frame: npt.NDArray[np.uint8],
    outline: TrayOutline | None,
    xyxy: npt.ArrayLike,
    off: npt.NDArray[np.bool_],
    *,
    confirmed: bool = False,
) -> TrayState:
    """The outline's :class:`TrayState`, given the dice it would call ``off``; a ``confirmed`` one holds few dice."""
    if outline is None:
        return TrayState.NONE
    if outline.has_true_corners:
        return TrayState.MARKED
    off = np.asarray(off, bool).reshape(-1)
    if not off.any():
        return TrayState.FOUND
    if _most(off) and not confirmed:
        return TrayState.UNSURE
    return TrayState.UNSURE if floor_goes_on(frame, outline, xyxy, off).any() else TrayState.FOUND


def _most(off: npt.NDArray[np.bool_]) -> bool:
    """Whether most dice would be off: more than half of them."""
    return 2 * int(np.count_nonzero(off)) > len(off)


def floor_goes_on(
    frame: npt.NDArray[np.uint8], outline: TrayOutline, xyxy: npt.ArrayLike, which: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    """For each die in ``which`` (n,): whether the ground around it, outside the outline, has the floor's colour.

    Medians of the working-width Lab picture are compared (a textured floor's pixels lie far
    from its colour): the outline's inside less every die, against each die's box grown by
    half less the dice and the inside, within :data:`~farklecam.vision.tray.detect.FLOOR_TOLERANCE`.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    which = np.asarray(which, bool).reshape(-1)
    out = np.zeros(len(boxes), bool)
    work = work_lab(frame)
    if work is None or not which.any():
        return out
    lab, scale = work
    h, w = lab.shape[:2]
    inside = np.zeros((h, w), np.uint8)
    cv2.fillPoly(inside, [np.round(outline.polygon * scale).astype(np.int32)], 1)
    dice = np.zeros((h, w), bool)
    small = boxes * scale
    for x1, y1, x2, y2 in small:
        dice[int(max(0, y1)) : int(np.ceil(y2)), int(max(0, x1)) : int(np.ceil(x2))] = True
    floor = (inside > 0) & ~dice
    if floor.sum() < _MIN_GROUND_PX:
        return out
    colour = np.median(lab[floor], axis=0)
    outside = (inside == 0) & ~dice
    for i in np.flatnonzero(which):
        x1, y1, x2, y2 = small[i]
        bw, bh = x2 - x1, y2 - y1
        ground = np.zeros((h, w), bool)
        ground[
            int(max(0, y1 - 0.5 * bh)) : int(min(h, np.ceil(y2 + 0.5 * bh))),
            int(max(0, x1 - 0.5 * bw)) : int(min(w, np.ceil(x2 + 0.5 * bw))),
        ] = True
        ground &= outside
        if ground.sum() >= _MIN_GROUND_PX:
            out[i] = float(lab_distance(np.median(lab[ground], axis=0) - colour)) < FLOOR_TOLERANCE
    return out


def reach_into(xyxy: npt.ArrayLike, outline: TrayOutline) -> npt.NDArray[np.float32]:
    """How far each box reaches into the outline (signed, over a 5 x 5 grid), as a fraction of its longer side."""
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    contour = outline.polygon.reshape(-1, 1, 2)
    t = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    out = np.empty(len(boxes), np.float32)
    for i, (x1, y1, x2, y2) in enumerate(boxes):
        depth = max(
            cv2.pointPolygonTest(contour, (float(x), float(y)), True)
            for x in x1 + t * (x2 - x1)
            for y in y1 + t * (y2 - y1)
        )
        out[i] = depth / max(float(x2 - x1), float(y2 - y1), 1.0)
    return out


def off_tray_calls(
    frame: npt.NDArray[np.uint8],
    outline: TrayOutline | None,
    xyxy: npt.ArrayLike,
    inside: npt.NDArray[np.float32],
    min_inside: float,
    *,
    confirmed: bool = False,
) -> tuple[TrayState, npt.NDArray[np.bool_]]:
    """The outline's :class:`TrayState` and the dice (n,) it calls off: under ``min_inside`` of the footprint inside."""
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    off = np.asarray(inside, np.float32).reshape(-1) < min_inside
    if outline is not None and not outline.has_true_corners and off.any():
        if _most(off) and not confirmed:  # judged on every footprint outside: whether the outline holds the throw
            return TrayState.UNSURE, np.zeros(len(boxes), bool)
        off &= reach_into(boxes, outline) < REACH_ON_TRAY
    state = tray_state(frame, outline, boxes, off, confirmed=confirmed)
    if state in (TrayState.NONE, TrayState.UNSURE):
        return state, np.zeros(len(boxes), bool)
    return state, off
