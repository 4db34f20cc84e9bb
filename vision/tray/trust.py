"""Which dice a tray outline may send back to be thrown: :func:`off_tray_calls`.

An outline found in the picture (:func:`farklecam.vision.tray.detect.detect_tray`) is a guess
at the floor from its colour. Where it is wrong, calling dice off it sends good dice
back to be thrown (a big wooden tray found on the wrong rectangle flagged 15 of 20
dice; two dice on a table with no tray were flagged), while missing an off-tray die
only asks a player to look. So an outline found in the picture calls a die off only
where the picture backs it. It is ``"unsure"``, and calls nothing off, where the
picture speaks against the outline itself:

* most dice would be off it: a throw lands mostly in the tray, so the outline is
  more likely wrong than most dice thrown out (it holds fewer than half of them),
  unless earlier frames of the stream confirmed it (:mod:`farklecam.vision.tray.memory`);
* the floor goes on past it where a die would be off: the ground around that die,
  outside the outline, has the floor's own colour, so the die lies on the floor (or
  the "floor" is a table) and the outline stops short of it.

And it does not call off a die whose box reaches half its side or more into the floor:
an outline found by colour is the floor without the tray's walls, so such a die rests
on the floor's edge or against a wall (on the real photos, the dice on a tray's sloped
walls), not off the tray. A marked outline (clicked corners, ArUco markers, a generated
scene's labels) is the player's word and is not second-guessed here.
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
#: On the generated held-out scenes (``python -m farklecam.models.evaluate --no-tray data/eval/synthetic*``) the dice
#: rightly called off reached at most 0.46 of their side in, the wrong calls 0.57-0.72; on the real photos
#: (no die off a tray) the calls on a tray's sloped walls 0.19-0.65.
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
    """The outline's :class:`TrayState`, given the dice it would call off the tray.

    Args:
        frame: BGR frame the outline was found in.
        outline: the tray, or None.
        xyxy: the dice's boxes, shape (n, 4), frame pixels.
        off: which dice the outline would call off the tray, shape (n,).
        confirmed: the outline was found, undoubted, in earlier frames of the stream
            (:class:`farklecam.vision.tray.memory.TrayMemory`): it is not doubted for holding few of this frame's dice.

    Returns:
        ``NONE`` without an outline, ``MARKED`` for one given, else ``UNSURE`` where the
        picture speaks against it (see the module docstring) and ``FOUND`` where not.
    """
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
    """For each die in ``which``: whether the ground around it, outside the outline, has the floor's colour.

    The floor's colour is the median, in Lab at the tray search's working width, of the
    outline's inside less every die. A die's ground is its box grown by half on each side,
    less every die and the outline's inside; it is floor where its median colour lies within
    :data:`farklecam.vision.tray.detect.FLOOR_TOLERANCE` of the floor's. Medians, not pixels: a textured
    floor's pixels lie far from its colour, its medians do not (compared pixel by pixel, a die
    rightly off a noisy generated floor read as lying on it). A die with too little such
    ground (under :data:`_MIN_GROUND_PX` pixels) reads False.

    Returns:
        Shape (n,) booleans; False for dice not in ``which``.
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
    """How far each box reaches into the outline, as a fraction of its longer side (negative: clear of it by that).

    The largest signed distance to the outline's edge of a 5 x 5 grid over the box.
    """
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
    """The outline's :class:`TrayState` and the dice it calls off the tray.

    Args:
        frame: BGR frame the outline was found in.
        outline: the tray, or None.
        xyxy: the dice's boxes, shape (n, 4), frame pixels.
        inside: each die's footprint inside the outline (:func:`farklecam.vision.tray.outline.footprint_inside`),
        shape (n,).
        min_inside: a die with less of its footprint inside is off the tray, where the outline may say so.
        confirmed: see :func:`tray_state`.

    Returns:
        The state, and shape (n,) booleans: none for no outline or an unsure one; for a
        found one, not the dice reaching :data:`REACH_ON_TRAY` of their side into the floor.
    """
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
