"""The view search: the camera's vertical found from the dice themselves, where the tray is not calibrated."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vision.fakes import make_cocked_test
from vision.cocked import CockedTest
from vision.reader import COCKED_TEST_FILE, DiceReader, ReaderConfig
from vision.upright import upright_view
from vision.view_search import ViewEstimate, ViewSearchConfig, candidate_views, search_view

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
EXAMPLES = ROOT / "examples"
needs_models = pytest.mark.skipif(not (MODELS / COCKED_TEST_FILE).exists(), reason="no committed cocked test")


@settings(max_examples=30, deadline=None)
@given(
    tilts=st.lists(st.floats(0.0, 60.0), min_size=1, max_size=4, unique=True),
    azimuths=st.integers(1, 12),
    size=st.tuples(st.integers(64, 2000), st.integers(64, 2000)),
)
def test_candidate_views_are_the_grid_of_tilts_and_directions(
    tilts: list[float], azimuths: int, size: tuple[int, int]
) -> None:
    cfg = ViewSearchConfig(tilts_deg=tuple(tilts), azimuths=azimuths)
    views = candidate_views(size, cfg)
    assert len(views) == sum(1 if t == 0 else azimuths for t in tilts)
    centre = np.array([size[0] / 2, size[1] / 2])
    seen = sorted(float(np.degrees(v.view_tilt([centre])[0])) for v in views)  # the tilt at the picture's centre
    wanted = sorted(t for t in tilts for _ in range(1 if t == 0 else azimuths))
    assert np.allclose(seen, wanted, atol=1e-3)


@pytest.mark.parametrize(
    "bad",
    [
        {"tilts_deg": ()},
        {"tilts_deg": (0.0, 95.0)},
        {"azimuths": 0},
        {"min_dice": 1},
        {"min_dice": 2},
        {"min_dice": 5, "max_dice": 4},
        {"trim": 0.0},
        {"threshold": 1.0},
        {"max_score": -0.1},
        {"refine_step": 0.0},
    ],
)
def test_bad_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ViewSearchConfig(**bad)  # type: ignore[arg-type]


def test_too_few_dice_give_no_estimate(tmp_path: Path, onnx_available: None) -> None:
    test = CockedTest(make_cocked_test(tmp_path / "c.onnx"))
    frame = np.full((480, 640, 3), 90, np.uint8)
    assert search_view(test, frame, [[300, 220, 340, 260]]) is None
    assert search_view(test, frame, [[300, 220, 340, 260], [100, 220, 140, 260]]) is None  # one left after the drop


def test_the_chosen_view_scores_no_worse_than_any_coarse_candidate(tmp_path: Path, onnx_available: None) -> None:
    # The fake test calls a die cocked the more steeply the camera sees it, so views differ.
    test = CockedTest(make_cocked_test(tmp_path / "c.onnx"))
    frame = np.full((480, 640, 3), 90, np.uint8)
    boxes = np.array([[40, 40, 80, 80], [560, 60, 600, 100], [300, 400, 340, 440]], np.float32)
    cfg = ViewSearchConfig(trim=0.9)
    estimate = search_view(test, frame, boxes, cfg)
    assert estimate is not None and estimate.views_tried == len(candidate_views((640, 480), cfg)) + 8
    coarse = [float(np.sort(test(frame, boxes, v))[:2].mean()) for v in candidate_views((640, 480), cfg)]
    assert estimate.score <= min(coarse) + 1e-6
    assert np.allclose(estimate.probabilities, test(frame, boxes, estimate.view), atol=1e-5)


def test_an_estimate_is_trusted_only_when_the_dice_agree() -> None:
    view = candidate_views((640, 480))[0]
    cfg = ViewSearchConfig(max_score=0.03, threshold=0.95)
    probs = np.array([0.01, 0.02, 0.97], np.float32)
    agreed = ViewEstimate(view, 0.015, probs, 25).cocked(cfg)
    assert agreed is not None and agreed.tolist() == [False, False, True]
    assert ViewEstimate(view, 0.2, probs, 25).cocked(cfg) is None


@needs_models
@pytest.mark.parametrize(("name", "tolerance_deg"), [("tray_cocked", 6.0), ("tray_webcam", 15.0)])
def test_the_committed_models_find_the_labelled_vertical(name: str, tolerance_deg: float) -> None:
    reader = DiceReader(MODELS)
    assert reader.cocked_test is not None
    frame = cv2.imread(str(EXAMPLES / f"{name}.jpg"))
    labels = json.loads((EXAMPLES / "labels" / f"{name}.json").read_text())
    truth = upright_view(labels["tray"], (frame.shape[1], frame.shape[0]))
    assert truth is not None
    boxes = np.array([d["box"] for d in labels["dice"]], np.float32)
    estimate = search_view(reader.cocked_test, frame, boxes)
    assert estimate is not None
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    error = np.degrees(np.angle(np.exp(1j * (estimate.view.down_angles(centres) - truth.down_angles(centres)))))
    assert np.abs(error).max() <= tolerance_deg, error
    tilt_error = np.degrees(estimate.view.view_tilt(centres) - truth.view_tilt(centres))
    assert np.abs(tilt_error).max() <= 8.0, tilt_error


@needs_models
def test_a_leaning_die_is_flagged_without_a_calibrated_tray() -> None:
    frame = cv2.imread(str(EXAMPLES / "tray_cocked.jpg"))
    labels = json.loads((EXAMPLES / "labels" / "tray_cocked.json").read_text())
    assert sorted(d["status"] for d in labels["dice"]) == ["cocked", "ok", "ok"]
    searched = DiceReader(MODELS).read(frame)
    assert sorted(searched.status.tolist()) == ["cocked", "ok", "ok"]
    assert sorted(f for f, s in zip(searched.face.tolist(), searched.status.tolist(), strict=True) if s == "ok") == [
        1,
        6,
    ]
    without = DiceReader(MODELS, config=ReaderConfig(view_search=None)).read(frame)
    assert "cocked" not in without.status.tolist()  # the classifier alone cannot tell (it reads it unsure)
