"""The face classifier's pieces: box matching, jitter, crop bank and network shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
cv2 = pytest.importorskip("cv2")

from farklecam.datasets.training_sets import Frame  # noqa: E402
from farklecam.models.bank.crop_bank import (  # noqa: E402
    BANK_SIZE,
    CLASSIFIER_NAMES,
    build_bank,
    false_alarms,
    jitter_boxes,
    match_detections,
    negative_boxes,
)
from farklecam.models.training.classifier_config import ClassifierConfig  # noqa: E402
from farklecam.models.training.facenet import (  # noqa: E402
    FACENET_WIDTHS,
    FaceNet,
    export_facenet,
    feature_side,
    grid_problem,
    scaled_widths,
)

pytestmark = pytest.mark.train


@pytest.mark.parametrize(
    ("detected", "expected"),
    [
        ([], [[10, 10, 50, 50]]),  # nothing found: keep the label
        ([[12, 8, 56, 60]], [[12, 8, 56, 60]]),  # a larger detector box around the same die
        ([[100, 100, 140, 140]], [[10, 10, 50, 50]]),  # a detection of another die
        ([[100, 100, 140, 140], [9, 11, 49, 52]], [[9, 11, 49, 52]]),  # the nearest one wins
    ],
)
def test_match_detections(detected: list[list[float]], expected: list[list[float]]) -> None:
    labelled = np.array([[10, 10, 50, 50]], np.float32)
    got = match_detections(labelled, np.array(detected, np.float32).reshape(-1, 4))
    np.testing.assert_allclose(got, np.array(expected, np.float32))


def test_jitter_keeps_boxes_near_the_original() -> None:
    boxes = np.array([[100, 100, 140, 140]] * 500, np.float32)
    out = jitter_boxes(boxes, np.random.default_rng(0), shift=0.06, scale=0.1)
    centres = (out[:, :2] + out[:, 2:]) / 2
    assert out.shape == boxes.shape and (out[:, 2:] > out[:, :2]).all()
    assert np.abs(centres - 120).max() < 40 * 0.06 * 5
    assert 0 < centres.std() < 40 * 0.06 * 2


def test_bank_counts_copies_per_source_and_cocked(tmp_path: Path) -> None:
    image = np.full((120, 160, 3), 90, np.uint8)
    cv2.rectangle(image, (20, 20), (60, 60), (240, 240, 240), -1)
    path = tmp_path / "scene.png"
    cv2.imwrite(str(path), image)
    boxes = np.array([[20, 20, 60, 60], [90, 30, 130, 70]], np.float32)
    frame = Frame("synthetic", path, np.array([3, 6]), boxes, (160, 120))
    config = ClassifierConfig(synth_jitters=2, cocked_jitters=5, background_boxes=0)
    bank = build_bank([frame], config, detected={path: boxes + 2})
    assert bank.crops.shape == (2 + 5, BANK_SIZE, BANK_SIZE, 3)
    assert bank.counts() == {"synthetic": {"4": 2, "cocked": 5}}
    assert len(build_bank([frame], config, jitter=False).labels) == 2


def test_false_alarms_are_detections_touching_no_labelled_die() -> None:
    labelled = np.array([[100, 100, 140, 140]], np.float32)
    detected = np.array(
        [
            [101, 99, 141, 139],  # the die itself
            [135, 100, 175, 140],  # half on the die: ambiguous, not an alarm
            [145, 100, 185, 140],  # within a quarter side of the die: ambiguous too
            [300, 300, 340, 340],  # far from every die
        ],
        np.float32,
    )
    assert false_alarms(labelled, detected, (640, 480)).tolist() == [False, False, False, True]
    # With no labelled die every detection is an alarm.
    assert false_alarms(np.zeros((0, 4), np.float32), detected, (640, 480)).all()


def test_background_patches_are_die_sized_and_clear_of_dice() -> None:
    labelled = np.array([[100, 100, 140, 140], [200, 50, 240, 90]], np.float32)
    rng = np.random.default_rng(0)
    alarms, patches = negative_boxes(labelled, np.zeros((0, 4), np.float32), (320, 240), rng, background=5)
    assert len(alarms) == 0 and len(patches) == 5
    np.testing.assert_allclose(patches[:, 2] - patches[:, 0], 40)
    assert false_alarms(labelled, patches, (320, 240)).all()
    assert (patches[:, :2] >= 0).all() and (patches[:, 2] <= 320).all() and (patches[:, 3] <= 240).all()


def test_bank_adds_false_alarms_and_background_as_not_die(tmp_path: Path) -> None:
    image = np.full((240, 320, 3), 90, np.uint8)
    path = tmp_path / "scene.png"
    cv2.imwrite(str(path), image)
    boxes = np.array([[20, 20, 60, 60]], np.float32)
    frame = Frame("byler_d6", path, np.array([0]), boxes, (320, 240))
    detected = np.array([[21, 20, 61, 60], [250, 150, 290, 190]], np.float32)
    config = ClassifierConfig(real_jitters=2, negative_jitters=3, background_boxes=1)
    bank = build_bank([frame], config, detected={path: detected})
    assert bank.counts() == {"byler_d6": {"1": 2, "not_die": 3 + 1}}
    # An evaluation bank holds the labelled dice only.
    assert build_bank([frame], config, jitter=False, detected={path: detected}).counts() == {"byler_d6": {"1": 1}}


def test_facenet_shapes() -> None:
    model = FaceNet(num_classes=len(CLASSIFIER_NAMES)).eval()
    with torch.no_grad():
        assert model(torch.zeros(3, 3, 64, 64)).shape == (3, len(CLASSIFIER_NAMES))


@pytest.mark.parametrize("scale", [0.5, 1.0, 1.5, 2.0])
def test_a_wider_facenet_keeps_its_shape_and_grows_as_the_square(scale: float) -> None:
    widths = scaled_widths(scale)
    assert widths == tuple(round(f * scale) for f in FACENET_WIDTHS)
    model, base = FaceNet(num_classes=2, widths=widths).eval(), FaceNet(num_classes=2).eval()
    with torch.no_grad():
        assert model(torch.zeros(2, 3, 64, 64)).shape == (2, 2)
    weights = sum(p.numel() for p in model.parameters()) / sum(p.numel() for p in base.parameters())
    assert weights == pytest.approx(scale**2, rel=0.15)  # the 3x3 convolutions dominate


@pytest.mark.parametrize("crop", [32, 48, 64, 65, 96, 128])
def test_feature_side_is_the_last_maps_side(crop: int) -> None:
    with torch.no_grad():
        assert FaceNet(num_classes=2).features(torch.zeros(1, 3, crop, crop)).shape[-1] == feature_side(crop)


@pytest.mark.parametrize(
    ("crop", "grid", "fits"),
    [(64, 1, True), (64, 2, True), (64, 4, True), (64, 3, False), (96, 4, False), (96, 6, True), (64, 0, False)],
)
def test_a_head_grid_must_split_the_last_map(crop: int, grid: int, fits: bool) -> None:
    assert (grid_problem(crop, grid) is None) == fits


def test_a_grid_head_keeps_each_cell_apart_and_exports_as_it_runs(tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    torch.manual_seed(0)
    model = FaceNet(num_classes=2, in_channels=4, head_grid=4).eval()
    assert model.head.in_features == FACENET_WIDTHS[-1] * 16  # one weight per cell of the 4x4 map, not per channel
    x = torch.rand(3, 4, 64, 64)
    with torch.no_grad():
        expected = model(x).numpy()
        # Swapping the crop's top and bottom halves changes what a grid head reads (it knows where things are).
        assert not np.allclose(model(torch.cat([x[..., 32:, :], x[..., :32, :]], dim=2)).numpy(), expected)
    out = export_facenet(model, tmp_path / "grid.onnx", "test", names=["flat", "cocked"], channels=4)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"crops": x.numpy()})[0], expected, rtol=1e-4, atol=1e-5)


def test_planes_flip_with_their_crops_and_leave_the_colours_as_they_were() -> None:
    from farklecam.models.training.facenet import augment

    x = torch.rand(16, 3, 8, 8)
    planes = torch.zeros(16, 1, 8, 8)
    planes[..., :4] = 1.0  # marks the left half
    plain = augment(x, torch.Generator().manual_seed(4), flip_vertical=False)
    both = augment(x, torch.Generator().manual_seed(4), flip_vertical=False, planes=planes)
    assert both.shape == (16, 4, 8, 8)
    torch.testing.assert_close(both[:, :3], plain)  # the same draws with or without planes
    # A crop flipped left to right has its plane flipped too: then its mark lies on the right.
    flipped = both[:, 3, :, 4:].sum(dim=(1, 2)) > 0
    assert 0 < int(flipped.sum()) < 16
    assert torch.equal(both[:, 3].sum(dim=(1, 2)), planes[:, 0].sum(dim=(1, 2)))  # never blurred nor noised
