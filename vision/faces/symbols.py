"""The marks on a die's face, read without a model: pips counted, and symbol faces flagged.

Each crop becomes a colour distance map (Lab distance from the face colour at its centre),
on which pips of any colours are bright round blobs (:func:`count_pips`). A face with no
pip but a hollow or jagged mark of several pips' size (a maker's logo, a star) is a symbol
face the classifier would read as the nearest pip pattern (:func:`symbol_faces`); the
reader reads it ``uncertain``.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.crops import extract_crops

__all__ = [
    "MARK_LEVEL",
    "MIN_SIDE_PX",
    "MIN_SYMBOL_AREA",
    "PIP_CROP_SIZE",
    "PipCount",
    "count_pips",
    "count_pips_in_boxes",
    "distance_map",
    "largest_odd_mark",
    "symbol_faces",
]

#: Side of the crops the pip counter works on (larger than the classifier's: pips are small).
PIP_CROP_SIZE = 64
#: Level of the colour distance map (0-255, :func:`distance_map`) above which a pixel is a mark.
MARK_LEVEL = 110
#: Smallest symbol mark, as a fraction of the crop's area (a pip is about 0.01-0.02).
MIN_SYMBOL_AREA = 0.05
#: A mark at least this solid (area over its hull's) may be pips: one, or a row of them run together in a
#: small or blurred die; a ring, a letter, a star or a skull's eyes are hollow or jagged.
_PIP_SOLIDITY = 0.85
#: Dice smaller than this (the box's shorter side, pixels) are not judged: their pips run into shapes.
MIN_SIDE_PX = 24


@dataclass(frozen=True, slots=True)
class PipCount:
    """Pips found on one die."""

    count: int  #: number of pips on the top face, 0 if none were found
    confidence: float  #: 0..1, how much the blobs look like a die's pips
    centres: npt.NDArray[np.float32]  #: (k, 2) blob centres in crop pixels


def _detector(size: int) -> cv2.SimpleBlobDetector:
    params = cv2.SimpleBlobDetector.Params()
    params.minThreshold, params.maxThreshold, params.thresholdStep = 20, 200, 15
    params.minRepeatability = 2
    params.filterByColor, params.blobColor = True, 255
    params.filterByArea = True
    params.minArea = float(np.pi * (0.025 * size) ** 2)
    params.maxArea = float(np.pi * (0.17 * size) ** 2)
    params.filterByCircularity, params.minCircularity = True, 0.55
    params.filterByInertia, params.minInertiaRatio = True, 0.35
    params.filterByConvexity, params.minConvexity = True, 0.75
    params.minDistBetweenBlobs = 0.05 * size
    return cv2.SimpleBlobDetector.create(params)


_DETECTORS: dict[int, cv2.SimpleBlobDetector] = {}


def distance_map(crop: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Per-pixel Lab distance from the face colour (median of the crop's centre), 0..255."""
    size = crop.shape[0]
    lab = cv2.cvtColor(cv2.GaussianBlur(crop, (3, 3), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    c, r = size // 2, max(2, int(0.2 * size))
    face = np.median(lab[c - r : c + r, c - r : c + r].reshape(-1, 3), axis=0)
    diff = lab - face
    dist = np.sqrt(diff[..., 0] ** 2 + 1.5 * (diff[..., 1] ** 2 + diff[..., 2] ** 2))
    peak = float(np.percentile(dist[c - r : c + r, c - r : c + r], 98))
    scale = 255.0 / max(peak, 25.0)  # stretch so that a pip's contrast fills the range
    return np.clip(dist * scale, 0, 255).astype(np.uint8)


def count_pips(crop: npt.NDArray[np.uint8]) -> PipCount:
    """Count the pips on a square BGR crop centred on one die.

    The confidence is how far the blobs look like a face's pips: one to six, of one size,
    spread symmetrically about the centre.
    """
    size = crop.shape[0]
    detector = _DETECTORS.get(size)
    if detector is None:
        detector = _DETECTORS[size] = _detector(size)
    dist = distance_map(crop)
    keypoints = detector.detect(dist)
    centre = size / 2.0
    pts = np.array([kp.pt for kp in keypoints], np.float32).reshape(-1, 2)
    radii = np.array([kp.size / 2.0 for kp in keypoints], np.float32)
    inside = np.hypot(pts[:, 0] - centre, pts[:, 1] - centre) < 0.33 * size
    pts, radii = pts[inside], radii[inside]
    if len(radii) == 0:
        return PipCount(0, 0.0, pts)
    # Pips of one face share a size; drop blobs far from the typical one (dirt, glare, side pips).
    median = float(np.median(radii))
    same = (radii > 0.7 * median) & (radii < 1.45 * median)
    pts, radii = pts[same], radii[same]
    n = len(radii)
    if not 1 <= n <= 6:
        return PipCount(n, 0.0, pts)
    confidence = 1.0
    if n > 1:
        spread = float(radii.std() / radii.mean())
        confidence -= min(0.5, max(0.0, spread - 0.12) * 2.0)
        # The pips of every face are symmetric about its centre.
        offset = float(np.hypot(*(pts.mean(axis=0) - centre))) / size
        confidence -= min(0.5, max(0.0, offset - 0.06) * 4.0)
        # The largest gap between neighbouring pips is about one pip-grid step, a quarter of a face.
        gaps = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
        np.fill_diagonal(gaps, np.inf)
        nearest = gaps.min(axis=1) / size
        if nearest.max() > 2.2 * max(float(nearest.min()), 1e-3):
            confidence -= 0.3
    elif float(np.hypot(*(pts[0] - centre))) > 0.12 * size:  # a lone pip sits in the middle
        confidence -= 0.5
    return PipCount(n, max(0.0, confidence), pts)


def count_pips_in_boxes(
    frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike, size: int = PIP_CROP_SIZE
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Pip counts (n,) and their confidences (n,) for every box of a frame."""
    crops = extract_crops(frame, xyxy, size)
    results = [count_pips(c) for c in crops]
    counts = np.array([r.count for r in results], np.int64)
    conf = np.array([r.confidence for r in results], np.float32)
    return counts, conf


def largest_odd_mark(crop: npt.NDArray[np.uint8], min_area: float = MIN_SYMBOL_AREA) -> float:
    """The area, as a fraction of the crop, of the largest mark on the top face that is not solid (no pip, nor pips).

    Marks are the connected parts of the distance map above :data:`MARK_LEVEL` near the
    crop's centre and clear of its border; marks under ``min_area`` are not looked at.
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
    """Which dice (n,) show a symbol face: no pip found, and a mark of :data:`MIN_SYMBOL_AREA` or more that is no pip.

    Dice under :data:`MIN_SIDE_PX` are not judged.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    out = np.zeros(len(boxes), bool)
    judged = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) >= MIN_SIDE_PX
    for i, crop in zip(np.flatnonzero(judged), extract_crops(frame, boxes[judged], PIP_CROP_SIZE), strict=True):
        out[i] = largest_odd_mark(crop) >= MIN_SYMBOL_AREA and count_pips(crop).count == 0  # the cheap look first
    return out
