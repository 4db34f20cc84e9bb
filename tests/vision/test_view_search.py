"""The view search: the camera's vertical found from the dice themselves, where the tray is not calibrated."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.pose.cocked import CockedTest
from farklecam.vision.pose.upright import UprightView, upright_view
from farklecam.vision.pose.view_search import (
    VerticalMemory,
    ViewEstimate,
    ViewSearchConfig,
    candidate_views,
    search_view,
)
from farklecam.vision.reader import COCKED_TEST_FILE, DiceReader, ReaderConfig
from tests.vision.fakes import make_cocked_test

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
    cfg = ViewSearchConfig(max_score=0.03)
    probs = np.array([0.01, 0.02, 0.97], np.float32)
    assert ViewEstimate(view, 0.015, probs, 25).trusted(cfg) and not ViewEstimate(view, 0.2, probs, 25).trusted(cfg)
    assert ViewEstimate(view, 0.03, probs, 25).trusted(cfg) and not ViewEstimate(view, 0.031, probs, 25).trusted(cfg)


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
    leaning = [d["status"] == "cocked" for d in labels["dice"]]
    assert sorted(leaning) == [False, False, True]
    reader = DiceReader(MODELS)
    assert reader.cocked_test is not None
    boxes = np.array([d["box"] for d in labels["dice"]], np.float32)
    estimate = search_view(reader.cocked_test, frame, boxes)
    assert estimate is not None
    cfg = ViewSearchConfig()
    assert estimate.trusted(cfg)
    assert (estimate.probabilities >= cfg.threshold).tolist() == leaning  # the test alone calls exactly the leaning die
    read = reader.read(frame)
    assert sorted(read.status.tolist()) == ["cocked", "ok", "ok"]
    assert sorted(f for f, s in zip(read.face.tolist(), read.status.tolist(), strict=True) if s == "ok") == [1, 6]


@needs_models
def test_under_a_trusted_searched_vertical_the_fusion_decides() -> None:
    frame = cv2.imread(str(EXAMPLES / "tray_cocked.jpg"))
    reader = DiceReader(MODELS)
    assert reader.cocked_test is not None and reader.fusion is not None  # the committed pair match
    found = reader.detector(frame)
    estimate = search_view(reader.cocked_test, frame, found.xyxy)
    assert estimate is not None and estimate.trusted(ViewSearchConfig())
    fused = reader.fusion(estimate.probabilities, reader.classifier(frame, found.xyxy).cocked_prob)
    read = reader.read(frame)
    k = read.status.tolist().index("cocked")
    assert read.face_confidence[k] == pytest.approx(fused[k], abs=1e-5) and fused[k] >= reader.fusion.threshold
    unfused = DiceReader(MODELS)
    unfused.fusion = None
    alone = unfused.read(frame)
    assert alone.status.tolist() == read.status.tolist()
    assert alone.face_confidence[k] == pytest.approx(estimate.probabilities[k], abs=1e-5)


def tilted(azimuth_deg: float, tilt_deg: float, size: tuple[int, int] = (640, 480)) -> UprightView:
    """A view whose camera is tilted ``tilt_deg`` towards ``azimuth_deg`` (focal 576 px)."""
    a, t = np.radians(azimuth_deg), np.radians(tilt_deg)
    centre = np.array([size[0] / 2, size[1] / 2])
    return UprightView(nadir=centre + 576 * np.tan(t) * np.array([np.cos(a), np.sin(a)]), focal=576.0, principal=centre)


def test_the_memory_knows_the_vertical_after_agreeing_estimates_and_forgets_it_when_the_camera_moves() -> None:
    memory = VerticalMemory(needed=3, recheck=4, tolerance_deg=8.0)
    assert memory.view is None and memory.search_due()
    for azimuth in (88.0, 92.0):
        memory.learn(tilted(azimuth, 20.0))
    assert memory.view is None  # two are not enough
    memory.learn(tilted(90.0, 21.0))
    known = memory.view
    assert known is not None
    assert abs(np.degrees(known.down_angles([[320, 240]])[0]) - 90.0) < 1.0  # straight below the centre
    assert abs(np.degrees(known.view_tilt([[320, 240]])[0]) - 20.3) < 0.5  # the mean tilt
    assert [memory.search_due() for _ in range(8)] == [False, False, True, False, False, False, True, False]
    memory.learn(tilted(270.0, 20.0))  # the camera was turned round: start over
    assert memory.view is None and memory.search_due()
    memory.forget()
    assert memory.view is None


def test_a_camera_whose_vertical_cannot_be_learned_searches_less_often() -> None:
    memory = VerticalMemory(patience=3, retry=4)
    due = []
    for _ in range(12):
        due.append(memory.search_due())
        if due[-1]:
            memory.miss()
    assert due == [True, True, True, True, False, False, False, True, False, False, False, True]  # every 4th read
    memory.learn(tilted(90.0, 20.0))  # a success: back to searching every read until the vertical is known
    assert memory.search_due() and memory.search_due()


@pytest.mark.parametrize(
    "bad",
    [{"needed": 0}, {"recheck": 0}, {"patience": 0}, {"retry": 0}, {"tolerance_deg": 0.0}, {"tolerance_deg": 90.0}],
)
def test_bad_memory_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        VerticalMemory(**bad)  # type: ignore[arg-type]


@needs_models
def test_a_remembered_vertical_judges_frames_too_few_to_search() -> None:
    frame = cv2.imread(str(EXAMPLES / "tray_cocked.jpg"))
    reader = DiceReader(MODELS)
    assert reader.cocked_test is not None
    found = reader.detector(frame)
    assert len(found) == 3
    memory = VerticalMemory(needed=2, recheck=100)
    remembering = reader.with_vertical_memory(memory)
    for _ in range(2):
        remembering.read(frame)
    assert memory.view is not None
    statuses = remembering.read(frame).status.tolist()
    assert statuses.count("cocked") == 1
    # Only the leaning die and one other in view: too few to search, but the camera's vertical is known,
    # and the cocked test judges them under it (its probability becomes the leaning die's confidence).
    k = statuses.index("cocked")
    two = found[np.array([k, (k + 1) % 3])]
    read = remembering.with_detector(lambda _f: two).read(frame)
    assert read.status.tolist() == ["cocked", "ok"]
    under_memory = reader.cocked_test(frame, two.xyxy, memory.view)
    assert read.face_confidence[0] == pytest.approx(under_memory[0], abs=1e-5) and under_memory[0] >= 0.9
    assert search_view(reader.cocked_test, frame, two.xyxy) is None


def test_a_camera_that_moved_puts_the_learned_vertical_in_doubt_until_a_search_confirms_it() -> None:
    frame = cv2.imread(str(EXAMPLES / "tray_cocked.jpg"))
    panned = cv2.warpAffine(frame, np.float32([[1, 0, 30], [0, 1, 0]]), (640, 480), borderMode=cv2.BORDER_REFLECT)
    memory = VerticalMemory(needed=1, recheck=100)
    memory.observe(frame)  # before the vertical is known, a move changes nothing
    memory.observe(panned)
    assert not memory.doubted
    memory.learn(tilted(90.0, 20.0))
    memory.search_due()
    memory.observe(panned)
    assert not memory.doubted and not memory.search_due()  # the same picture again: still
    memory.observe(frame)  # the picture shifted between two reads: bumped
    assert memory.doubted and memory.view is not None
    for _ in range(3):  # searched on every read, however the searches go, until one is trusted
        assert memory.search_due()
        memory.miss()
    memory.learn(tilted(91.0, 20.0))  # it agrees: the vertical stands, and is trusted again
    assert not memory.doubted and memory.view is not None and not memory.search_due()


def test_under_a_doubted_vertical_the_cocked_test_only_vetoes() -> None:
    from tests.vision.test_reader import ScriptedClassifier, ScriptedCockedTest, _pip_scene

    frame, found = _pip_scene()
    two = found[np.array([0, 1])]  # too few dice to search: the remembered vertical would decide alone
    classifier = ScriptedClassifier([[0, 0, 0.9, 0, 0, 0, 0.1], [0, 0, 0, 0, 0.9, 0, 0.1]])
    test = ScriptedCockedTest([0.95, 0.05], threshold=0.5)  # under the remembered vertical the first die leans
    memory = VerticalMemory(needed=1, recheck=100)
    memory.learn(tilted(90.0, 20.0))
    config = ReaderConfig(auto_tray=False)
    reader = DiceReader(detector=lambda _f: two, classifier=classifier, cocked_test=test, config=config)  # type: ignore[arg-type]
    reader = reader.with_vertical_memory(memory)
    assert reader.read(frame).status.tolist() == ["cocked", "ok"]
    moved = np.roll(frame, 40, axis=1)
    reading = reader.read(moved)  # the camera was bumped, and two dice cannot confirm the vertical
    assert memory.doubted and reading.status.tolist() == ["ok", "ok"]  # the classifier read a 3, and it stands


def test_a_trays_vertical_teaches_the_cameras_for_frames_where_the_tray_is_not_found() -> None:
    frame = cv2.imread(str(EXAMPLES / "tray_cocked.jpg"))
    corners = json.loads((EXAMPLES / "labels" / "tray_cocked.json").read_text())["tray"]
    memory = VerticalMemory(needed=2, recheck=100)
    marked = DiceReader(MODELS, tray=corners).with_vertical_memory(memory)
    found = marked.detector(frame)
    marked.read(frame)
    assert memory.view is None  # one sighting is not yet the camera's vertical
    marked.read(frame)
    tray_view = upright_view(np.asarray(corners, np.float64), (frame.shape[1], frame.shape[0]))
    assert memory.view is not None and tray_view is not None
    assert np.allclose(memory.view.nadir, tray_view.nadir, atol=1.0)
    # The same camera, no tray in sight and one die: nothing to search with, but the learned vertical judges it.
    lone = found[np.array([0])]
    blind = DiceReader(MODELS, config=ReaderConfig(auto_tray=False)).with_vertical_memory(memory)
    judged = blind.cocked_judge
    assert judged is not None
    call = judged.call(frame, lone.xyxy, None, blind.classifier(frame, lone.xyxy), memory)
    assert call is not None and call.view is memory.view
