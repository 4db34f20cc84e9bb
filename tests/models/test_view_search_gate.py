"""Choosing the view search's gate: the counts behind `python -m farklecam.models.thresholds.view_search`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.models.thresholds.view_search import SearchRow, estimates, gate_counts
from farklecam.models.training.cocked import LabelledScene
from farklecam.vision.pose.cocked import CockedTest
from farklecam.vision.pose.view_search import ViewSearchConfig
from tests.vision.fakes import make_cocked_test

ROWS = [
    (0.01, np.array([0.02, 0.01, 0.97], np.float32), np.array([False, False, True])),  # agreed: one right call
    (0.02, np.array([0.01, 0.95, 0.03], np.float32), np.array([False, False, False])),  # agreed: one false call
    (0.40, np.array([0.99, 0.99, 0.99], np.float32), np.array([True, False, False])),  # not trusted: a miss
]


def test_counts_follow_the_gate() -> None:
    both = gate_counts(ROWS, max_score=0.03, threshold=0.9)
    assert (both.dice, both.true_calls, both.false_calls, both.missed) == (9, 1, 1, 1)
    assert both.recall == 0.5 and both.precision == 0.5
    strict = gate_counts(ROWS, max_score=0.015, threshold=0.9)  # only the first frame is trusted
    assert (strict.true_calls, strict.false_calls, strict.missed) == (1, 0, 1)
    loose = gate_counts(ROWS, max_score=1.0, threshold=0.96)
    assert (loose.true_calls, loose.false_calls, loose.missed) == (2, 2, 0)


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 0.5), st.floats(0.0, 0.5))
def test_a_stricter_gate_never_calls_more(t1: float, t2: float, s1: float, s2: float) -> None:
    loose = gate_counts(ROWS, max_score=max(s1, s2), threshold=min(t1, t2))
    strict = gate_counts(ROWS, max_score=min(s1, s2), threshold=max(t1, t2))
    assert strict.true_calls + strict.false_calls <= loose.true_calls + loose.false_calls
    assert strict.true_calls + strict.missed == loose.true_calls + loose.missed == 2  # the leaning dice


def test_estimates_skip_frames_too_small_to_search(tmp_path: Path) -> None:
    pytest.importorskip("onnx", reason="the fake cocked test is built with the onnx package (training extra)")
    test = CockedTest(make_cocked_test(tmp_path / "c.onnx"))
    image = np.full((480, 640, 3), 90, np.uint8)
    three = np.array([[40, 40, 80, 80], [560, 60, 600, 100], [300, 400, 340, 440]], np.float32)
    scenes = [
        LabelledScene(tmp_path / "a.jpg", image, three, np.array([False, True, False])),
        LabelledScene(tmp_path / "b.jpg", image, three[:2], np.array([False, False])),
    ]
    rows = estimates(test, scenes, ViewSearchConfig())
    assert len(rows) == 1
    row = rows[0]
    assert row.test.shape == (3,) and row.truth.tolist() == [False, True, False] and 0.0 <= row.score <= 1.0
    assert row.fused is None
    fused = estimates(test, scenes, ViewSearchConfig(), lambda image, boxes, probs, view: 1.0 - probs)
    assert fused[0].fused is not None and np.allclose(fused[0].fused, 1.0 - fused[0].test)


def test_a_row_gives_the_probabilities_of_the_call_asked_for() -> None:
    truth = np.array([True, False])
    test, fused = np.array([0.9, 0.2], np.float32), np.array([0.6, 0.1], np.float32)
    row = SearchRow(0.02, test, fused, truth)
    assert row.gate_row("test")[1] is test and row.gate_row("fused")[1] is fused
    assert gate_counts([row.gate_row("fused")], max_score=0.03, threshold=0.5).true_calls == 1
    with pytest.raises(ValueError, match="no fused"):
        SearchRow(0.02, test, None, truth).gate_row("fused")
