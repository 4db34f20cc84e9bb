"""Training the cocked test: the threshold choice, and a tiny run that trains, exports, loads and calibrates offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.models.training.cocked import REAL_FLAT_COPIES, BankRecipe, best_threshold, build_cocked_bank
from farklecam.vision.crops import CROP_CONTEXT

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def f1_at(probs: np.ndarray, truth: np.ndarray, t: float) -> float:
    called = probs >= t
    tp = float((called & truth).sum())
    recall, precision = tp / max(1.0, truth.sum()), tp / max(1.0, called.sum())
    return 2 * recall * precision / max(1e-9, recall + precision)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_the_chosen_threshold_has_the_best_f1_of_the_grid(dice: list[tuple[float, bool]]) -> None:
    probs = np.array([p for p, _ in dice], np.float32)
    truth = np.array([t for _, t in dice], bool)
    threshold, scores = best_threshold(probs, truth)
    grid = np.round(np.arange(0.05, 0.96, 0.05), 2).tolist()  # Python floats, as the reader holds a threshold
    assert threshold in grid
    assert scores["f1"] == pytest.approx(f1_at(probs, truth, threshold))
    assert all(scores["f1"] >= f1_at(probs, truth, t) - 1e-9 for t in grid)


def test_a_separable_set_gets_a_threshold_between_the_classes() -> None:
    probs = np.array([0.05, 0.1, 0.2, 0.7, 0.8], np.float32)
    truth = np.array([False, False, False, True, True])
    threshold, scores = best_threshold(probs, truth)
    assert 0.2 < threshold <= 0.7 and scores["f1"] == 1.0


def _photo(tmp_path: Path, name: str, boxes: np.ndarray, size: tuple[int, int] = (320, 240)) -> Path:
    """A grey picture with a white square drawn at each box: enough for the bank to cut."""
    import cv2

    image = np.full((size[1], size[0], 3), 90, np.uint8)
    for x1, y1, x2, y2 in boxes.astype(int):
        cv2.rectangle(image, (x1, y1), (x2, y2), (235, 235, 235), -1)
    path = tmp_path / name
    cv2.imwrite(str(path), image)
    return path


def test_real_flat_dice_are_banked_only_from_straight_down_sources(tmp_path: Path) -> None:
    from farklecam.datasets.training_sets import Frame
    from farklecam.vision.pose.upright import straight_down_view

    boxes = np.array([[20, 20, 50, 50], [150, 100, 180, 130], [240, 200, 270, 230]], np.float32)
    byler = Frame("byler_d6", _photo(tmp_path, "b.jpg", boxes), np.array([0, 3, 5]), boxes, (320, 240))
    webcam = Frame("matteop65_webcam", _photo(tmp_path, "m.jpg", boxes), np.array([1, 1, 1]), boxes, (320, 240))
    bank = build_cocked_bank([byler, webcam])
    assert len(bank.labels) == REAL_FLAT_COPIES * len(boxes)  # the webcam's vertical is unknown: none of its dice
    assert not bank.labels.any()  # every real die lies flat
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    expected = np.sin(straight_down_view((320, 240)).view_tilt(centres))
    assert np.allclose(np.sort(np.unique(bank.sines)), np.sort(expected), atol=1e-6)
    with pytest.raises(ValueError, match="known vertical"):
        build_cocked_bank([webcam])
    once = build_cocked_bank([byler, webcam], recipe=BankRecipe(real_flat_copies=1))
    assert len(once.labels) == len(boxes) and np.allclose(np.sort(once.sines), np.sort(expected), atol=1e-6)


def test_misplaced_copies_are_added_and_leave_the_other_copies_as_they_were(tmp_path: Path) -> None:
    from farklecam.datasets.training_sets import Frame

    boxes = np.array([[20, 20, 50, 50], [60, 24, 90, 54], [240, 200, 270, 230]], np.float32)
    byler = Frame("byler_d6", _photo(tmp_path, "b.jpg", boxes), np.array([0, 3, 5]), boxes, (320, 240))
    plain = build_cocked_bank([byler], seed=3)
    misplaced = build_cocked_bank([byler], seed=3, recipe=BankRecipe(misplaced=True))
    n = len(plain.labels)
    assert len(misplaced.labels) == n + (REAL_FLAT_COPIES // 2) * len(boxes)  # half as many copies again
    np.testing.assert_array_equal(misplaced.crops[:n], plain.crops)  # their own random stream
    np.testing.assert_array_equal(misplaced.sines[n:], np.tile(plain.sines[: len(boxes)], REAL_FLAT_COPIES // 2))
    around_labels = plain.crops[: len(boxes)].astype(np.int16)
    assert all(np.abs(misplaced.crops[n + i].astype(np.int16) - around_labels[i % 3]).mean() > 1 for i in range(6))


def test_a_neighbour_plane_rides_with_each_crop_and_marks_only_the_other_dice(tmp_path: Path) -> None:
    from farklecam.datasets.training_sets import Frame

    # Two touching dice and one alone; a detector that found only the first two, its boxes a little off.
    boxes = np.array([[20, 20, 50, 50], [52, 20, 82, 50], [240, 200, 270, 230]], np.float32)
    byler = Frame("byler_d6", _photo(tmp_path, "b.jpg", boxes), np.array([0, 3, 5]), boxes, (320, 240))
    detected = [{byler.path: boxes[:2] + np.float32([2, 1, 3, 2])}]
    plain = build_cocked_bank([byler], seed=2, detected=detected)
    marked = build_cocked_bank([byler], seed=2, detected=detected, recipe=BankRecipe(neighbours=True))
    assert (plain.neighbours, marked.neighbours) == (False, True)
    np.testing.assert_array_equal(marked.crops[..., :3], plain.crops)  # the same crops, one plane more
    planes = marked.crops[..., 3].reshape(REAL_FLAT_COPIES, len(boxes), *marked.crops.shape[1:3])
    assert planes[:, 2].max() == 0  # the die alone has no neighbour in any copy
    side = planes.shape[-1]
    # The first die's neighbour lies to its right, the second's to its left, in every copy.
    assert planes[:, 0, :, side // 2 :].mean() > 50 and planes[:, 0, :, : side // 3].max() == 0
    assert planes[:, 1, :, : side // 2].mean() > 50 and planes[:, 1, :, 2 * side // 3 :].max() == 0


@pytest.mark.parametrize("copies", [{"flat_copies": 0}, {"real_flat_copies": -1}])
def test_a_recipe_banks_at_least_one_copy_of_each_flat_die(copies: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        BankRecipe(**copies)
    assert BankRecipe(neighbours=True).planes == 5 and BankRecipe().planes == 4


def test_several_detectors_take_turns_frame_by_frame(tmp_path: Path) -> None:
    from farklecam.datasets.training_sets import Frame

    boxes = np.array([[20, 20, 50, 50], [150, 100, 180, 130]], np.float32)
    frames = [
        Frame("byler_d6", _photo(tmp_path, f"{i}.jpg", boxes), np.array([0, 3]), boxes, (320, 240)) for i in range(2)
    ]
    near = {f.path: boxes + np.float32([-4, -4, 4, 4]) for f in frames}  # a looser box around each die
    far = {f.path: boxes + np.float32([6, 6, 6, 6]) for f in frames}  # a shifted one

    def around(detected: list[dict[Path, np.ndarray]]) -> np.ndarray:
        bank = build_cocked_bank(frames, detected=detected, recipe=BankRecipe(real_flat_copies=2))
        return bank.crops.reshape(len(frames), 2, len(boxes), *bank.crops.shape[1:])[:, 1]  # frame, copy 1

    both, only_near, only_far = around([near, far]), around([near]), around([far])
    assert not np.array_equal(only_near, only_far)  # the two detectors' crops differ
    np.testing.assert_array_equal(both[0], only_near[0])  # the first frame through the first detector
    np.testing.assert_array_equal(both[1], only_far[1])  # the second through the second
    labelled = build_cocked_bank(frames, recipe=BankRecipe(real_flat_copies=2)).crops
    assert not np.array_equal(labelled[len(boxes) : 2 * len(boxes)], only_near[0])  # no detector: labelled boxes


def test_training_refuses_real_dice_whose_vertical_is_unknown(tmp_path: Path) -> None:
    from farklecam.models.training.cocked import main

    with pytest.raises(SystemExit) as exc:
        main(
            [
                "train",
                "--synthetic",
                str(tmp_path),
                "--out",
                str(tmp_path / "c.onnx"),
                "--real-flat",
                "matteop65_webcam",
            ]
        )
    assert exc.value.code == 2


@pytest.mark.train
def test_training_refuses_a_detector_that_is_not_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from farklecam.models.training.cocked import main

    with pytest.raises(SystemExit) as exc:
        main(["train", "--synthetic", str(tmp_path), "--out", str(tmp_path / "c.onnx"), "--detector", "nowhere.onnx"])
    assert exc.value.code == 2 and "no detector at nowhere.onnx" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value"), [("--flat-copies", "0"), ("--real-flat-copies", "-2"), ("--flat-copies", "x")]
)
def test_training_refuses_copies_outside_one_to_64(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    from farklecam.models.training.cocked import main

    with pytest.raises(SystemExit) as exc:
        main(["train", "--synthetic", str(tmp_path), "--out", str(tmp_path / "c.onnx"), flag, value])
    assert exc.value.code == 2 and flag in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--head-grid", "3", "does not split the 4x4 feature map"),
        ("--head-grid", "0", "outside 1..8"),
        ("--context", "1.5", "outside 0..1"),
    ],
)
@pytest.mark.train
def test_training_refuses_a_head_grid_or_context_that_cannot_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    pytest.importorskip("torch")
    from farklecam.models.training.cocked import main

    with pytest.raises(SystemExit) as exc:
        main(["train", "--synthetic", str(tmp_path), "--out", str(tmp_path / "c.onnx"), flag, value])
    assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.train
def test_a_tiny_run_trains_exports_and_calibrates_offline(
    tmp_path: Path, no_network: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort

    from farklecam.datasets.synthetic.__main__ import main as generate
    from farklecam.models.training.cocked import main
    from farklecam.vision.pose.cocked import CockedTest

    scenes = tmp_path / "scenes"
    assert generate(["--out", str(scenes), "--count", "4", "--seed", "5", "--size", "160x120", "--lean-rate", "1"]) == 0
    out = tmp_path / "cocked_test.onnx"
    regularised = ["--weight-decay", "0.05", "--mixup", "0.2"]
    assert (
        main(
            [
                "train",
                "--synthetic",
                str(scenes),
                "--out",
                str(out),
                "--steps",
                "2",
                "--width-scale",
                "0.5",
                *regularised,
            ]
        )
        == 0
    )
    plain = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (plain["config"]["weight_decay"], plain["config"]["mixup"]) == (0.05, 0.2)
    first_conv = next(t for t in onnx.load(str(out)).graph.initializer if len(t.dims) == 4)
    assert list(first_conv.dims) == [8, 4, 3, 3]  # half of the first block's 16 channels, over RGB + steepness
    test = CockedTest(out)
    assert test.threshold == 0.5
    assert main(["calibrate", str(scenes), "--model", str(out), "--write"]) == 0
    assert 0.0 < CockedTest(out).threshold < 1.0
    assert not CockedTest(out).undo_foreshortening
    squeezed = tmp_path / "squeezed.onnx"
    args = ["train", "--synthetic", str(scenes), "--out", str(squeezed), "--steps", "2", "--width-scale", "0.5"]
    extra = ["--undo-foreshortening", "--misplaced-boxes", "--head-grid", "2", "--context", "0.3"]
    extra += ["--neighbours", "--aux"]
    assert main([*args, *extra]) == 0
    assert CockedTest(squeezed).undo_foreshortening  # the run-time test squeezes as training did
    assert (CockedTest(squeezed).crop_context, CockedTest(out).crop_context) == (0.3, CROP_CONTEXT)
    assert (CockedTest(squeezed).neighbours, CockedTest(out).neighbours) == (True, False)  # five planes in
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert record["config"]["misplaced_boxes"] and not plain["config"]["misplaced_boxes"]
    assert (record["config"]["head_grid"], plain["config"]["head_grid"]) == (2, 1)
    assert record["config"]["crop_context"] == 0.3 and record["config"]["neighbour_plane"]
    head = next(t for t in onnx.load(str(squeezed)).graph.initializer if len(t.dims) == 2)
    # Half of the last block's 128 channels, once per cell of a 2x2 grid, into two logits and two taught targets...
    assert list(head.dims) == [4, 64 * 4]
    assert record["config"]["aux_targets"] and plain["config"]["aux_targets"] is None
    assert (record["config"]["weight_decay"], record["config"]["mixup"]) == (1e-4, 0.0)  # the classifiers' defaults
    with pytest.raises(SystemExit):
        main([*args, "--aux", "--mixup", "0.2"])
    assert "cannot be combined with --aux" in capsys.readouterr().err
    crops = np.zeros((3, 5, 64, 64), np.float32)
    logits = ort.InferenceSession(str(squeezed)).run(None, {"crops": crops})[0]
    assert logits.shape == (3, 2)  # ...of which the export gives the logits alone
    assert record["data"]["crops"] > plain["data"]["crops"]  # each die banked half as many times again
    assert no_network == []


def test_taught_targets_ride_with_each_crop_and_agree_with_its_label(tmp_path: Path) -> None:
    from farklecam.datasets.synthetic.__main__ import main as generate
    from farklecam.datasets.training_sets import Frame, synthetic_frames
    from farklecam.models.training.cocked import AUX_TILT_SCALE_DEG, die_targets

    scenes = tmp_path / "scenes"
    assert generate(["--out", str(scenes), "--count", "6", "--seed", "3", "--size", "160x120", "--lean-rate", "1"]) == 0
    frames = synthetic_frames(scenes)
    plain = build_cocked_bank(frames, seed=1)
    taught = build_cocked_bank(frames, seed=1, recipe=BankRecipe(aux=True))
    assert plain.aux is None and taught.aux is not None and taught.aux.shape == (len(taught.labels), 2)
    assert np.array_equal(plain.crops, taught.crops)  # teaching more changes nothing of what is banked
    assert taught.labels.any() and not taught.labels.all()
    tilt, hidden = taught.aux[:, 0] * AUX_TILT_SCALE_DEG, taught.aux[:, 1]
    assert np.array_equal(tilt > 15.0, taught.labels == 1)  # a crop is labelled cocked exactly where its die leans
    assert ((hidden >= 0) & (hidden < 1)).all()
    boxes = np.array([[20, 20, 50, 50]], np.float32)
    real = Frame("byler_d6", _photo(tmp_path, "b.jpg", boxes), np.array([2]), boxes, (320, 240))
    assert not die_targets(real).any()  # a real straight-down die lies flat and in view
    n = len(frames[0].boxes) + 1  # one die more than its sidecar lists
    stranger = Frame("synthetic", frames[0].path, np.zeros(n, np.int64), np.zeros((n, 4), np.float32), (160, 120))
    with pytest.raises(ValueError, match=f"does not list its {n} dice"):
        die_targets(stranger)
