"""Logit-bias calibration: the offset is stored in the model and read back by the run-time classifier."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnx")

from farklecam.models.thresholds.calibrate import write_logit_bias
from farklecam.vision.faces.classifier import FaceClassifier
from tests.vision.fakes import make_classifier


def test_written_bias_is_read_back_and_replaced(tmp_path: Path) -> None:
    path = make_classifier(tmp_path / "face_classifier.onnx")
    assert FaceClassifier(path).logit_bias.tolist() == [0.0] * 7
    write_logit_bias(path, [0, 0, 0, 0, 0, 0, -1.5])
    write_logit_bias(path, [0, 0, 0, 0, 0, 0, -2.0])
    classifier = FaceClassifier(path)
    assert classifier.logit_bias.tolist() == [0.0] * 6 + [-2.0]
    assert list(classifier.model.metadata).count("logit_bias") == 1


def test_calibration_keeps_the_offset_that_reads_best(tmp_path: Path) -> None:
    from farklecam.models.thresholds.calibrate import calibrate
    from tests.models.test_evaluate import _folder
    from tests.vision.fakes import make_detector, raw_head

    models = tmp_path / "models"
    models.mkdir()
    make_detector(models / "die_detector.onnx", raw_head([[16, 16, 8, 8], [40, 40, 8, 8]], [0.9, 0.8]))
    make_classifier(models / "face_classifier.onnx")
    folder = _folder(tmp_path / "calib")  # one cocked die per image, read right without an offset
    best, rows = calibrate(models, [folder], grid=[-50.0, 0.0])
    assert best == 0.0
    by_offset = {r["cocked_bias"]: r for r in rows}
    assert by_offset[0.0]["cocked_recall"] == 1.0 and by_offset[-50.0]["cocked_recall"] == 0.0
    assert by_offset[-50.0]["face_accuracy"] < by_offset[0.0]["face_accuracy"]
