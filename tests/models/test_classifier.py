"""The face classifier's pieces: box matching, jitter, crop bank and network shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
cv2 = pytest.importorskip("cv2")

from datasets.training_sets import Frame  # noqa: E402
from models.classifier import (  # noqa: E402
    BANK_SIZE,
    ClassifierConfig,
    FaceNet,
    build_bank,
    jitter_boxes,
    match_detections,
)


@pytest.mark.parametrize(
    ("detected", "expected"),
    [
        ([], [[10, 10, 50, 50]]),  # nothing found: keep the label
        ([[12, 8, 56, 60]], [[12, 8, 56, 60]]),  # a larger detector box around the same die
        ([[100, 100, 140, 140]], [[10, 10, 50, 50]]),  # a detection of another die
        ([[100, 100, 140, 140], [9, 11, 49, 52]], [[9, 11, 49, 52]]),  # the nearest one wins
    ],
)
def test_match_detections(detected: list[list[float]], expected: list[list[float]]) -> None:
    labelled = np.array([[10, 10, 50, 50]], np.float32)
    got = match_detections(labelled, np.array(detected, np.float32).reshape(-1, 4))
    np.testing.assert_allclose(got, np.array(expected, np.float32))


def test_jitter_keeps_boxes_near_the_original() -> None:
    boxes = np.array([[100, 100, 140, 140]] * 500, np.float32)
    out = jitter_boxes(boxes, np.random.default_rng(0), shift=0.06, scale=0.1)
    centres = (out[:, :2] + out[:, 2:]) / 2
    assert out.shape == boxes.shape and (out[:, 2:] > out[:, :2]).all()
    assert np.abs(centres - 120).max() < 40 * 0.06 * 5
    assert 0 < centres.std() < 40 * 0.06 * 2


def test_bank_counts_copies_per_source_and_cocked(tmp_path: Path) -> None:
    image = np.full((120, 160, 3), 90, np.uint8)
    cv2.rectangle(image, (20, 20), (60, 60), (240, 240, 240), -1)
    path = tmp_path / "scene.png"
    cv2.imwrite(str(path), image)
    boxes = np.array([[20, 20, 60, 60], [90, 30, 130, 70]], np.float32)
    frame = Frame("synthetic", path, np.array([3, 6]), boxes, (160, 120))
    config = ClassifierConfig(synth_jitters=2, cocked_jitters=5)
    bank = build_bank([frame], config, detected={path: boxes + 2})
    assert bank.crops.shape == (2 + 5, BANK_SIZE, BANK_SIZE, 3)
    assert bank.counts() == {"synthetic": {"4": 2, "cocked": 5}}
    assert len(build_bank([frame], config, jitter=False).labels) == 2


def test_facenet_shapes() -> None:
    model = FaceNet().eval()
    with torch.no_grad():
        assert model(torch.zeros(3, 3, 64, 64)).shape == (3, 7)
