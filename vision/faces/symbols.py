"""Faces that carry a symbol instead of pips: :func:`symbol_faces`, so they read ``uncertain``, never a number.

Some dice print one face as a symbol (a maker's logo on the 6, a skull on the 1). The
face classifier has no class for them and reads the nearest pip pattern, often with
confidence (a ring logo as a 1 at 0.97). The check here is model-free: a face on which
the pip counter (:func:`farklecam.vision.faces.pips.count_pips`) finds no pip at all, but which carries a
mark of several pips' size that is not solid (a ring, a letter, a star), is no pip face.

It catches a third of them, not all. Symbols painted over the 1s and 6s of real photos
(``byler_d6``, a logo, a skull and a star each; the painting script is in the session
report of issue 30), scored as a number without the check and with it: photos 1-25,
which chose the thresholds, 81 and 55 of 360; photos 26-50, 71 and 49 of 229. Skulls
(a solid head with holes) are not caught. On the real photos' dice (``byler_d6`` and
``matteop65_webcam``, 2442) it flagged 1.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.crops import extract_crops
from farklecam.vision.faces.pips import PIP_CROP_SIZE, count_pips, distance_map  # marks as the pip counter sees them

__all__ = ["MARK_LEVEL", "MIN_SIDE_PX", "MIN_SYMBOL_AREA", "largest_odd_mark", "symbol_faces"]

#: Level of the colour distance map (0-255, :func:`farklecam.vision.faces.pips.distance_map`) above which a pixel is a
# mark.
MARK_LEVEL = 110
#: Smallest symbol mark, as a fraction of the crop's area (a pip is about 0.01-0.02).
MIN_SYMBOL_AREA = 0.05
#: A mark at least this solid (area over its hull's) may be pips: one, or a row of them run together in a
#: small or blurred die (a drawn 6 under 30 px); a ring, a letter, a star or a skull's eyes are hollow or jagged.
_PIP_SOLIDITY = 0.85
#: Dice smaller than this (the box's shorter side, pixels) are not judged: their pips run into shapes.
MIN_SIDE_PX = 24


def largest_odd_mark(crop: npt.NDArray[np.uint8], min_area: float = MIN_SYMBOL_AREA) -> float:
    """The area, as a fraction of the crop, of the largest mark on the face that is not solid (no pip, nor pips).

    Marks are the connected parts of the colour distance map above :data:`MARK_LEVEL`
    whose centre lies within a third of the crop's side from its centre (the top face)
    and that do not touch the crop's border (a neighbour, the table). Marks under
    ``min_area`` are not looked at (0.0 where none is larger): their shapes cost time.
    """
    size = crop.shape[0]
    mask = (distance_map(crop) >= MARK_LEVEL).astype(np.uint8)
    count, labels, stats, centres = cv2.connectedComponentsWithStats(mask, connectivity=8)
    middle = (size - 1) / 2.0
    largest = 0.0
    for k in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[k])
        if x == 0 or y == 0 or x + w >= size or y + h >= size:
            continue
        if area / size**2 < max(min_area, largest) or np.hypot(*(centres[k] - middle)) >= size / 3.0:
            continue
        contours, _ = cv2.findContours((labels == k).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        contour = max(contours, key=cv2.contourArea)
        if area / max(float(cv2.contourArea(cv2.convexHull(contour))), 1.0) < _PIP_SOLIDITY:
            largest = area / size**2
    return largest


def symbol_faces(frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Which dice show a symbol face: no pip found, and a mark of :data:`MIN_SYMBOL_AREA` or more that is no pip.

    Dice under :data:`MIN_SIDE_PX` are not judged (False).

    Returns:
        Shape (n,) booleans.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    out = np.zeros(len(boxes), bool)
    judged = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) >= MIN_SIDE_PX
    for i, crop in zip(np.flatnonzero(judged), extract_crops(frame, boxes[judged], PIP_CROP_SIZE), strict=True):
        out[i] = largest_odd_mark(crop) >= MIN_SYMBOL_AREA and count_pips(crop).count == 0  # the cheap look first
    return out
