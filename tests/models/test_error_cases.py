"""Describing what a reading got wrong: the evaluator's worklist."""

from __future__ import annotations

import numpy as np

from farklecam.models.evaluate.error_cases import class_name, describe_errors
from farklecam.models.evaluate.metrics import ImageLabels
from tests.vision.fakes import make_reading


def test_class_names() -> None:
    assert [class_name(c) for c in (-1, 0, 5, 6)] == ["none", "1", "6", "cocked"]


def test_every_kind_of_error_is_listed() -> None:
    labels = ImageLabels(
        xyxy=np.array([[10, 10, 30, 30], [50, 10, 70, 30], [100, 10, 120, 30]], np.float32),
        classes=np.array([2, 4, 6]),
    )
    reading = make_reading(
        [[11, 10, 31, 30], [51, 11, 71, 31], [150, 60, 170, 80]], [3, 6, 1], ["ok", "ok", "uncertain"]
    )
    errors = describe_errors(reading, labels)
    kinds = sorted((e["kind"], e.get("label"), e.get("read")) for e in errors)
    assert kinds == [("extra", None, "1"), ("missed", "cocked", None), ("wrong", "5", "6")]
    assert all(e["side_px"] == 20.0 for e in errors)


def test_a_right_reading_has_no_errors() -> None:
    labels = ImageLabels(xyxy=np.array([[10, 10, 30, 30]], np.float32), classes=np.array([0]))
    assert describe_errors(make_reading([[10, 10, 30, 30]], [1], ["ok"]), labels) == []


def test_off_tray_disagreements_are_listed() -> None:
    labels = ImageLabels(
        xyxy=np.array([[10, 10, 30, 30], [50, 10, 70, 30]], np.float32),
        classes=np.array([0, 1]),
        off_tray=np.array([True, False]),
    )
    reading = make_reading([[10, 10, 30, 30], [50, 10, 70, 30]], [1, 2], ["ok", "off_tray"])
    kinds = sorted(e["kind"] for e in describe_errors(reading, labels))
    assert kinds == ["off_tray", "on_tray"]
