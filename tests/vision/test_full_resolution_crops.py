"""A 1280x720 read: the detector looks at the frame made small, the classifier at crops of the full frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from farklecam.vision.crops import extract_crops
from farklecam.vision.faces.classifier import FaceClassifier
from farklecam.vision.reader import DiceReader, ReaderConfig


def test_a_read_at_1280x720_cuts_its_crops_from_the_full_resolution_frame(
    fake_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = DiceReader(fake_model_dir, config=ReaderConfig(auto_tray=False))
    classifier = reader.classifier
    assert isinstance(classifier, FaceClassifier)
    # One-pixel noise: any copy of the frame made smaller and back loses it.
    noise = np.random.default_rng(0).integers(0, 2, (720, 1280, 1), dtype=np.uint8) * 255
    frame = np.repeat(noise, 3, axis=2)
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    cut = classifier.crops

    def spy(image: np.ndarray, xyxy: Any) -> np.ndarray:
        crops = cut(image, xyxy)
        seen.append((image, np.asarray(xyxy), crops))
        return crops

    monkeypatch.setattr(classifier, "crops", spy)
    reading = reader.read(frame)
    assert len(seen) == 1 and len(reading) == 2
    image, xyxy, crops = seen[0]
    assert image.shape == (720, 1280, 3) and np.array_equal(image, frame)
    np.testing.assert_array_equal(xyxy, reading.xyxy)
    assert xyxy[:, 2].max() > 640  # frame pixels, far past the detector's 64-pixel input
    full = np.concatenate([extract_crops(frame, xyxy, classifier.crop_size, c) for c in classifier.contexts])
    np.testing.assert_array_equal(crops, full)
    small = cv2.resize(cv2.resize(frame, (640, 360), interpolation=cv2.INTER_AREA), (1280, 720))
    from_small = np.concatenate([extract_crops(small, xyxy, classifier.crop_size, c) for c in classifier.contexts])
    assert np.abs(crops.astype(int) - from_small.astype(int)).mean() > 40  # the noise survives only at full size
