"""Whether a tray outline may send dice back to be thrown: :func:`tray_state`.

An outline found in the picture (:func:`vision.tray_detect.detect_tray`) is a guess
at the floor from its colour. Where it is wrong, calling dice off it sends good dice
back to be thrown (a big wooden tray found on the wrong rectangle flagged 15 of 20
dice; two dice on a table with no tray were flagged), while missing an off-tray die
only asks a player to look. So an outline found in the picture calls a die off only
where the picture backs it, and says ``"unsure"`` (and calls nothing off) where the
picture speaks against it:

* most dice would be off it: a throw lands mostly in the tray, so the outline is
  more likely wrong than most dice thrown out (it holds fewer than half of them);
* the floor goes on past the outline where a die would be off: the ground around
  that die, outside the outline, has the floor's own colour, so the die lies on the
  floor (or the "floor" is a table) and the outline stops short of it.

A marked outline (clicked corners, ArUco markers, a generated scene's labels) is the
player's word and is not second-guessed here.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from vision.reading import TrayState
from vision.tray import TrayOutline
from vision.tray_detect import floor_limit, lab_distance, work_lab

__all__ = ["floor_goes_on", "tray_state"]

#: Pixels at the working width (160 across) of ground outside the outline around a die, below which it proves nothing.
_MIN_GROUND_PX = 4


def tray_state(
    frame: npt.NDArray[np.uint8], outline: TrayOutline | None, xyxy: npt.ArrayLike, off: npt.NDArray[np.bool_]
) -> TrayState:
    """The outline's :class:`TrayState`, given the dice it would call off the tray.

    Args:
        frame: BGR frame the outline was found in.
        outline: the tray, or None.
        xyxy: the dice's boxes, shape (n, 4), frame pixels.
        off: which dice the outline would call off the tray, shape (n,).

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
    if 2 * int(off.sum()) > len(off):
        return TrayState.UNSURE
    return TrayState.UNSURE if floor_goes_on(frame, outline, xyxy, off).any() else TrayState.FOUND


def floor_goes_on(
    frame: npt.NDArray[np.uint8], outline: TrayOutline, xyxy: npt.ArrayLike, which: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    """For each die in ``which``: whether the ground around it, outside the outline, has the floor's colour.

    The floor's colour is the median, in Lab at the tray search's working width, of the
    outline's inside less every die; a pixel is floor within :func:`vision.tray_detect.floor_limit`
    of it, as when the tray was found. A die's ground is its box grown by half on each side,
    less every die and the outline's inside; the median of its distances decides. A die with
    too little such ground (under :data:`_MIN_GROUND_PX` pixels) reads False.

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
    dist = lab_distance(lab - colour)
    limit = floor_limit(dist[floor])
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
            out[i] = float(np.median(dist[ground])) < limit
    return out
