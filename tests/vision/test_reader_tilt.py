"""The reader with a pose network: each die's measured tilt decides cocked, and every die reports it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from farklecam.vision.faces.classifier import FaceScores
from farklecam.vision.pose.net import DicePose, PoseNet
from farklecam.vision.pose.tilt import TiltCall
from farklecam.vision.pose.tilt_scores import tilt_scores
from farklecam.vision.pose.upright import UprightView, straight_down_view
from farklecam.vision.reader import DiceReader, ReaderConfig, pose_model_path
from farklecam.vision.tray.outline import TrayOutline
from hypothesis import given
from hypothesis import strategies as st

from farklecam.errors import ModelLoadError
from tests.vision.test_evaluate_tilt import _fake_pose_net
from tests.vision.test_reader import ScriptedClassifier, ScriptedCockedTest, _pip_scene

_PROBS = [
    [0, 0, 0.9, 0, 0, 0, 0.1],  # a clear 3
    [0, 0, 0, 0, 0.05, 0, 0.95],  # the classifier says cocked
    [0, 0.9, 0, 0, 0, 0, 0.1],  # a clear 2
]


class ScriptedPose:
    """Stands in for :class:`farklecam.vision.pose.net.PoseNet`: fixed tilts, and records the views it was given."""

    def __init__(self, tilts: list[float], view: UprightView | None = None) -> None:
        self.tilts = np.array(tilts, np.float64)
        self.view = view
        self.given: list[UprightView | None] = []

    def __call__(self, frame: np.ndarray, xyxy: np.ndarray, view: UprightView | None) -> DicePose:
        self.given.append(view)
        n = len(xyxy)
        up = np.tile([0.0, 0.0, -1.0], (n, 1))
        return DicePose(up, None, np.zeros(n, bool), self.tilts[:n], view or self.view)


def _reader(pose: ScriptedPose, tray: list[list[float]] | None = None, **config: object) -> DiceReader:
    _, found = _pip_scene()
    settings = ReaderConfig(auto_tray=False, **config)  # type: ignore[arg-type]
    test = ScriptedCockedTest([0.9, 0.9, 0.9], threshold=0.3)  # would call every die cocked
    return DiceReader(
        detector=lambda _f: found,
        classifier=ScriptedClassifier(_PROBS),
        tray=tray,
        config=settings,
        cocked_test=test,  # type: ignore[arg-type]
        pose=pose,
    )


def test_the_measured_tilt_decides_and_the_cocked_test_is_not_asked() -> None:
    frame, _ = _pip_scene()
    pose = ScriptedPose([30.0, 2.0, 13.0])
    reader = _reader(pose)
    r = reader.read(frame)
    # Past the band cocked, below it flat with its best face (the classifier's "cocked" overruled,
    # so its weak 5 reads uncertain), in the band uncertain with its clear face kept.
    assert r.status.tolist() == ["cocked", "uncertain", "uncertain"]
    assert r.face.tolist() == [0, 5, 2] and r.data["cocked"].tolist() == [True, False, False]
    assert r.data["tilt_deg"].tolist() == pytest.approx([30.0, 2.0, 13.0])
    assert [d["tilt_deg"] for d in r.to_dict()["dice"]] == [30.0, 2.0, 13.0]
    assert reader.cocked_test is not None and reader.cocked_test.views == []  # type: ignore[attr-defined]
    assert pose.given == [None]  # no tray marked: the dice's consensus is the network's to find


def test_a_die_the_network_cannot_tell_keeps_the_classifiers_call_and_reports_null() -> None:
    frame, _ = _pip_scene()
    r = _reader(ScriptedPose([np.nan, np.nan, 1.0])).read(frame)
    assert r.status.tolist() == ["ok", "cocked", "ok"] and r.face.tolist() == [3, 0, 2]
    assert [d["tilt_deg"] for d in r.to_dict()["dice"]] == [None, None, 1.0]
    json.dumps(r.to_dict())  # NaN never reaches the JSON


def test_a_marked_tray_gives_the_network_its_vertical_and_straight_down_is_not_used() -> None:
    frame, _ = _pip_scene()
    pose = ScriptedPose([1.0, 1.0, 1.0])
    tray: list[list[float]] = [[0, 0], [400, 0], [400, 200], [0, 200]]
    _reader(pose, tray=tray).read(frame)
    assert isinstance(pose.given[0], UprightView)
    pose.given.clear()
    _reader(pose, straight_down=True).read(frame)
    assert pose.given == [None]


def test_the_dice_consensus_vertical_places_the_bases_for_the_off_tray_test() -> None:
    frame, _ = _pip_scene()
    # An outline found in the picture gives no vertical: the one the dice agree on places their bases.
    found = TrayOutline.from_corners([[40, 0], [400, 0], [400, 200], [40, 200]], source="auto")
    assert found.vertical_corners is None
    # A nadir far to the left carries each die's base left of its box, the first one's over the edge.
    far = UprightView(np.array([-5000.0, 100.0]), 400.0, np.array([200.0, 100.0]))
    leaning_left = _reader(ScriptedPose([1.0, 1.0, 1.0], view=far)).with_tray(found).read(frame)
    overhead = _reader(ScriptedPose([1.0, 1.0, 1.0], view=straight_down_view((400, 200)))).with_tray(found).read(frame)
    assert leaning_left.data["in_tray"][0] < overhead.data["in_tray"][0]
    assert leaning_left.data["in_tray"][1:].tolist() == overhead.data["in_tray"][1:].tolist()


def test_without_a_pose_network_every_die_reports_null() -> None:
    frame, found = _pip_scene()
    reader = DiceReader(
        detector=lambda _f: found, classifier=ScriptedClassifier(_PROBS), config=ReaderConfig(auto_tray=False)
    )
    assert reader.pose is None
    assert [d["tilt_deg"] for d in reader.read(frame).to_dict()["dice"]] == [None, None, None]


def test_the_config_names_the_pose_model_in_the_model_folder_or_by_path(fake_model_dir: Path, tmp_path: Path) -> None:
    model = _fake_pose_net(fake_model_dir / "pose_net.onnx")
    assert pose_model_path(fake_model_dir, "pose_net.onnx") == model
    reader = DiceReader(fake_model_dir, config=ReaderConfig(pose_model="pose_net.onnx"))
    assert isinstance(reader.pose, PoseNet)
    elsewhere = _fake_pose_net(tmp_path / "other.onnx")
    assert isinstance(DiceReader(fake_model_dir, config=ReaderConfig(pose_model=str(elsewhere))).pose, PoseNet)
    with pytest.raises(ModelLoadError, match=r"missing\.onnx"):
        DiceReader(fake_model_dir, config=ReaderConfig(pose_model=str(tmp_path / "missing.onnx")))
    with pytest.raises(ModelLoadError, match="up_x"):
        DiceReader(fake_model_dir, config=ReaderConfig(pose_model="face_classifier.onnx"))


def _scores(cocked: list[bool]) -> FaceScores:
    n = len(cocked)
    probs = np.full((n, 6), 0.1, np.float32)
    probs[:, 2] = 0.5
    c = np.array(cocked)
    return FaceScores(
        np.where(c, 0, 3), c, np.where(c, 0.7, 0.5).astype(np.float32), probs, np.where(c, 0.7, 0.1).astype(np.float32)
    )


@given(st.lists(st.tuples(st.one_of(st.none(), st.floats(0, 90)), st.booleans()), min_size=1, max_size=8))
def test_a_measured_die_follows_its_tilt_and_an_unmeasured_one_the_classifier(
    dice: list[tuple[float | None, bool]],
) -> None:
    call = TiltCall()
    tilts = np.array([np.nan if t is None else t for t, _ in dice])
    before = _scores([c for _, c in dice])
    after, in_band = tilt_scores(before, tilts, call)
    known = ~np.isnan(tilts)
    assert (after.cocked[known] == (tilts[known] > call.threshold_deg + call.band_deg)).all()
    assert (after.cocked[~known] == before.cocked[~known]).all()
    assert (in_band == (known & (np.abs(np.nan_to_num(tilts) - call.threshold_deg) <= call.band_deg))).all()
    assert not (in_band & after.cocked).any()
    assert (after.face[after.cocked] == 0).all() and (after.face[~after.cocked] == 3).all()


def test_the_tilt_path_config_is_off_by_default_and_its_call_is_validated() -> None:
    assert ReaderConfig().pose_model is None
    assert dataclasses.replace(ReaderConfig(), pose_model="pose_net.onnx").pose_model == "pose_net.onnx"
    assert ReaderConfig(tilt_cocked_deg=18.0, tilt_band_deg=2.0).tilt_call == TiltCall(18.0, 2.0)
    with pytest.raises(ValueError, match="tilt band"):
        ReaderConfig(tilt_cocked_deg=5.0, tilt_band_deg=6.0)


def test_the_threshold_comes_from_the_config() -> None:
    frame, _ = _pip_scene()
    # At 25 +/- 4 degrees a die at 27 lies in the band (uncertain) and one at 13 is flat.
    strict = _reader(ScriptedPose([27.0, 2.0, 13.0]), tilt_cocked_deg=25.0).read(frame)
    assert strict.data["cocked"].tolist() == [False, False, False]
    assert strict.status.tolist()[0] == "uncertain" and strict.status.tolist()[2] == "ok"
    # At 8 +/- 2 both are past the band.
    looser = _reader(ScriptedPose([27.0, 2.0, 13.0]), tilt_cocked_deg=8.0, tilt_band_deg=2.0).read(frame)
    assert looser.data["cocked"].tolist() == [True, False, True]
