"""The evaluator's tilt error (``--pose-model``): the pose network judged beside the reader, on its boxes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from farklecam.vision.evaluate.metrics import ImageLabels
from farklecam.vision.evaluate.run import load_labels, main, sidecar_outline
from farklecam.vision.evaluate.tilt_error import TiltErrors
from farklecam.vision.images import load_image
from farklecam.vision.pose.net import POSE_NAMES, PoseNet
from farklecam.vision.pose.upright import upright_view
from hypothesis import given
from hypothesis import strategies as st

from tests.vision.fakes import _linear_on_mean_planes, _save
from tests.vision.test_evaluate import _folder


def _labels(tilts: list[float], occluded: list[bool] | None = None) -> ImageLabels:
    """Dice in a row, 20 px apart, with these labelled tilts."""
    xyxy = np.array([[20 * k, 0, 20 * k + 10, 10] for k in range(len(tilts))], np.float32).reshape(-1, 4)
    return ImageLabels(
        xyxy,
        np.zeros(len(tilts), np.int64),
        occluded=None if occluded is None else np.array(occluded, bool),
        tilt_deg=np.array(tilts, np.float32),
    )


def test_errors_split_at_the_leaning_label_and_follow_the_boxes_not_their_order() -> None:
    labels = _labels([2.0, 30.0, 0.0])
    tilt = TiltErrors()
    # The reader's boxes come in another order and one labelled die is not found.
    found = labels.xyxy[[1, 0]] + 1.0
    tilt.add([20.0, 5.0], found, labels)
    m = tilt.metrics()
    assert m["tilt_mae_flat"] == pytest.approx(3.0) and m["tilt_mae_leaning"] == pytest.approx(10.0)
    assert (m["tilt_flat_dice"], m["tilt_leaning_dice"], m["tilt_unknown"]) == (1, 1, 0)


def test_occluded_dice_and_unknown_tilts_are_left_out_and_unknowns_counted() -> None:
    labels = _labels([0.0, 40.0, 1.0], occluded=[False, True, False])
    tilt = TiltErrors()
    tilt.add([4.0, 0.0, float("nan")], labels.xyxy, labels)
    m = tilt.metrics()
    assert m["tilt_mae_flat"] == pytest.approx(4.0) and m["tilt_mae_leaning"] is None
    assert (m["tilt_flat_dice"], m["tilt_leaning_dice"], m["tilt_unknown"]) == (1, 0, 1)


def test_an_image_without_tilt_labels_adds_nothing() -> None:
    labels = ImageLabels(np.array([[0, 0, 10, 10]], np.float32), np.zeros(1, np.int64))
    tilt = TiltErrors()
    tilt.add([7.0], labels.xyxy, labels)
    assert tilt.metrics()["tilt_mae_flat"] is None and tilt.metrics()["tilt_flat_dice"] == 0


@given(
    st.lists(st.tuples(st.floats(0, 60), st.floats(0, 60)), min_size=1, max_size=6),
    st.lists(st.tuples(st.floats(0, 60), st.floats(0, 60)), min_size=1, max_size=6),
)
def test_merging_two_folders_is_scoring_both_in_one(
    first: list[tuple[float, float]], second: list[tuple[float, float]]
) -> None:
    def scored(*images: list[tuple[float, float]]) -> TiltErrors:
        tilt = TiltErrors()
        for dice in images:
            labels = _labels([truth for truth, _ in dice])
            tilt.add([read for _, read in dice], labels.xyxy, labels)
        return tilt

    merged = scored(first)
    merged.merge(scored(second))
    together = scored(first, second)
    for key, value in together.metrics().items():
        assert merged.metrics()[key] == (value if value is None else pytest.approx(value))


def _fake_pose_net(path: Path) -> Path:
    """A "pose network": the up-axis in the ray's frame = (mean R, mean G, mean B - 1) of the crop."""
    graph = _linear_on_mean_planes("fake_pose", np.eye(3, dtype=np.float32), np.array([0, 0, -1], np.float32), "n")
    return _save(graph, path, {"names": json.dumps(list(POSE_NAMES)), "crop_size": "64", "crop_context": "0.15"})


def test_cli_reports_the_pose_networks_tilt_error_on_the_dice_it_found(
    tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path / "set")
    model = _fake_pose_net(tmp_path / "pose.onnx")
    assert main([str(root), "--models", str(fake_model_dir), "--json", "--pose-model", str(model)]) == 0
    m = json.loads(capsys.readouterr().out)["folders"][str(root)]
    # Only b.png's sidecar gives tilts: its flat die (0 deg) and its leaning one (27.5 deg), both found.
    assert (m["tilt_flat_dice"], m["tilt_leaning_dice"], m["tilt_unknown"]) == (1, 1, 0)
    # The same network on the same boxes under the sidecar tray's vertical, measured directly.
    image = root / "images" / "b.png"
    frame = load_image(image)
    labels = load_labels(image, 128, 128)
    assert labels.tray is not None
    outline = sidecar_outline(labels.tray, 0.0, image.name)
    boxes = np.array([[24, 24, 40, 40], [72, 72, 88, 88]], np.float32)
    corners = outline.vertical_corners
    assert corners is not None
    direct = PoseNet(model)(frame, boxes, upright_view(corners, (128, 128))).tilt_deg
    assert m["tilt_mae_flat"] == pytest.approx(abs(direct[0] - 0.0), abs=1e-4)
    assert m["tilt_mae_leaning"] == pytest.approx(abs(direct[1] - 27.5), abs=1e-4)
    assert main([str(root), "--models", str(fake_model_dir), "--pose-model", str(model)]) == 0
    assert "tilt flat" in capsys.readouterr().out


def test_without_a_pose_model_there_are_no_tilt_figures(
    tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path / "set")
    assert main([str(root), "--models", str(fake_model_dir), "--json"]) == 0
    assert "tilt_mae_flat" not in json.loads(capsys.readouterr().out)["folders"][str(root)]
    assert main([str(root), "--models", str(fake_model_dir)]) == 0
    assert "tilt flat" not in capsys.readouterr().out


def test_a_missing_or_wrong_pose_model_is_a_clear_error(
    tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path / "set")
    assert main([str(root), "--models", str(fake_model_dir), "--pose-model", str(tmp_path / "none.onnx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "none.onnx" in err
    # The face classifier is no pose network: its outputs are faces, not an up-axis.
    classifier = fake_model_dir / "face_classifier.onnx"
    assert main([str(root), "--models", str(fake_model_dir), "--pose-model", str(classifier)]) == 2
    assert "up_x" in capsys.readouterr().err
