"""Banks of die crops for the crop networks (the face classifier and the cocked test).

Crops are cut exactly as at run time, by :func:`farklecam.vision.crops.extract_crops`
on the full-resolution frame, around boxes jittered like a detector's (shifted,
scaled, stretched), so a network is used to imperfect boxes. To turn a crop by
any angle without black corners, each die is banked once at 1.5x the field of
view (:data:`BANK_SIZE` pixels, the run-time crop's pixel scale) and turned at
training time (:func:`turned_centres`), keeping the centre
:data:`~farklecam.vision.crops.CROP_SIZE` pixels; an unturned sample takes that centre
directly, which equals the run-time crop.

Besides the dice, the bank holds "not_die" crops: the detector's own false
alarms on the *training* frames (mined at a low score threshold, so the near
misses count too) and die-sized patches of table and tray clear of every die.
numpy and OpenCV only: the cocked test's calibration imports this without torch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.datasets.training_sets import Frame
from farklecam.datasets.yolo import CLASS_NAMES, COCKED_CLASS
from farklecam.models.training.classifier_config import ClassifierConfig
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE, centre_distances, extract_crops, turn_and_squeeze
from farklecam.vision.faces.classifier import NOT_DIE_NAME
from farklecam.vision.settle.detector import paired_iou

__all__ = [
    "BANK_CONTEXT",
    "BANK_SIZE",
    "CLASSIFIER_NAMES",
    "MINING_CONF",
    "NOT_DIE_CLASS",
    "UNLABELLED_DIE_CONF",
    "CropBank",
    "bank_context",
    "bank_size",
    "build_bank",
    "centre_crops",
    "detect_boxes",
    "false_alarms",
    "jitter_boxes",
    "match_detections",
    "misplaced_boxes",
    "negative_boxes",
    "prune_unlabelled_dice",
    "turned_centres",
]

#: The face classifier's classes: faces "1".."6", "cocked", then "not_die".
CLASSIFIER_NAMES = (*CLASS_NAMES, NOT_DIE_NAME)
#: Class id of a crop that shows no die.
NOT_DIE_CLASS = len(CLASS_NAMES)
_NO_BOXES = np.zeros((0, 4), np.float32)
#: Detector score threshold for mining: lower than at run time, so near misses are learned too.
MINING_CONF = 0.2
#: Confidence above which an earlier classifier's read of a "false alarm" means an unlabelled die.
UNLABELLED_DIE_CONF = 0.9


def bank_size(crop_size: int = CROP_SIZE) -> int:
    """Side of the banked crops for run-time crops of ``crop_size``: 1.5x the field of view, same pixel scale."""
    return crop_size * 3 // 2


def bank_context(context: float = CROP_CONTEXT) -> float:
    """Context that makes a :func:`bank_size` crop cover 1.5x the field of view of a run-time crop with ``context``."""
    return (1.5 * (1 + 2 * context) - 1) / 2


#: Side of the banked crops of the run-time crop size.
BANK_SIZE = bank_size()
#: Context that makes a BANK_SIZE crop cover 1.5x the run-time crop's field of view.
BANK_CONTEXT = bank_context()


@dataclass
class CropBank:
    """Banked crops, BANK_SIZE square BGR uint8, with their class ids and sources.

    Attributes:
        crops: shape (n, BANK_SIZE, BANK_SIZE, 3), uint8 BGR.
        labels: class id per crop (``face - 1``, 6 for cocked, 7 for not a die), shape (n,).
        sources: source name per crop.
    """

    crops: npt.NDArray[np.uint8]
    labels: npt.NDArray[np.int64]
    sources: list[str]

    def counts(self) -> dict[str, dict[str, int]]:
        """``{source: {class name: crops}}``, for the data-mix record."""
        out: dict[str, Counter[str]] = {}
        for source, label in zip(self.sources, self.labels, strict=True):
            out.setdefault(source, Counter())[CLASSIFIER_NAMES[int(label)]] += 1
        return {s: dict(sorted(c.items())) for s, c in sorted(out.items())}


def jitter_boxes(
    xyxy: npt.NDArray[np.float32], rng: np.random.Generator, shift: float, scale: float
) -> npt.NDArray[np.float32]:
    """Boxes moved and resized the way a detector errs: centre shift, size and aspect changes."""
    w = xyxy[:, 2] - xyxy[:, 0]
    h = xyxy[:, 3] - xyxy[:, 1]
    side = np.maximum(w, h)
    cx = (xyxy[:, 0] + xyxy[:, 2]) / 2 + rng.normal(0, shift, len(xyxy)) * side
    cy = (xyxy[:, 1] + xyxy[:, 3]) / 2 + rng.normal(0, shift, len(xyxy)) * side
    w = w * np.exp(rng.normal(0, scale, len(xyxy)))
    h = h * np.exp(rng.normal(0, scale, len(xyxy)))
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1).astype(np.float32)


#: IoU with the labelled box that a misplaced box keeps (the run-time detector's worst boxes on dice beside another).
MISPLACED_IOU = (0.5, 0.8)


def misplaced_boxes(
    xyxy: npt.NDArray[np.float32],
    neighbours: npt.NDArray[np.float32],
    rng: np.random.Generator,
    iou: tuple[float, float] = MISPLACED_IOU,
    tries: int = 32,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Boxes placed as badly as the detector places them on a die beside another, and which were made.

    The shipped int8 detector's boxes on flat dice of the generated *training* frames
    that it places at IoU under 0.8 with the label (262 of 1840 matched dice, 250 frames of
    ``synth`` and of ``synth_v2``) are mostly too big, not off centre: each side a median
    13 % longer (log ratio 0.12, middle half 0.01-0.19), the centre moved a median 0.01
    side towards the nearest other die (middle half -0.02 to 0.04) and as little across.
    Such a box is drawn here from those spreads (log size N(0.12, 0.12) per axis, shift
    N(0.02, 0.07) side towards the nearest of ``neighbours`` and N(0, 0.05) across) and
    redrawn until its IoU with the labelled box lies in ``iou``; a box with no such draw in
    ``tries`` is left out (False in the mask; it takes a tiny ``iou`` range).

    Args:
        xyxy: labelled boxes (n, 4).
        neighbours: every labelled box of the frame (m, 4), ``xyxy``'s own among them; a box
            with no other die in the frame is shifted in a random direction.
        rng: the draws' generator.
        iou: the range of IoU with the labelled box a misplaced box must keep.
        tries: draws per box.
    """
    xyxy = np.asarray(xyxy, np.float32).reshape(-1, 4)
    n = len(xyxy)
    centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    size = xyxy[:, 2:] - xyxy[:, :2]
    side = size.max(axis=1)
    others = (neighbours[:, :2] + neighbours[:, 2:]) / 2
    towards = others[None, :, :] - centres[:, None, :]
    dist = np.linalg.norm(towards, axis=2)
    dist[dist < 1e-3] = np.inf  # the box itself (or one on top of it)
    angle = rng.uniform(0.0, 2 * np.pi, n)
    unit = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    if dist.shape[1]:
        near = dist.argmin(axis=1)
        has = np.isfinite(dist[np.arange(n), near])
        unit[has] = towards[np.arange(n), near][has] / dist[np.arange(n), near][has, None]
    across = np.stack([-unit[:, 1], unit[:, 0]], axis=1)
    shift = rng.normal(0.02, 0.07, (tries, n, 1)) * unit + rng.normal(0.0, 0.05, (tries, n, 1)) * across
    centre = centres + shift * side[:, None]
    half = size * np.exp(rng.normal(0.12, 0.12, (tries, n, 2))) / 2
    drawn = np.concatenate([centre - half, centre + half], axis=2).astype(np.float32)
    overlap = paired_iou(drawn, xyxy[None])  # (tries, n): each draw against its own die only
    fits = (overlap >= iou[0]) & (overlap <= iou[1])
    first = fits.argmax(axis=0)
    return drawn[first, np.arange(n)].reshape(-1, 4), np.asarray(fits.any(axis=0))


def match_detections(labelled: npt.NDArray[np.float32], detected: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """For each labelled box, the detected box nearest its centre, else the labelled box itself.

    A detection counts when its centre lies within half the labelled box's
    longer side of the labelled centre (:func:`farklecam.vision.crops.centre_distances`).
    """
    out = labelled.copy()
    if len(detected) == 0 or len(labelled) == 0:
        return out
    dist, reach = centre_distances(labelled, detected)
    nearest = dist.argmin(axis=1)
    found = dist[np.arange(len(labelled)), nearest] < reach
    out[found] = detected[nearest[found]]
    return out


def _clear_of(boxes: npt.NDArray[np.float32], others: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Which ``boxes`` (n, 4) intersect none of ``others`` (m, 4)."""
    apart = (
        (boxes[:, None, 2] < others[None, :, 0])
        | (boxes[:, None, 0] > others[None, :, 2])
        | (boxes[:, None, 3] < others[None, :, 1])
        | (boxes[:, None, 1] > others[None, :, 3])
    )
    return np.asarray(apart.all(axis=1), dtype=bool)


def _typical_side(labelled: npt.NDArray[np.float32], image_size: tuple[int, int]) -> float:
    """The median labelled die side, or 8 % of the frame's short side when there is no die."""
    sides = np.maximum(labelled[:, 2] - labelled[:, 0], labelled[:, 3] - labelled[:, 1])
    return float(np.median(sides)) if len(sides) else 0.08 * min(image_size)


def false_alarms(
    labelled: npt.NDArray[np.float32], detected: npt.NDArray[np.float32], image_size: tuple[int, int]
) -> npt.NDArray[np.bool_]:
    """Which detections touch no labelled die, grown by a quarter of a typical side.

    A box half on a die, or on a die whose label box differs, is ambiguous: it is
    neither die nor false alarm.
    """
    labelled = labelled.reshape(-1, 4).astype(np.float32)
    grown = labelled + np.array([-1, -1, 1, 1], np.float32) * 0.25 * _typical_side(labelled, image_size)
    return _clear_of(detected.reshape(-1, 4).astype(np.float32), grown)


def negative_boxes(
    labelled: npt.NDArray[np.float32],
    detected: npt.NDArray[np.float32],
    image_size: tuple[int, int],
    rng: np.random.Generator,
    background: int,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Boxes that show no die: ``(false alarms, background patches)``.

    False alarms are :func:`false_alarms`. Background patches are ``background``
    squares of a typical die's side at random places that touch no labelled die
    (grown as there); fewer when the frame has no room.
    """
    detected = detected.reshape(-1, 4).astype(np.float32)
    labelled = labelled.reshape(-1, 4).astype(np.float32)
    width, height = image_size
    side = _typical_side(labelled, image_size)
    grown = labelled + np.array([-1, -1, 1, 1], np.float32) * 0.25 * side
    alarms = detected[false_alarms(labelled, detected, image_size)]
    patches = np.zeros((0, 4), np.float32)
    if side < min(width, height):
        x = rng.uniform(0, width - side, background * 20)
        y = rng.uniform(0, height - side, background * 20)
        candidates = np.stack([x, y, x + side, y + side], axis=1).astype(np.float32)
        patches = candidates[_clear_of(candidates, grown)][:background]
    return alarms, patches


def detect_boxes(
    frames: Sequence[Frame], detector_path: Path, conf: float | None = None
) -> dict[Path, npt.NDArray[np.float32]]:
    """Run the exported die detector (as ``vision`` does at run time) on every frame.

    Args:
        frames: the frames to run on.
        detector_path: the exported ``die_detector.onnx``.
        conf: score threshold (None: the model's recommendation; :data:`MINING_CONF` to mine).
    """
    from farklecam.vision.detection.detector import DieDetector

    detector = DieDetector(detector_path, conf=conf)
    out: dict[Path, npt.NDArray[np.float32]] = {}
    for frame in frames:
        image = cast("npt.NDArray[np.uint8] | None", cv2.imread(str(frame.path), cv2.IMREAD_COLOR))
        if image is not None:
            out[frame.path] = np.asarray(detector(image).xyxy, dtype=np.float32).reshape(-1, 4)
    return out


def prune_unlabelled_dice(
    frames: Sequence[Frame],
    detected: Mapping[Path, npt.NDArray[np.float32]],
    classifier_path: Path,
    min_conf: float = UNLABELLED_DIE_CONF,
) -> dict[Path, npt.NDArray[np.float32]]:
    """Drop the detector's "false alarms" that an earlier classifier reads as a die with confidence.

    The real photos leave some dice unlabelled (in a hand, at the edge, half hidden),
    and a detection of one is no false alarm: banked as "not_die" it would teach
    the classifier to veto real dice. Such boxes are dropped from ``detected``
    (neither die nor "not_die"); holes, cables and keys, which no face classifier
    reads with confidence, stay as negatives.
    """
    from farklecam.vision.faces.classifier import FaceClassifier

    classifier = FaceClassifier(classifier_path)
    out: dict[Path, npt.NDArray[np.float32]] = {}
    for frame in frames:
        boxes = detected.get(frame.path)
        if boxes is None:
            continue
        image = (
            cast("npt.NDArray[np.uint8] | None", cv2.imread(str(frame.path), cv2.IMREAD_COLOR)) if len(boxes) else None
        )
        if image is not None:
            alarms = false_alarms(frame.boxes, boxes, (image.shape[1], image.shape[0]))
            if alarms.any():
                scores = classifier(image, boxes[alarms])
                sure_die = np.zeros(len(boxes), bool)
                sure_die[alarms] = (scores.confidence >= min_conf) & ~scores.not_die
                boxes = boxes[~sure_die]
        out[frame.path] = boxes
    return out


def build_bank(
    frames: Sequence[Frame],
    config: ClassifierConfig,
    *,
    jitter: bool = True,
    detected: Mapping[Path, npt.NDArray[np.float32]] | None = None,
) -> CropBank:
    """Cut banked crops of every die in ``frames`` (the first one or two copies unjittered).

    With ``detected`` (boxes the real detector found in each frame), every
    other copy is cut around the matched detector box instead of the labelled
    one: the detector's box convention (e.g. how much of a die's side it
    includes) is then what the classifier learns, as it meets it at run time.
    The detections about no labelled die, and ``config.background_boxes``
    patches per frame, are banked as "not_die" (only when ``jitter``: an
    evaluation bank holds the labelled dice alone).

    Args:
        frames: labelled frames (training frames only, or a holdout to evaluate).
        config: jitter settings and copies per die.
        jitter: False cuts one exact crop per die (evaluation).
        detected: detector boxes per frame path, from :func:`detect_boxes`.
    """
    rng = np.random.default_rng(config.seed)
    crops: list[npt.NDArray[np.uint8]] = []
    labels: list[int] = []
    sources: list[str] = []

    def bank(
        image: npt.NDArray[np.uint8],
        boxes: npt.NDArray[np.float32],
        classes: Sequence[int] | npt.NDArray[np.int64],
        source: str,
    ) -> None:
        crops.append(extract_crops(image, boxes, size=BANK_SIZE, context=BANK_CONTEXT))
        labels.extend(int(c) for c in classes)
        sources.extend([source] * len(boxes))

    for frame in frames:
        if len(frame.boxes) == 0 and not jitter:
            continue
        image = cast("npt.NDArray[np.uint8] | None", cv2.imread(str(frame.path), cv2.IMREAD_COLOR))
        if image is None:
            continue
        base = config.synth_jitters if frame.source == "synthetic" else config.real_jitters
        copies = np.where(frame.classes == COCKED_CLASS, max(base, config.cocked_jitters), base) if jitter else None
        found = frame.boxes
        if detected is not None and frame.path in detected:
            found = match_detections(frame.boxes, detected[frame.path])
        for copy in range(int(copies.max(initial=0)) if copies is not None else 1):
            keep = copies > copy if copies is not None else np.ones(len(frame.boxes), bool)
            boxes = (found if copy % 2 else frame.boxes)[keep]
            if copy > 1:
                boxes = jitter_boxes(boxes, rng, config.shift, config.scale)
            bank(image, boxes, frame.classes[keep], frame.source)
        if not jitter:
            continue
        alarms, patches = negative_boxes(
            frame.boxes,
            (detected or {}).get(frame.path, _NO_BOXES),
            (image.shape[1], image.shape[0]),
            rng,
            config.background_boxes,
        )
        for copy in range(config.negative_jitters if len(alarms) else 0):
            boxes = alarms if copy == 0 else jitter_boxes(alarms, rng, config.shift, config.scale)
            bank(image, boxes, [NOT_DIE_CLASS] * len(boxes), frame.source)
        if len(patches):
            bank(image, patches, [NOT_DIE_CLASS] * len(patches), frame.source)
    stacked = np.concatenate(crops) if crops else np.zeros((0, BANK_SIZE, BANK_SIZE, 3), np.uint8)
    return CropBank(stacked, np.array(labels, dtype=np.int64), sources)


def centre_crops(crops: npt.NDArray[np.uint8], crop_size: int = CROP_SIZE) -> npt.NDArray[np.uint8]:
    """The run-time crop inside banked crops: their centre ``crop_size`` pixels."""
    o = (crops.shape[1] - crop_size) // 2
    return crops[:, o : o + crop_size, o : o + crop_size]


def turned_centres(
    crops: npt.NDArray[np.uint8], angles_deg: npt.ArrayLike, crop_size: int = CROP_SIZE
) -> npt.NDArray[np.uint8]:
    """The run-time crops of banked crops, each turned about its centre by its angle first.

    Args:
        crops: banked crops, shape (n, s, s, c) (c up to 4: a plane may ride along with BGR), ``s``
            the :func:`bank_size` of ``crop_size``.
        angles_deg: counter-clockwise turn per crop (as ``cv2.getRotationMatrix2D``),
            shape (n,); NaN leaves a crop unturned.
        crop_size: side of the run-time crops.
    """
    angles = np.asarray(angles_deg, np.float64).reshape(-1)
    out = centre_crops(crops, crop_size).copy()
    side = crops.shape[1]
    for i in np.flatnonzero(~np.isnan(angles)):
        m = turn_and_squeeze(side, float(angles[i]))
        turned = cast("npt.NDArray[np.uint8]", cv2.warpAffine(crops[i], m, (side, side), flags=cv2.INTER_LINEAR))
        out[i] = centre_crops(turned[None], crop_size)[0]
    return out
