"""A classical pip counter: a second opinion on the face classifier, with no model at all.

Pips are small round marks whose colour differs from the die's face, whatever
the colours (black on ivory, white on blue, yellow on green). So instead of
guessing a polarity, each crop is turned into a *colour distance map* (how far
each pixel is, in Lab, from the face colour found at the crop's centre): pips
become bright round blobs on a dark face in every case, and one blob detector
counts them. A count is trusted only when the blobs look like pips: similar
sizes, spread around the centre, one to six of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.crops import extract_crops

__all__ = ["PIP_CROP_SIZE", "PipCount", "count_pips", "count_pips_in_boxes", "distance_map", "pip_posterior"]

#: Side of the crops the pip counter works on (larger than the classifier's: pips are small).
PIP_CROP_SIZE = 64


@dataclass(frozen=True, slots=True)
class PipCount:
    """Pips found on one die.

    Attributes:
        count: number of pips on the top face, 0 if none were found.
        confidence: 0..1, how much the blobs look like a die's pips.
        centres: (k, 2) blob centres in crop pixels, for debugging overlays.
    """

    count: int
    confidence: float
    centres: npt.NDArray[np.float32]


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
    """Count the pips on the top face of one die.

    Args:
        crop: square BGR crop centred on the die, as cut by :func:`farklecam.vision.crops.extract_crops`.

    Returns:
        The count and how far it can be trusted.
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


def pip_posterior(
    face_probs: npt.ArrayLike,
    cocked_prob: npt.ArrayLike,
    counts: npt.ArrayLike,
    confidence: npt.ArrayLike,
    reliability: float = 0.6,
) -> npt.NDArray[np.float32]:
    """Combine the classifier's probabilities with the pip counts (Bayes' rule).

    The count is treated as an independent, noisy observation of the face: a count
    of confidence c names the true face with probability ``1/6 + (reliability - 1/6) * c``
    and any other face with the rest, shared equally; it says nothing about a cocked
    die. So agreement raises the classifier's confidence, disagreement lowers it, and
    a confident count decides between faces the classifier hesitates over.

    Args:
        face_probs: classifier probabilities of faces 1-6, shape (n, 6).
        cocked_prob: classifier probability of "cocked", shape (n,).
        counts: pip counts, shape (n,); outside 1-6 means no opinion.
        confidence: pip-count confidences in 0..1, shape (n,).
        reliability: probability that a fully confident count is right.

    Returns:
        Posterior probabilities of faces 1-6 then cocked, shape (n, 7).
    """
    prior = np.concatenate(
        [np.asarray(face_probs, np.float64).reshape(-1, 6), np.asarray(cocked_prob, np.float64).reshape(-1, 1)], axis=1
    )
    counts_arr = np.asarray(counts, np.int64).reshape(-1)
    conf = np.clip(np.asarray(confidence, np.float64).reshape(-1), 0.0, 1.0)
    hit = 1.0 / 6.0 + (reliability - 1.0 / 6.0) * conf  # (n,)
    likelihood = np.repeat(((1.0 - hit) / 5.0)[:, None], 7, axis=1)
    valid = (counts_arr >= 1) & (counts_arr <= 6)
    rows = np.flatnonzero(valid)
    likelihood[rows, counts_arr[rows] - 1] = hit[rows]
    likelihood[:, 6] = 1.0 / 6.0
    likelihood[~valid] = 1.0
    post = prior * likelihood
    post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-12)
    return post.astype(np.float32)


def count_pips_in_boxes(
    frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike, size: int = PIP_CROP_SIZE
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Count pips for every box of a frame.

    Returns:
        ``counts`` (n,) and ``confidence`` (n,).
    """
    crops = extract_crops(frame, xyxy, size)
    results = [count_pips(c) for c in crops]
    counts = np.array([r.count for r in results], np.int64)
    conf = np.array([r.confidence for r in results], np.float32)
    return counts, conf
