"""The face classifier: a tiny CNN that reads the top face (or "cocked") from a 64x64 die crop.

Crops are cut exactly as at run time, by :func:`vision.crops.extract_crops`
on the full-resolution frame, around boxes jittered like a detector's (shifted,
scaled, stretched), so the classifier is used to imperfect boxes. To rotate a
crop by any angle without black corners, each die is cut once at 1.5x the
field of view (:data:`BANK_SIZE` pixels, same scale as the run-time crop),
rotated, and the centre :data:`~vision.crops.CROP_SIZE` pixels kept; unrotated
samples take that centre directly, which equals the run-time crop.

A die face is rotation-invariant up to the orientation of 2, 3 and 6, which
any-angle rotation covers, and mirror-symmetric, so flips are safe too.

Besides the six faces and "cocked" the classifier learns "not_die": crops of
the detector's own false alarms on the *training* frames (mined at a low score
threshold, so the near misses count too) and of die-sized patches of table
and tray clear of every die. At run time the reader drops a detection the
classifier calls "not_die" (see :mod:`vision.faces`).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np
import numpy.typing as npt
import torch
from torch import nn
from torch.nn import functional as F

from datasets.training_sets import Frame
from datasets.yolo import CLASS_NAMES, COCKED_CLASS
from models.marbling import add_streaks
from models.motion_blur import add_motion_blur
from vision.crops import CROP_CONTEXT, CROP_SIZE, extract_crops
from vision.faces import NOT_DIE_NAME

__all__ = [
    "BANK_SIZE",
    "CLASSIFIER_NAMES",
    "MINING_CONF",
    "NOT_DIE_CLASS",
    "UNLABELLED_DIE_CONF",
    "ClassifierConfig",
    "CropBank",
    "FaceNet",
    "build_bank",
    "detect_boxes",
    "evaluate",
    "export_classifier",
    "false_alarms",
    "fit",
    "match_detections",
    "negative_boxes",
    "prune_unlabelled_dice",
    "train_classifier",
]

ModelT = TypeVar("ModelT", bound=nn.Module)

#: The classifier's classes: faces "1".."6", "cocked", then "not_die".
CLASSIFIER_NAMES = (*CLASS_NAMES, NOT_DIE_NAME)
#: Class id of a crop that shows no die.
NOT_DIE_CLASS = len(CLASS_NAMES)
_NO_BOXES = np.zeros((0, 4), np.float32)
#: Detector score threshold for mining: lower than at run time, so near misses are learned too.
MINING_CONF = 0.2
#: Confidence above which an earlier classifier's read of a "false alarm" means an unlabelled die.
UNLABELLED_DIE_CONF = 0.9

#: Side of the banked crops: 1.5x the run-time field of view at the same pixel scale.
BANK_SIZE = CROP_SIZE * 3 // 2
#: Context that makes a BANK_SIZE crop cover 1.5x the run-time crop's field of view.
_BANK_CONTEXT = (1.5 * (1 + 2 * CROP_CONTEXT) - 1) / 2


class FaceNet(nn.Module):
    """Five conv blocks (conv 3x3, batch norm, ReLU), global average pool, linear.

    The first conv has stride 2 and the next three end in a 2x2 max-pool
    (64 -> 32 -> 16 -> 8 -> 4 pixels): about 11 M multiply-adds per crop, so six
    crops take about a millisecond on a laptop CPU and a training step stays
    cheap on two cores. A pip (6-8 pixels in a crop) survives the first stride.
    """

    def __init__(
        self,
        num_classes: int = len(CLASSIFIER_NAMES),
        widths: Sequence[int] = (16, 24, 48, 96, 128),
        in_channels: int = 3,
    ):
        super().__init__()
        layers: list[nn.Module] = []
        channels = in_channels
        for i, width in enumerate(widths):
            stride = 2 if i == 0 else 1
            layers += [
                nn.Conv2d(channels, width, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(),
            ]
            if 0 < i < len(widths) - 1:
                layers.append(nn.MaxPool2d(2))
            channels = width
        self.features = nn.Sequential(*layers)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(channels, num_classes)

    def forward(self, crops: torch.Tensor) -> torch.Tensor:
        """RGB crops (n, 3, 64, 64) in 0..1 -> logits (n, classes)."""
        x = self.features(crops)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.head(self.dropout(x))


@dataclass(frozen=True)
class ClassifierConfig:
    """Everything that decides a classifier training run.

    Attributes:
        epochs: passes over the crop bank (each with fresh augmentation).
        batch: crops per step.
        lr: peak learning rate of the one-cycle schedule (AdamW).
        weight_decay: AdamW weight decay.
        real_jitters: jittered crops banked per real die (the real photos are few).
        synth_jitters: jittered crops banked per generated die.
        cocked_jitters: jittered crops banked per cocked die (rare in generated scenes, absent from real).
        negative_jitters: jittered crops banked per mined detector false alarm ("not_die").
        background_boxes: die-sized patches clear of every die banked per frame ("not_die").
        shift: box centre jitter, fraction of the box side (standard deviation).
        scale: box size jitter, log-normal standard deviation.
        streaks: share of training crops given marble streaks (:mod:`models.marbling`).
        motion_blur: share of training crops smeared along a line (:mod:`models.motion_blur`).
        seed: seed for jitter, augmentation, initialisation and batch order.
        max_steps: stop after this many steps (smoke tests); None trains every epoch.
        threads: torch CPU threads.
    """

    epochs: int = 12
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4
    real_jitters: int = 8
    synth_jitters: int = 2
    cocked_jitters: int = 10
    negative_jitters: int = 4
    background_boxes: int = 1
    shift: float = 0.06
    scale: float = 0.1
    streaks: float = 0.0
    motion_blur: float = 0.0
    seed: int = 0
    max_steps: int | None = None
    threads: int = 1


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


def match_detections(labelled: npt.NDArray[np.float32], detected: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """For each labelled box, the detected box nearest its centre, else the labelled box itself.

    A detection counts when its centre lies within half the labelled box's
    longer side of the labelled centre (box conventions differ, centres agree).
    """
    out = labelled.copy()
    if len(detected) == 0 or len(labelled) == 0:
        return out
    centres = (labelled[:, :2] + labelled[:, 2:]) / 2
    det_centres = (detected[:, :2] + detected[:, 2:]) / 2
    dist = np.linalg.norm(centres[:, None, :] - det_centres[None, :, :], axis=2)
    nearest = dist.argmin(axis=1)
    reach = np.maximum(labelled[:, 2] - labelled[:, 0], labelled[:, 3] - labelled[:, 1]) / 2
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
    from vision.detector import DieDetector

    detector = DieDetector(detector_path, conf=conf)
    out: dict[Path, npt.NDArray[np.float32]] = {}
    for frame in frames:
        image = cv2.imread(str(frame.path), cv2.IMREAD_COLOR)
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
    from vision.faces import FaceClassifier

    classifier = FaceClassifier(classifier_path)
    out: dict[Path, npt.NDArray[np.float32]] = {}
    for frame in frames:
        boxes = detected.get(frame.path)
        if boxes is None:
            continue
        image = cv2.imread(str(frame.path), cv2.IMREAD_COLOR) if len(boxes) else None
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

    def bank(image: npt.NDArray[np.uint8], boxes: npt.NDArray[np.float32], classes: Sequence[int], source: str) -> None:
        crops.append(extract_crops(image, boxes, size=BANK_SIZE, context=_BANK_CONTEXT))
        labels.extend(int(c) for c in classes)
        sources.extend([source] * len(boxes))

    for frame in frames:
        if len(frame.boxes) == 0 and not jitter:
            continue
        image = cv2.imread(str(frame.path), cv2.IMREAD_COLOR)
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


def _centre(crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The run-time crop inside banked crops: the centre CROP_SIZE pixels."""
    o = (BANK_SIZE - CROP_SIZE) // 2
    return crops[:, o : o + CROP_SIZE, o : o + CROP_SIZE]


def _rotate(crops: npt.NDArray[np.uint8], rng: np.random.Generator, p: float) -> npt.NDArray[np.uint8]:
    """Rotate a share ``p`` of the banked crops by any angle, then keep the centre."""
    out = _centre(crops).copy()
    c = (BANK_SIZE - 1) / 2
    for i in np.flatnonzero(rng.random(len(crops)) < p):
        m = cv2.getRotationMatrix2D((c, c), float(rng.uniform(0, 360)), 1.0)
        rotated = cv2.warpAffine(crops[i], m, (BANK_SIZE, BANK_SIZE), flags=cv2.INTER_LINEAR)
        out[i] = _centre(rotated[None])[0]
    return out


def to_tensor(crops: npt.NDArray[np.uint8]) -> torch.Tensor:
    """BGR uint8 crops -> RGB float tensor in 0..1, as :func:`vision.crops.crops_to_tensor`."""
    return torch.from_numpy(np.ascontiguousarray(crops[..., ::-1])).permute(0, 3, 1, 2).float() / 255.0


def augment(x: torch.Tensor, gen: torch.Generator, *, flip_vertical: bool = True) -> torch.Tensor:
    """Photometric and flip augmentation of a batch: flips, colour jitter, blur, noise.

    ``flip_vertical`` False keeps up and down (crops turned so the nadir is below).
    """
    n = x.shape[0]

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen)

    flip_h = rand(n) < 0.5
    x = torch.where(flip_h[:, None, None, None], x.flip(3), x)
    flip_v = rand(n) < (0.5 if flip_vertical else 0.0)
    x = torch.where(flip_v[:, None, None, None], x.flip(2), x)
    # Brightness, contrast, per-channel gain (white balance), saturation.
    x = x * (0.6 + 0.8 * rand(n, 1, 1, 1)) * (0.85 + 0.3 * rand(n, 3, 1, 1))
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * (0.6 + 0.8 * rand(n, 1, 1, 1)) + mean
    grey = x.mean(dim=1, keepdim=True)
    x = grey + (x - grey) * (0.3 + 1.2 * rand(n, 1, 1, 1))
    # Inverted dice (light pips on dark bodies) exist; a few swapped colours help generalise.
    invert = rand(n) < 0.05
    x = torch.where(invert[:, None, None, None], 1 - x, x)
    # Blur (defocus / motion) on a third of the batch.
    blur = rand(n) < 0.3
    if blur.any():
        k = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0]) / 16
        kernel = (k[:, None] * k[None, :]).expand(3, 1, 5, 5)
        blurred = F.conv2d(F.pad(x[blur], (2, 2, 2, 2), mode="replicate"), kernel, groups=3)
        x = x.clone()
        x[blur] = blurred
    # Sensor noise.
    x = x + torch.randn(x.shape, generator=gen) * (0.04 * rand(n, 1, 1, 1))
    return x.clamp(0, 1)


def _log(message: str) -> None:
    print(message, flush=True)  # noqa: T201 (training progress for a person watching, flushed for log files)


def train_classifier(
    bank: CropBank, config: ClassifierConfig, log: Callable[[str], None] | None = None
) -> tuple[FaceNet, dict[str, float]]:
    """Train :class:`FaceNet` on a crop bank with augmentation; returns the model and run stats."""
    torch.manual_seed(config.seed)
    model = FaceNet()
    # Streaks and smears draw from their own streams, so the batches, turns and
    # photometric draws stay those of the same recipe without them.
    streak_rng = np.random.default_rng([config.seed, 1])
    smear_rng = np.random.default_rng([config.seed, 2])

    def batch(idx: npt.NDArray[np.intp], rng: np.random.Generator, gen: torch.Generator) -> torch.Tensor:
        crops = add_streaks(_rotate(bank.crops[idx], rng, p=0.7), streak_rng, config.streaks)
        crops = add_motion_blur(crops, smear_rng, config.motion_blur)
        return augment(to_tensor(crops), gen)

    return fit(model, bank.labels, batch, config, log)


def fit(
    model: ModelT,
    labels_np: npt.NDArray[np.int64],
    batch: Callable[[npt.NDArray[np.intp], np.random.Generator, torch.Generator], torch.Tensor],
    config: ClassifierConfig,
    log: Callable[[str], None] | None = None,
) -> tuple[ModelT, dict[str, float]]:
    """The training loop both crop classifiers share: AdamW, one-cycle schedule, label smoothing.

    Args:
        model: the network to train (in place).
        labels_np: class id of every banked crop.
        batch: makes the (augmented) input tensor of the crops at the given indices.
        config: epochs, batch size, learning rate, seed, threads, step limit.
        log: progress lines go here (default: printed).
    """
    log = log or _log
    torch.set_num_threads(config.threads)
    rng = np.random.default_rng(config.seed)
    gen = torch.Generator().manual_seed(config.seed)
    steps_per_epoch = max(1, math.ceil(len(labels_np) / config.batch))
    total = steps_per_epoch * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=total, pct_start=0.15)
    labels = torch.from_numpy(labels_np)
    start = time.monotonic()
    step, seen_loss = 0, 0.0
    model.train()
    while step < total:
        order = rng.permutation(len(labels_np))
        for i in range(0, len(order), config.batch):
            if step >= total:
                break
            idx = order[i : i + config.batch]
            x = batch(idx, rng, gen)
            loss = F.cross_entropy(model(x), labels[idx], label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            seen_loss = 0.98 * seen_loss + 0.02 * loss.item() if step > 1 else loss.item()
            if step % steps_per_epoch == 0 or step == total:
                log(f"classifier step {step}/{total} loss {seen_loss:.4f} ({time.monotonic() - start:.0f} s)")
    model.eval()
    return model, {"steps": float(step), "seconds": time.monotonic() - start, "final_loss": seen_loss}


@torch.no_grad()
def evaluate(model: nn.Module, bank: CropBank) -> dict[str, dict[str, float]]:
    """Accuracy of exact (unrotated, unaugmented) crops, per source: ``{source: {accuracy, crops}}``."""
    model.eval()
    pred = (
        np.concatenate(
            [
                model(to_tensor(_centre(bank.crops[i : i + 512]))).argmax(1).numpy()
                for i in range(0, len(bank.labels), 512)
            ]
        )
        if len(bank.labels)
        else np.zeros(0, np.int64)
    )
    out: dict[str, dict[str, float]] = {}
    sources = np.array(bank.sources)
    for source in sorted(set(bank.sources)):
        mask = sources == source
        out[source] = {"accuracy": float((pred[mask] == bank.labels[mask]).mean()), "crops": float(mask.sum())}
    return out


def export_classifier(
    model: nn.Module,
    out: Path,
    version: str,
    extra: dict[str, str] | None = None,
    *,
    names: Sequence[str] = CLASSIFIER_NAMES,
    channels: int = 3,
) -> Path:
    """Export to ONNX per docs/model-contract.md: input ``crops`` (n, channels, 64, 64), output ``logits``.

    The batch axis is dynamic; metadata holds the class ``names`` (JSON),
    ``crop_size``, ``crop_context`` and ``farklecam_version``.
    """
    import onnx

    out.parent.mkdir(parents=True, exist_ok=True)
    model = model.eval()
    dummy = torch.zeros(2, channels, CROP_SIZE, CROP_SIZE)
    # The TorchScript exporter needs no onnxscript and handles this plain CNN; torch calls it legacy.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        torch.onnx.export(
            model,
            (dummy,),
            str(out),
            input_names=["crops"],
            output_names=["logits"],
            dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
            dynamo=False,
            opset_version=17,
        )
    proto = onnx.load(str(out))
    meta = {
        "names": json.dumps(list(names)),
        "crop_size": str(CROP_SIZE),
        "crop_context": str(CROP_CONTEXT),
        "farklecam_version": version,
        **(extra or {}),
    }
    for key, value in meta.items():
        proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(out))
    return out


def config_dict(config: ClassifierConfig) -> dict[str, object]:
    """The config as a plain dict (for training.json)."""
    return asdict(config)
