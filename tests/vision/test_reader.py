from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from farklecam.errors import ImageError, ModelLoadError, VisionError
from farklecam.vision.faces.classifier import FaceScores
from farklecam.vision.pose.cocked import CockedFusion
from farklecam.vision.pose.upright import UprightView
from farklecam.vision.pose.view_search import ViewSearchConfig
from farklecam.vision.reader import (
    DiceReader,
    ReaderConfig,
    as_bgr_frame,
    config_override,
    default_model_dir,
    looks_merged,
)
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.tray.outline import TrayOutline
from tests.vision.conftest import draw_die


def red_and_black() -> np.ndarray:
    """128x128: a red die at (24, 24, 40, 40) (reads "1"), a black one at (72, 72, 88, 88) (cocked)."""
    frame = np.zeros((128, 128, 3), np.uint8)
    frame[:56, :56] = (0, 0, 255)
    return frame


def test_read_with_fake_models(fake_model_dir: Path) -> None:
    reader = DiceReader(fake_model_dir, config=ReaderConfig(auto_tray=False))
    r = reader.read(red_and_black(), frame_index=7, timestamp=1.5)
    assert r.xyxy.tolist() == [[24, 24, 40, 40], [72, 72, 88, 88]]
    assert r.face.tolist() == [1, 0]
    assert r.status.tolist() == ["ok", "cocked"]
    assert r.faces == (1,) and r.rethrow == 1
    assert r.frame_index == 7 and r.timestamp == 1.5 and r.image_size == (128, 128)
    assert r.data["cocked"].tolist() == [False, True]
    assert r.tray is None


def test_calibrated_tray_marks_off_tray(fake_model_dir: Path) -> None:
    reader = DiceReader(fake_model_dir, tray=[[0, 0], [60, 0], [60, 60], [0, 60]])
    r = reader.read(red_and_black())
    assert r.status.tolist() == ["ok", "off_tray"]
    assert r.tray is not None and r.tray.shape == (4, 2)
    untrayed = DiceReader(fake_model_dir, config=ReaderConfig(auto_tray=False))
    assert untrayed.read(red_and_black()).status.tolist() == ["ok", "cocked"]
    assert reader.with_tray(None).detector is reader.detector  # models are shared, not reloaded


def test_read_path_and_bytes(fake_model_dir: Path, tmp_path: Path) -> None:
    reader = DiceReader(fake_model_dir)
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), red_and_black())
    assert reader.read_path(path).faces == (1,)
    assert reader.read_bytes(path.read_bytes()).faces == (1,)
    (tmp_path / "bad.jpg").write_bytes(b"nope")
    with pytest.raises(ImageError, match=r"bad\.jpg"):
        reader.read_path(tmp_path / "bad.jpg")
    with pytest.raises(ImageError, match="empty"):
        reader.read_bytes(b"")


def test_missing_models(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"die_detector\.onnx"):
        DiceReader(tmp_path)


def test_default_model_dir_is_the_models_package() -> None:
    shipped = Path(__file__).resolve().parents[2] / "models" / "die_detector.onnx"
    assert (default_model_dir() / "die_detector.onnx").resolve() == shipped  # an editable install links each file


@pytest.mark.parametrize(
    ("frame", "shape"),
    [(np.zeros((4, 5), np.uint8), (4, 5, 3)), (np.zeros((4, 5, 4), np.uint8), (4, 5, 3))],
    ids=["grey", "bgra"],
)
def test_as_bgr_frame_converts(frame: np.ndarray, shape: tuple[int, ...]) -> None:
    assert as_bgr_frame(frame).shape == shape


@pytest.mark.parametrize(
    "frame", [np.zeros((4, 5, 3), np.float32), np.zeros((4, 5, 2), np.uint8), np.zeros((0, 5, 3), np.uint8), "x"]
)
def test_as_bgr_frame_rejects(frame: object) -> None:
    with pytest.raises(ImageError):
        as_bgr_frame(frame)  # type: ignore[arg-type]


def test_the_config_holds_a_dozen_settings_at_most() -> None:
    assert len(dataclasses.fields(ReaderConfig)) <= 12


@pytest.mark.parametrize("field", ["det_conf", "face_min_conf", "off_tray_min_inside"])
def test_config_validation(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        ReaderConfig(**{field: 1.5})


class ScriptedClassifier:
    """Returns fixed face probabilities for every call (the classifier seam)."""

    def __init__(self, probs: list[list[float]]) -> None:
        self.probs = np.array(probs, np.float32)  # (n, 7 or 8): faces 1-6, cocked, [not_die]

    def __call__(self, frame: np.ndarray, xyxy: np.ndarray) -> FaceScores:
        p = self.probs[: len(xyxy)]
        best = p[:, :7].argmax(axis=1)
        face = np.where(best < 6, best + 1, 0)
        not_die = p[:, 7] if p.shape[1] > 7 else None
        return FaceScores(face, best == 6, p[:, :7].max(axis=1), p[:, :6], p[:, 6], not_die)


def _pip_scene() -> tuple[np.ndarray, Reading]:
    frame = np.full((200, 400, 3), 90, np.uint8)
    boxes = [draw_die(frame, 3, 30, 70, 60), draw_die(frame, 5, 160, 70, 60), draw_die(frame, 2, 290, 70, 60)]
    n = len(boxes)
    found = Reading(
        xyxy=boxes,
        confidence=[0.9] * n,
        face=[0] * n,
        face_confidence=[0] * n,
        status=["uncertain"] * n,
        image_size=(400, 200),
    )
    return frame, found


def test_detections_read_as_not_a_die_are_dropped() -> None:
    frame, found = _pip_scene()
    probs = [
        [0, 0, 0.9, 0, 0, 0, 0, 0.1],
        [0, 0, 0, 0, 0.3, 0, 0, 0.7],  # a hole in the tray, say: no die
        [0, 0.8, 0, 0, 0, 0, 0, 0.2],
    ]
    config = ReaderConfig(auto_tray=False)
    reader = DiceReader(detector=lambda _f: found, classifier=ScriptedClassifier(probs), config=config)
    r = reader.read(frame)
    assert r.face.tolist() == [3, 2]
    np.testing.assert_allclose(r.xyxy, found.xyxy[[0, 2]])


def test_unsure_cocked_is_uncertain() -> None:
    frame, found = _pip_scene()
    probs = [[0.1, 0, 0, 0, 0, 0, 0.9], [0.3, 0, 0, 0, 0, 0.3, 0.4], [0, 0.9, 0.1, 0, 0, 0, 0]]
    config = ReaderConfig(vertical_search=False)  # the classifier's own call (the search may veto it: its own tests)
    reader = DiceReader(detector=lambda _f: found, classifier=ScriptedClassifier(probs), config=config)
    assert reader.read(frame).status.tolist() == ["cocked", "uncertain", "ok"]


def test_a_die_the_picture_cuts_is_never_called_cocked_but_uncertain_with_its_best_face() -> None:
    frame, found = _pip_scene()
    cut = dataclasses.replace(found, xyxy=found.xyxy - np.array([30, 0, 30, 0], np.float32))  # the first at x = 0
    probs = [[0, 0, 0, 0.08, 0, 0, 0.92], [0, 0, 0, 0, 0, 0.05, 0.95], [0, 0.9, 0.1, 0, 0, 0, 0]]
    config = ReaderConfig(vertical_search=False, auto_tray=False)  # the classifier's own call
    whole = DiceReader(detector=lambda _f: found, classifier=ScriptedClassifier(probs), config=config).read(frame)
    assert whole.status.tolist() == ["cocked", "cocked", "ok"]
    r = DiceReader(detector=lambda _f: cut, classifier=ScriptedClassifier(probs), config=config).read(frame)
    assert r.status.tolist() == ["uncertain", "cocked", "ok"]  # only the cut die is doubted
    assert r.face.tolist() == [4, 0, 2] and r.data["cocked"].tolist() == [False, True, False]


def test_calibrate_from_aruco(fake_model_dir: Path) -> None:
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(aruco.DICT_4X4_50)
    canvas = np.full((600, 800, 3), 200, np.uint8)
    for i, (x, y) in enumerate([(50, 50), (650, 50), (650, 450), (50, 450)]):
        canvas[y : y + 80, x : x + 80] = aruco.generateImageMarker(dictionary, i, 80)[..., None]
    reader = DiceReader(fake_model_dir).calibrate(canvas)
    assert reader.tray is not None and reader.tray.source == "aruco"
    with pytest.raises(VisionError, match="no tray"):
        DiceReader(fake_model_dir).calibrate(np.full((100, 100, 3), 128, np.uint8))


def test_tray_outline_argument() -> None:
    outline = TrayOutline.from_corners([[0, 0], [10, 0], [10, 10], [0, 10]])
    reader = DiceReader(detector=lambda f: Reading.empty(), classifier=ScriptedClassifier([]), tray=outline)
    assert reader.tray is outline


class ScriptedCockedTest:
    """Stands in for :class:`farklecam.vision.pose.cocked.CockedTest`: fixed probabilities, and records the views it
    was given."""

    def __init__(self, probs: list[float], threshold: float = 0.5, fusion: CockedFusion | None = None) -> None:
        self.probs = np.array(probs, np.float32)
        self.threshold = threshold
        self.fusion = fusion
        self.views: list[object] = []

    def __call__(self, frame: np.ndarray, xyxy: np.ndarray, view: object) -> np.ndarray:
        self.views.append(view)
        return self.probs[: len(xyxy)]

    def probabilities(
        self, frame: np.ndarray, xyxy: np.ndarray, angles: object, sines: object, dice: np.ndarray | None = None
    ) -> np.ndarray:
        """Under every candidate view of the search (boxes repeat per view), each die's fixed probability."""
        n = len(self.probs)
        assert len(xyxy) % n == 0 and (dice is None or len(dice) >= n)
        return np.tile(self.probs, len(xyxy) // n)


def test_where_the_tray_is_known_the_cocked_test_decides_which_dice_lean() -> None:
    frame, found = _pip_scene()
    probs = [
        [0, 0, 0.9, 0, 0, 0, 0.1],  # the classifier reads a 3; the test says it leans
        [0, 0, 0, 0, 0.05, 0, 0.95],  # the classifier says cocked; the test says flat: its face is unsure
        [0, 0.9, 0, 0, 0, 0, 0.1],
    ]
    tray = [[20, 0], [400, 0], [400, 200], [20, 200]]  # the first die is by the wall: it may lean
    test = ScriptedCockedTest([0.4, 0.1, 0.2], threshold=0.3)
    reader = DiceReader(detector=lambda _f: found, classifier=ScriptedClassifier(probs), tray=tray, cocked_test=test)  # type: ignore[arg-type]
    r = reader.read(frame)
    assert r.data["cocked"].tolist() == [True, False, False]
    # 0.4 is over the test's own calibrated threshold: cocked, though under cocked_min_conf.
    assert r.status.tolist() == ["cocked", "uncertain", "ok"] and r.face.tolist() == [0, 5, 2]
    assert len(test.views) == 1 and test.views[0] is not None
    # Without a tray, and without the search for the vertical, the classifier's own call stands.
    untrayed = DiceReader(
        detector=lambda _f: found,
        classifier=ScriptedClassifier(probs),
        config=ReaderConfig(auto_tray=False, vertical_search=False),
        cocked_test=test,  # type: ignore[arg-type]
    ).read(frame)
    assert untrayed.status.tolist() == ["ok", "cocked", "ok"] and len(test.views) == 1
    # Switched off, the test is not used even with a tray.
    off = DiceReader(
        detector=lambda _f: found,
        classifier=ScriptedClassifier(probs),
        tray=tray,
        config=ReaderConfig(cocked_test=False),
        cocked_test=test,  # type: ignore[arg-type]
    ).read(frame)
    assert off.face[0] == 3 and off.status[0] == "ok" and len(test.views) == 1


def test_a_camera_said_to_look_straight_down_lets_the_test_decide_under_the_centre_without_a_tray() -> None:
    frame, found = _pip_scene()
    probs = [[0, 0, 0.9, 0, 0, 0, 0.1], [0, 0, 0, 0, 0.05, 0, 0.95], [0, 0.9, 0, 0, 0, 0, 0.1]]
    test = ScriptedCockedTest([0.4, 0.1, 0.2], threshold=0.3)
    config = ReaderConfig(auto_tray=False, vertical_search=False, straight_down=True)
    reader = DiceReader(
        detector=lambda _f: found, classifier=ScriptedClassifier(probs), config=config, cocked_test=test
    )  # type: ignore[arg-type]
    r = reader.read(frame)
    assert r.status.tolist() == ["cocked", "uncertain", "ok"]  # the test decides, as under a calibrated tray
    (view,) = test.views
    assert isinstance(view, UprightView)
    assert np.allclose(view.nadir, [frame.shape[1] / 2, frame.shape[0] / 2])
    # A calibrated tray's vertical still comes first.
    tray = [[20, 0], [400, 30], [380, 200], [40, 180]]
    DiceReader(
        detector=lambda _f: found, classifier=ScriptedClassifier(probs), tray=tray, config=config, cocked_test=test
    ).read(frame)  # type: ignore[arg-type]
    assert not np.allclose(test.views[-1].nadir, view.nadir)  # type: ignore[attr-defined]


def test_the_straight_down_check_searches_only_when_a_die_reads_cocked_and_keeps_an_agreed_vertical() -> None:
    frame, found = _pip_scene()
    probs = [[0, 0, 0.9, 0, 0, 0, 0.1], [0, 0, 0, 0, 0.9, 0, 0.1], [0, 0.9, 0, 0, 0, 0, 0.1]]
    config = ReaderConfig(auto_tray=False, straight_down=True, straight_down_check_deg=10.0)

    def read(test: ScriptedCockedTest) -> Reading:
        return DiceReader(
            detector=lambda _f: found, classifier=ScriptedClassifier(probs), config=config, cocked_test=test
        ).read(frame)  # type: ignore[arg-type]

    flat = ScriptedCockedTest([0.1, 0.1, 0.2], threshold=0.3)
    r = read(flat)
    assert r.status.tolist() == ["ok", "ok", "ok"] and not r.straight_down_doubted
    assert len(flat.views) == 1  # no die read cocked: no search
    # One die leans, whatever the vertical: the search finds no view that lays it flat better than straight
    # down (the scripted test answers alike under every view), so the setting stands and the die is cocked.
    leaning = ScriptedCockedTest([0.95, 0.01, 0.01], threshold=0.3)
    r = read(leaning)
    assert r.status.tolist() == ["cocked", "ok", "ok"] and not r.straight_down_doubted


class ShaClassifier(ScriptedClassifier):
    """A scripted classifier whose model metadata names the run that trained it."""

    def __init__(self, probs: list[list[float]], sha: str) -> None:
        super().__init__(probs)
        self.model = SimpleNamespace(metadata={"train_config_sha": sha})


def test_under_a_calibrated_tray_the_fusion_fitted_with_this_classifier_decides() -> None:
    frame, found = _pip_scene()
    probs = [
        [0, 0, 0.25, 0, 0, 0, 0.75],  # the classifier leans towards cocked ...
        [0, 0, 0, 0, 0.9, 0, 0.1],
        [0, 0.9, 0, 0, 0, 0, 0.1],
    ]
    tray = [[20, 0], [400, 0], [400, 200], [20, 200]]  # the first die is by the wall: it may lean
    # ... and the test, under its own threshold, too: alone it says flat, together (0.61) cocked.
    fusion = CockedFusion(1.0, 1.0, 0.0, 0.5, classifier_sha="abc")
    test = ScriptedCockedTest([0.4, 0.1, 0.1], threshold=0.5, fusion=fusion)

    def read(sha: str, fused: bool = True) -> Reading:
        classifier = ShaClassifier(probs, sha)
        reader = DiceReader(detector=lambda _f: found, classifier=classifier, tray=tray, cocked_test=test)  # type: ignore[arg-type]
        if not fused:
            reader.fusion = None
        return reader.read(frame)

    fused = read("abc")
    assert fused.status.tolist() == ["cocked", "ok", "ok"]
    assert fused.face_confidence[0] == pytest.approx(float(fusion(0.4, 0.75)), abs=1e-6)
    # Fitted with another classifier, or switched off: the test decides alone, at its own threshold.
    assert read("retrained").status[0] != "cocked"
    assert read("abc", fused=False).status[0] != "cocked"


def test_a_fusion_weighing_the_frames_evidence_gets_it_from_the_reader() -> None:
    """The same two logits, and a weight on how sure the classifier is of a face: the doubted face tips it."""
    frame, found = _pip_scene()
    probs = [
        [0, 0, 0.25, 0, 0, 0, 0.75],  # a face the classifier doubts (0.25) ...
        [0, 0, 0, 0, 0.9, 0, 0.1],
        [0, 0.9, 0, 0, 0, 0, 0.1],
    ]
    tray = [[20, 0], [400, 0], [400, 200], [20, 200]]
    two = CockedFusion(1.0, 1.0, -1.0, 0.5, classifier_sha="abc")  # 0.4 and 0.75 fuse to 0.4: flat
    weighed = CockedFusion(1.0, 1.0, -1.0, 0.5, classifier_sha="abc", terms=(("face", -1.0),))

    def read(fusion: CockedFusion) -> Reading:
        test = ScriptedCockedTest([0.4, 0.1, 0.1], threshold=0.5, fusion=fusion)
        reader = DiceReader(
            detector=lambda _f: found, classifier=ShaClassifier(probs, "abc"), tray=tray, cocked_test=test
        )  # type: ignore[arg-type]
        return reader.read(frame)

    assert read(two).status[0] != "cocked"
    assert read(weighed).status.tolist() == ["cocked", "ok", "ok"]  # ... and its doubt is evidence of a lean


@pytest.mark.parametrize(
    ("test_probs", "statuses"),
    [
        ([0.01, 0.02, 0.97], ["ok", "uncertain", "cocked"]),  # the dice agree on a vertical: the test decides
        ([0.2, 0.3, 0.97], ["ok", "cocked", "ok"]),  # they do not: the classifier's call stands where the test backs it
        ([0.2, 0.1, 0.97], ["ok", "uncertain", "ok"]),  # ... and is vetoed where it does not (its face is unsure)
        ([0.01, 0.02, 0.85], ["ok", "uncertain", "ok"]),  # agreed, but 0.85 is under the search's threshold
    ],
)
def test_without_a_calibrated_tray_the_searched_vertical_decides_only_where_the_dice_agree(
    test_probs: list[float], statuses: list[str]
) -> None:
    frame, found = _pip_scene()
    probs = [
        [0, 0, 0.9, 0, 0, 0, 0.1],
        [0, 0, 0, 0, 0.05, 0, 0.95],  # the classifier says cocked
        [0, 0.9, 0, 0, 0, 0, 0.1],
    ]
    test = ScriptedCockedTest(test_probs, threshold=0.3)
    config = ReaderConfig(auto_tray=False)
    reader = DiceReader(
        detector=lambda _f: found, classifier=ScriptedClassifier(probs), cocked_test=test, config=config
    )  # type: ignore[arg-type]
    search = ViewSearchConfig()
    assert config.vertical_search and search.max_score < 0.2 < 0.85 < search.threshold
    assert reader.read(frame).status.tolist() == statuses


def test_an_outline_found_in_the_picture_serves_the_off_tray_test_but_not_the_cocked_test() -> None:
    from tests.vision.test_tray import _tray_scene

    frame, boxes = _tray_scene()
    n = len(boxes)
    found = Reading(xyxy=boxes, confidence=[0.9] * n, face=[0] * n, face_confidence=[0] * n, status=["uncertain"] * n)
    probs = [[0, 0.9, 0, 0, 0, 0, 0.1]] * n
    test = ScriptedCockedTest([0.9] * n)
    config = ReaderConfig(vertical_search=False)  # the search for the vertical has its own test
    reader = DiceReader(
        detector=lambda _f: found, classifier=ScriptedClassifier(probs), cocked_test=test, config=config
    )  # type: ignore[arg-type]
    outline = reader.find_tray(frame, boxes)
    assert outline is not None and not outline.has_true_corners
    r = reader.read(frame)
    assert DieStatus.OFF_TRAY in r.status.tolist() and test.views == []
    # Kept as the calibration, a found outline still is no measurement.
    assert reader.with_tray(outline).read(frame).status.tolist() == r.status.tolist() and test.views == []
    measured = reader.with_tray(outline.polygon.tolist())
    assert measured.tray is not None and measured.tray.has_true_corners
    assert measured.read(frame).data["cocked"].any() and len(test.views) == 1


def test_a_config_override_names_a_field_and_a_python_literal() -> None:
    assert config_override("straight_down_check_deg=None") == ("straight_down_check_deg", None)
    assert config_override("face_min_conf=0.8") == ("face_min_conf", 0.8)
    with pytest.raises(ValueError, match="'face_view' is no ReaderConfig field"):
        config_override("face_view=2")
    with pytest.raises(ValueError, match="not a Python literal"):
        config_override("face_views=four")


@pytest.mark.parametrize("deg", [0.0, 90.0, -5.0])
def test_a_straight_down_check_angle_outside_0_to_90_is_refused(deg: float) -> None:
    with pytest.raises(ValueError, match="straight_down_check_deg"):
        ReaderConfig(straight_down_check_deg=deg)


def test_with_straight_down_shares_the_models_and_changes_only_that_setting(fake_model_dir: Path) -> None:
    reader = DiceReader(fake_model_dir)
    assert reader.with_straight_down(False) is reader
    overhead = reader.with_straight_down(True)
    assert overhead.config.straight_down and not reader.config.straight_down
    assert overhead.detector is reader.detector and overhead.classifier is reader.classifier
    assert dataclasses.replace(overhead.config, straight_down=False) == reader.config


def test_a_box_twice_as_long_as_wide_and_larger_than_the_rest_looks_like_two_dice() -> None:
    boxes = np.array([[0, 0, 30, 30], [50, 0, 80, 31], [100, 0, 160, 30], [200, 0, 226, 36]], np.float32)
    assert looks_merged(boxes).tolist() == [False, False, True, False]  # a slanted single die (26 x 36) is not
    assert looks_merged(boxes[2:3]).tolist() == [False]  # alone, nothing to compare with
    assert looks_merged(np.array([[0, 0, 60, 30], [100, 0, 160, 30]], np.float32)).tolist() == [False, False]


def test_two_touching_dice_read_as_one_box_are_never_scored_as_one_die() -> None:
    frame, found = _pip_scene()
    merged = dataclasses.replace(
        found, xyxy=np.array([[20, 50, 80, 80], [90, 50, 120, 80], [130, 50, 160, 80]], np.float32)
    )
    probs = [[0, 0, 0, 0, 0.97, 0, 0.03], [0, 0.97, 0, 0, 0, 0, 0.03], [0.97, 0, 0, 0, 0, 0, 0.03]]
    config = ReaderConfig(vertical_search=False, auto_tray=False)
    r = DiceReader(detector=lambda _f: merged, classifier=ScriptedClassifier(probs), config=config).read(frame)
    assert r.status.tolist() == ["uncertain", "ok", "ok"] and r.data["merged"].tolist() == [True, False, False]
    assert r.faces == (1, 2) and r.unclear == 1
