"""A YOLO detection head's outputs turned into boxes, in numpy (ultralytics' post-processing without ultralytics).

Two layouts are read: ultralytics' **decoded** export, one tensor ``(1, 4 + nc, N)`` of
boxes (``cx, cy, w, h``) and class probabilities; and farklecam's **per-level** export
(:func:`farklecam.models.training.detector.cut_head`), each stride's raw box distributions
``boxes_s`` and class logits ``logits_s``, whose graph stops before decoding so that only
the cells passing the threshold are decoded here (ultralytics' ``DFL``, ``make_anchors``,
``dist2bbox``). Both feed one confidence filter and one class-agnostic NMS (:func:`select`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "Candidates",
    "candidates_from_decoded",
    "candidates_from_levels",
    "level_strides",
    "nms",
    "select",
]

#: Output names of a per-level head: ``boxes_8``, ``logits_8``, ``boxes_16``, ...
LEVEL_OUTPUT = re.compile(r"^(boxes|logits)_(\d+)$")


@dataclass(frozen=True, slots=True)
class Candidates:
    """Cells whose best class passed the threshold, before suppression."""

    cxcywh: npt.NDArray[np.float32]  #: (k, 4) box centre and size in input pixels
    scores: npt.NDArray[np.float32]  #: (k,) best class probability
    classes: npt.NDArray[np.int64]  #: (k,) best class index


def nms(xyxy: npt.NDArray[np.float32], scores: npt.NDArray[np.float32], iou: float) -> npt.NDArray[np.intp]:
    """Greedy non-maximum suppression; returns kept indices, best score first."""
    order = np.argsort(-scores, kind="stable")
    areas = (xyxy[:, 2] - xyxy[:, 0]).clip(0) * (xyxy[:, 3] - xyxy[:, 1]).clip(0)
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        ix1 = np.maximum(xyxy[i, 0], xyxy[rest, 0])
        iy1 = np.maximum(xyxy[i, 1], xyxy[rest, 1])
        ix2 = np.minimum(xyxy[i, 2], xyxy[rest, 2])
        iy2 = np.minimum(xyxy[i, 3], xyxy[rest, 3])
        inter = (ix2 - ix1).clip(0) * (iy2 - iy1).clip(0)
        union = areas[i] + areas[rest] - inter
        overlap = np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)
        order = rest[overlap <= iou]
    return np.asarray(keep, dtype=np.intp)


def candidates_from_decoded(raw: npt.NDArray[np.float32], conf: float) -> Candidates:
    """The cells of a decoded head ``(1, 4 + nc, N)`` whose best class score is at least ``conf``.

    Raises:
        ValueError: ``raw`` is not of shape (1, 4 + nc, N).
    """
    if raw.ndim != 3 or raw.shape[0] != 1 or raw.shape[1] < 5:
        raise ValueError(f"raw must be a 3D np.ndarray with shape (1, 4 + nc, N), but got shape {raw.shape}")
    pred = raw[0].T  # (N, 4 + nc)
    class_scores = pred[:, 4:]
    classes = class_scores.argmax(axis=1)
    scores = class_scores[np.arange(len(pred)), classes]
    mask = scores >= conf
    return Candidates(
        pred[mask, :4].astype(np.float32), scores[mask].astype(np.float32), classes[mask].astype(np.int64)
    )


def level_strides(names: list[str] | tuple[str, ...]) -> list[int] | None:
    """The strides of a per-level head from its output names, finest first; None if the names are not one.

    A per-level head has exactly a ``boxes_s`` and a ``logits_s`` output for each of its strides ``s``.
    """
    found: dict[int, set[str]] = {}
    for name in names:
        match = LEVEL_OUTPUT.match(name)
        if match is None:
            return None
        found.setdefault(int(match.group(2)), set()).add(match.group(1))
    if not found or any(kinds != {"boxes", "logits"} for kinds in found.values()):
        return None
    if len(names) != 2 * len(found):
        return None
    return sorted(found)


#: Above this logit a float32 sigmoid is 1.0 (from about 16.6), so a threshold of 1.0 must look at these cells.
_SURE_LOGIT = 15.0


def _logit_threshold(p: float) -> float:
    """A logit below which no cell can reach probability ``p``: a prefilter; the exact test is on the probability."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return _SURE_LOGIT
    return min(math.log(p / (1.0 - p)), _SURE_LOGIT) - 1e-4


def candidates_from_levels(
    outputs: Mapping[str, npt.NDArray[np.float32]], input_hw: tuple[int, int], conf: float
) -> Candidates:
    """Decode the cells of a per-level head whose best class probability is at least ``conf``.

    ``outputs`` holds ``boxes_s`` (1, 4 * reg_max, h, w) and ``logits_s`` (1, nc, h, w) for each
    stride ``s`` of an input of ``input_hw``. A cell at column ``i``, row ``j`` has its anchor at
    ``(i + 0.5, j + 0.5)`` grid units; each side's distance from it is the expectation of its
    distribution over ``0 .. reg_max - 1`` grid units.

    Raises:
        ValueError: the outputs are not a per-level head, or a level's shape does not match its stride.
    """
    strides = level_strides(tuple(outputs))
    if strides is None:
        raise ValueError(f"outputs {sorted(outputs)} are not a per-level head (boxes_S and logits_S for each stride)")
    threshold = _logit_threshold(conf)
    boxes, scores, classes = [], [], []
    for stride in strides:
        dist, logits = outputs[f"boxes_{stride}"], outputs[f"logits_{stride}"]
        expected = (input_hw[0] // stride, input_hw[1] // stride)
        if dist.ndim != 4 or logits.ndim != 4 or dist.shape[2:] != expected or logits.shape[2:] != expected:
            raise ValueError(
                f"level {stride}: boxes {dist.shape} and logits {logits.shape} do not fit an input of {input_hw}"
            )
        if dist.shape[1] % 4 or dist.shape[1] == 0:
            raise ValueError(f"level {stride}: {dist.shape[1]} box channels is not 4 x reg_max")
        best = logits[0].max(axis=0)
        rows, cols = np.nonzero(best >= threshold)
        if rows.size == 0:
            continue
        cell_logits = logits[0][:, rows, cols].T  # (k, nc)
        cls = cell_logits.argmax(axis=1)
        prob = (1.0 / (1.0 + np.exp(-cell_logits[np.arange(len(cls)), cls]))).astype(np.float32)
        reg_max = dist.shape[1] // 4
        bins = dist[0][:, rows, cols].T.reshape(-1, 4, reg_max).astype(np.float32)
        bins = np.exp(bins - bins.max(axis=2, keepdims=True))
        sides = (bins / bins.sum(axis=2, keepdims=True)) @ np.arange(reg_max, dtype=np.float32)  # (k, 4): l t r b
        ax, ay = cols.astype(np.float32) + 0.5, rows.astype(np.float32) + 0.5
        x1, y1, x2, y2 = ax - sides[:, 0], ay - sides[:, 1], ax + sides[:, 2], ay + sides[:, 3]
        boxes.append(np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], axis=1) * np.float32(stride))
        scores.append(prob)
        classes.append(cls)
    if not scores:
        return Candidates(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))
    score = np.concatenate(scores)
    keep = score >= conf
    return Candidates(
        np.concatenate(boxes).astype(np.float32)[keep], score[keep], np.concatenate(classes).astype(np.int64)[keep]
    )


def select(
    candidates: Candidates, iou: float = 0.5, max_det: int = 100, max_candidates: int = 3000
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """The boxes that survive class-agnostic NMS at ``iou``, best first: ``xyxy`` (k, 4), ``scores``, ``classes``.

    Two boxes over one die are one die whatever their class. At most ``max_candidates`` go to
    NMS and ``max_det`` come back.
    """
    cxcywh, scores, classes = candidates.cxcywh, candidates.scores, candidates.classes
    if len(scores) > max_candidates:
        top = np.argpartition(-scores, max_candidates)[:max_candidates]
        cxcywh, scores, classes = cxcywh[top], scores[top], classes[top]
    cxcy, wh = cxcywh[:, :2], cxcywh[:, 2:4]
    xyxy = np.concatenate([cxcy - wh / 2, cxcy + wh / 2], axis=1).astype(np.float32)
    keep = nms(xyxy, scores, iou)[:max_det]
    return xyxy[keep], scores[keep].astype(np.float32), classes[keep].astype(np.int64)
