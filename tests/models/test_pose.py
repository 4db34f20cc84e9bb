"""Training the pose network: targets that turn with their crops; a tiny run trains, exports, loads, measures."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from farklecam.datasets.synthetic.dataset import write_scene
from farklecam.datasets.synthetic.scene import generate_scene
from farklecam.datasets.training_sets import read_synthetic_frame
from farklecam.models.bank.crop_bank import BANK_SIZE, turned_centres
from farklecam.models.training.pose import build_pose_bank, main, pose_truth
from farklecam.vision.crops import CROP_SIZE, extract_crops
from farklecam.vision.pose.tilt import turn_in_ray_frame
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import ModelLoadError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


@settings(max_examples=25, deadline=None)
@given(direction=st.floats(0, 360), angle=st.floats(0, 360), mirror=st.booleans())
def test_a_target_turns_and_mirrors_as_its_crop_does(direction: float, angle: float, mirror: bool) -> None:
    """A spot drawn along a target's (x, y) lands where the turned target points."""
    d = np.radians(direction)
    target = np.array([[np.cos(d), np.sin(d), 0.3]])
    crop = np.zeros((1, BANK_SIZE, BANK_SIZE, 3), np.uint8)
    c = (BANK_SIZE - 1) / 2
    cv2.circle(crop[0], (round(c + 20 * target[0, 0]), round(c + 20 * target[0, 1])), 3, (255, 255, 255), -1)
    turned = turned_centres(crop, [angle])[0]
    if mirror:
        turned = turned[:, ::-1]
    ys, xs = np.nonzero(turned[..., 0] > 128)
    seen = np.array([xs.mean(), ys.mean()]) - (CROP_SIZE - 1) / 2
    want = turn_in_ray_frame(target, [angle], [mirror])[0]
    assert want[2] == pytest.approx(0.3)
    cos = float(seen @ want[:2] / np.linalg.norm(seen) / np.linalg.norm(want[:2]))
    assert cos > 0.99


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pose_scenes")
    for i in range(4):
        write_scene(out, f"s9_{i:06d}", generate_scene(9, i, 320, 240, 1.0, 1))
    return out


def test_the_bank_holds_each_visible_die_with_its_up_axis_in_its_rays_frame(scenes: Path) -> None:
    frames = [f for p in sorted((scenes / "images").glob("*.jpg")) if (f := read_synthetic_frame(p)) is not None]
    bank = build_pose_bank(frames, flat_copies=1, lean_copies=2)
    truths = [pose_truth(f) for f in frames]
    visible = [(~t.occluded).sum() + (~t.occluded & (t.tilt_deg > 15)).sum() for t in truths]
    assert len(bank.targets) == sum(visible) and bank.crops.shape[1:] == (BANK_SIZE, BANK_SIZE, 3)
    np.testing.assert_allclose(np.linalg.norm(bank.targets, axis=1), 1.0, atol=1e-4)
    assert (bank.targets[:, 2] < 0).all()  # every up-axis faces the camera
    assert (bank.tilts > 15).any()


def test_a_scene_without_pose_labels_is_refused(scenes: Path, tmp_path: Path) -> None:
    image = sorted((scenes / "images").glob("*.jpg"))[0]
    frame = read_synthetic_frame(image)
    assert frame is not None
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    copy = tmp_path / "images" / image.name
    copy.write_bytes(image.read_bytes())
    (tmp_path / "labels" / f"{image.stem}.txt").write_text((scenes / "labels" / f"{image.stem}.txt").read_text())
    sidecar = json.loads((scenes / "labels" / f"{image.stem}.json").read_text())
    for die in sidecar["dice"]:
        del die["up_cam"]
    (tmp_path / "labels" / f"{image.stem}.json").write_text(json.dumps(sidecar))
    old = read_synthetic_frame(copy)
    assert old is not None
    with pytest.raises(ValueError, match="no pose labels"):
        pose_truth(old)


def test_a_tiny_run_trains_exports_loads_and_measures(
    scenes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_network: list[object]
) -> None:
    from farklecam.vision.pose.net import PoseNet

    out = tmp_path / "pose" / "pose_net.onnx"
    assert main(["train", "--synthetic", str(scenes), "--out", str(out), "--steps", "3", "--batch", "8"]) == 0
    assert (
        out.exists() and (tmp_path / "pose" / "pose_bank.npz").exists() and (tmp_path / "pose" / "pose_net.pt").exists()
    )
    net = PoseNet(out)
    image = cv2.imread(str(sorted((scenes / "images").glob("*.jpg"))[0]))
    boxes = np.array([[10, 10, 40, 40], [100, 100, 130, 128]], np.float32)
    pose = net(image, boxes)
    assert pose.up_axes.shape == (2, 3) and pose.tilt_deg.shape == (2,)
    np.testing.assert_allclose(np.linalg.norm(pose.up_axes, axis=1), 1.0, atol=1e-6)
    # Read under quarter turns and turned back, the answer turns exactly as its crop does; one view does not.
    crops = extract_crops(image, boxes, net.crop_size, net.crop_context)
    quarter = np.ascontiguousarray(np.rot90(crops, k=1, axes=(1, 2)))
    for views, exact in ((4, True), (8, True), (1, False)):
        reader = PoseNet(out, views=views)
        turned = turn_in_ray_frame(reader.read_crops(crops), [90.0, 90.0], [False, False])
        assert np.allclose(reader.read_crops(quarter), turned, atol=1e-5) == exact, views
    with pytest.raises(ValueError, match="views"):
        PoseNet(out, views=3)
    capsys.readouterr()
    assert main(["measure", str(scenes), "--model", str(out)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert set(rows) == {"truth", "tray", "none"} and rows["tray"]["flat_dice"] + rows["tray"]["leaning_dice"] > 0
    assert rows["truth"]["dice_without_normal"] == 0  # the true normal is always known: the network's own error
    detector = Path(__file__).resolve().parents[2] / "models" / "die_detector.onnx"
    assert main(["measure", str(scenes), "--flat", "--model", str(out), "--detector", str(detector)]) == 0
    flat = json.loads(capsys.readouterr().out)
    assert flat["dice"] >= 1 and flat["called_cocked"] + flat["dice_without_normal"] <= flat["dice"]
    assert main(["measure", str(scenes), "--flat", "--model", str(out)]) == 2
    assert "--detector" in capsys.readouterr().err
    assert not no_network


def test_a_model_with_other_outputs_is_refused(tmp_path: Path) -> None:
    from farklecam.models.training.facenet import FaceNet, export_facenet
    from farklecam.vision.pose.net import PoseNet

    path = export_facenet(FaceNet(2), tmp_path / "m.onnx", "0", names=["flat", "cocked"])
    with pytest.raises(ModelLoadError, match="up_x"):
        PoseNet(path)


def test_augment_can_keep_left_and_right_with_the_same_draws() -> None:
    import torch
    from farklecam.models.training.facenet import augment

    x = torch.full((64, 3, 16, 16), 0.1)
    x[..., :8] = 0.9  # the left half bright
    default = augment(x, torch.Generator().manual_seed(4), flip_vertical=False)
    kept = augment(x, torch.Generator().manual_seed(4), flip_vertical=False, flip_horizontal=False)
    flipped = torch.rand(64, generator=torch.Generator().manual_seed(4)) < 0.5  # augment's first draw
    assert 0 < int(flipped.sum()) < 64

    def left_brighter(t: torch.Tensor) -> torch.Tensor:
        return t[..., :8].mean(dim=(1, 2, 3)) > t[..., 8:].mean(dim=(1, 2, 3))

    # Colour inversion swaps both alike; only the mirror may tell them apart, and only where it was drawn.
    assert torch.equal(left_brighter(default) != left_brighter(kept), flipped)
