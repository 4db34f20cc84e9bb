"""The YOLO head decoders: the per-level head must give what the in-graph decoding gives, cell for cell."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.detection.yolo_head import (
    candidates_from_decoded,
    candidates_from_levels,
    level_strides,
    nms,
    select,
)
from tests.vision.fakes import raw_head


def decode_yolo(
    raw: np.ndarray, conf: float = 0.25, iou: float = 0.5, max_det: int = 100
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes, scores and classes from a decoded head ``(1, 4 + nc, N)``."""
    return select(candidates_from_decoded(raw, conf), iou, max_det)


def test_nms_keeps_best_of_overlapping() -> None:
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 10.5]], np.float32)
    scores = np.array([0.8, 0.9, 0.5, 0.1], np.float32)
    assert nms(boxes, scores, 0.5).tolist() == [1, 2]
    assert nms(boxes, scores, 0.99).tolist() == [1, 0, 2, 3]
    assert nms(np.empty((0, 4), np.float32), np.empty(0, np.float32), 0.5).tolist() == []


def test_decode_threshold_nms_and_order() -> None:
    raw = raw_head([[10, 10, 4, 4], [11, 10, 4, 4], [30, 30, 6, 8], [50, 50, 4, 4]], [0.6, 0.9, 0.5, 0.1])
    xyxy, scores, classes = decode_yolo(raw, conf=0.25, iou=0.5)
    assert scores.tolist() == pytest.approx([0.9, 0.5])
    assert xyxy.tolist() == [[9, 8, 13, 12], [27, 26, 33, 34]]
    assert classes.tolist() == [0, 0]
    assert len(decode_yolo(raw, conf=0.95)[0]) == 0
    assert len(decode_yolo(raw, conf=0.05, max_det=1)[0]) == 1


def test_decode_multi_class_is_class_agnostic() -> None:
    raw = np.zeros((1, 6, 3), np.float32)
    raw[0, :4] = [[10, 10.5, 40], [10, 10, 40], [4, 4, 4], [4, 4, 4]]
    raw[0, 4:] = [[0.9, 0.1, 0.0], [0.2, 0.8, 0.7]]
    _, scores, classes = decode_yolo(raw, conf=0.25, iou=0.5)
    assert scores.tolist() == pytest.approx([0.9, 0.7]) and classes.tolist() == [0, 1]


@pytest.mark.parametrize("shape", [(5, 10), (2, 5, 10), (1, 4, 10)])
def test_decode_rejects_bad_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="shape"):
        decode_yolo(np.zeros(shape, np.float32))


def dense_decode(outputs: dict[str, np.ndarray], strides: list[int]) -> np.ndarray:
    """Every cell decoded as ultralytics' graph does it (all cells, then concatenated): (1, 4 + nc, N)."""
    columns = []
    for s in strides:
        dist, logits = outputs[f"boxes_{s}"][0], outputs[f"logits_{s}"][0]
        reg_max, (h, w) = dist.shape[0] // 4, dist.shape[1:]
        bins = dist.reshape(4, reg_max, h * w)
        soft = np.exp(bins - bins.max(axis=1, keepdims=True))
        ltrb = (soft / soft.sum(axis=1, keepdims=True) * np.arange(reg_max)[None, :, None]).sum(axis=1)  # (4, hw)
        ay, ax = np.meshgrid(np.arange(h) + 0.5, np.arange(w) + 0.5, indexing="ij")
        anchors = np.stack([ax.ravel(), ay.ravel()])  # (2, hw)
        x1y1, x2y2 = anchors - ltrb[:2], anchors + ltrb[2:]
        box = np.concatenate([(x1y1 + x2y2) / 2, x2y2 - x1y1]) * s
        columns.append(np.concatenate([box, 1 / (1 + np.exp(-logits.reshape(logits.shape[0], -1)))]))
    return np.concatenate(columns, axis=1)[None].astype(np.float32)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    nc=st.integers(1, 3),
    reg_max=st.sampled_from([1, 4, 16]),
    grid=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    conf=st.floats(0.0, 1.0),
)
def test_per_level_decoding_matches_the_dense_decoding(
    seed: int, nc: int, reg_max: int, grid: tuple[int, int], conf: float
) -> None:
    rng = np.random.default_rng(seed)
    strides = [8, 16, 32]
    hw = (32 * grid[0], 32 * grid[1])
    outputs = {}
    for s in strides:
        outputs[f"boxes_{s}"] = rng.normal(0, 3, (1, 4 * reg_max, hw[0] // s, hw[1] // s)).astype(np.float32)
        outputs[f"logits_{s}"] = rng.normal(-1, 2, (1, nc, hw[0] // s, hw[1] // s)).astype(np.float32)
    mine = candidates_from_levels(outputs, hw, conf)
    theirs = candidates_from_decoded(dense_decode(outputs, strides), conf)
    np.testing.assert_array_equal(mine.classes, theirs.classes)
    np.testing.assert_allclose(mine.scores, theirs.scores, atol=1e-6)
    np.testing.assert_allclose(mine.cxcywh, theirs.cxcywh, atol=1e-3)
    for got, want in zip(select(mine), select(theirs), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-3)


def test_per_level_threshold_ends() -> None:
    outputs = {"boxes_8": np.zeros((1, 4, 1, 2), np.float32), "logits_8": np.array([[[[-30.0, 30.0]]]], np.float32)}
    assert len(candidates_from_levels(outputs, (8, 16), 0.0).scores) == 2
    assert len(candidates_from_levels(outputs, (8, 16), 0.5).scores) == 1
    assert len(candidates_from_levels(outputs, (8, 16), 1.0).scores) == 1  # float32 sigmoid(30) is 1.0
    assert len(candidates_from_levels(outputs, (8, 16), 1.5).scores) == 0


@pytest.mark.parametrize(
    ("names", "strides"),
    [
        (("boxes_8", "logits_8", "boxes_16", "logits_16"), [8, 16]),
        (("logits_32", "boxes_32"), [32]),
        (("output0",), None),
        (("boxes_8", "logits_8", "boxes_16"), None),
        (("boxes_8", "logits_8", "extra"), None),
        ((), None),
    ],
)
def test_level_strides(names: tuple[str, ...], strides: list[int] | None) -> None:
    assert level_strides(names) == strides


def test_per_level_decoding_rejects_what_is_not_a_head() -> None:
    with pytest.raises(ValueError, match="not a per-level head"):
        candidates_from_levels({"output0": np.zeros((1, 5, 10), np.float32)}, (32, 32), 0.5)
    wrong_size = {"boxes_8": np.zeros((1, 64, 4, 4), np.float32), "logits_8": np.zeros((1, 1, 4, 4), np.float32)}
    with pytest.raises(ValueError, match="do not fit"):
        candidates_from_levels(wrong_size, (64, 64), 0.5)
    odd_bins = {"boxes_8": np.zeros((1, 6, 8, 8), np.float32), "logits_8": np.zeros((1, 1, 8, 8), np.float32)}
    with pytest.raises(ValueError, match="4 x reg_max"):
        candidates_from_levels(odd_bins, (64, 64), 0.5)
