from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from farklecam.datasets.yolo import YoloBox, write_labels
from farklecam.models.evaluate.metrics import ImageLabels
from farklecam.models.evaluate.run import format_table, load_labels, main, place
from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader, ReaderConfig

ROOT = Path(__file__).resolve().parents[2]


def _folder(root: Path) -> Path:
    """Two 128x128 images read by the fake models: one right, one with a misread die and a sidecar."""
    (root / "images").mkdir(parents=True)
    frame = np.zeros((128, 128, 3), np.uint8)
    frame[:56, :56] = (0, 0, 255)  # red die "1" at (24, 24, 40, 40); black (cocked) at (72, 72, 88, 88)
    cv2.imwrite(str(root / "images" / "a.png"), frame)
    cv2.imwrite(str(root / "images" / "b.png"), frame)
    right = [YoloBox.from_xyxy(0, [24, 24, 40, 40], 128, 128), YoloBox.from_xyxy(6, [72, 72, 88, 88], 128, 128)]
    wrong = [YoloBox.from_xyxy(4, [26, 26, 38, 38], 128, 128), YoloBox.from_xyxy(6, [72, 72, 88, 88], 128, 128)]
    write_labels(root / "labels" / "a.txt", right)
    write_labels(root / "labels" / "b.txt", wrong)
    sidecar = {
        "dice": [{"status": "ok", "tilt_deg": 0.0}, {"status": "off_tray", "tilt_deg": 27.5}],
        "tray": [[0, 0], [60, 0], [60, 60], [0, 60]],
    }
    (root / "labels" / "b.json").write_text(json.dumps(sidecar))
    return root


def test_load_labels_with_sidecar(tmp_path: Path) -> None:
    root = _folder(tmp_path / "set")
    labels = load_labels(root / "images" / "b.png", 128, 128)
    assert labels.classes.tolist() == [4, 6]
    assert labels.off_tray is not None and labels.off_tray.tolist() == [False, True]
    assert labels.tray is not None and labels.tray.shape == (4, 2)
    assert labels.tilt_deg is not None and labels.tilt_deg.tolist() == [0.0, 27.5]
    plain = load_labels(root / "images" / "a.png", 128, 128)
    assert (
        plain.off_tray is None and plain.tilt_deg is None and plain.xyxy.tolist()[0] == pytest.approx([24, 24, 40, 40])
    )


def test_sidecar_must_match_labels(tmp_path: Path) -> None:
    root = _folder(tmp_path / "set")
    (root / "labels" / "b.json").write_text(json.dumps({"dice": [{"status": "ok"}]}))
    with pytest.raises(ValueError, match="1 dice but 2 label lines"):
        load_labels(root / "images" / "b.png", 128, 128)


def test_cli_json(tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _folder(tmp_path / "set")
    png = tmp_path / "out" / "confusion.png"
    code = main([str(root), "--models", str(fake_model_dir), "--json", "--confusion-png", str(png)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    m = report["folders"][str(root)]
    assert m["images"] == 2 and m["dice"] == 4
    assert m["recall"] == 1.0 and m["precision"] == 1.0
    assert m["face_accuracy"] == 0.75 and m["exact_accuracy"] == 0.5
    assert m["cocked_recall"] == 1.0  # off the tray in b.png, and still known to be cocked
    assert m["cocked_recall_by_lean"] == {"25-35": {"dice": 1, "found": 1, "recall": 1.0}}  # only b.png has tilts
    assert m["off_tray_recall"] == 1.0 and m["off_tray_precision"] == 1.0
    assert m["confusion"]["counts"][4][0] == 1
    assert cv2.imread(m["confusion_png"]) is not None


def test_cli_writes_error_cases(tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _folder(tmp_path / "set")
    errors = tmp_path / "errors"
    assert main([str(root), "--models", str(fake_model_dir), "--errors", str(errors)]) == 0
    capsys.readouterr()
    folder = errors / root.resolve().name
    lines = [json.loads(line) for line in (folder / "errors.jsonl").read_text().splitlines()]
    # Only b.png is wrong: its first die is labelled 5 and read as 1.
    assert [Path(line["image"]).name for line in lines] == ["b.png"]
    (error,) = lines[0]["errors"]
    assert error["kind"] == "wrong" and error["label"] == "5" and error["read"] == "1"
    assert cv2.imread(str(folder / "b.jpg")) is not None and not (folder / "a.jpg").exists()


def test_cli_table(tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _folder(tmp_path / "one"), _folder(tmp_path / "two")
    assert main([str(a), str(b), "--models", str(fake_model_dir), "--confusion-png", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    assert "face acc" in out and "\none " in out and "\nall " in out and "label\\pred" in out
    assert (tmp_path / "c-one.png").exists() and (tmp_path / "c-two.png").exists()


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing")]) == 2
    (tmp_path / "d").mkdir()
    assert main([str(tmp_path / "d"), "--models", str(tmp_path)]) == 2
    assert "die_detector.onnx" in capsys.readouterr().err


def test_format_table_dashes() -> None:
    table = format_table([("x", {"images": 1, "dice": 0, "face_accuracy": None})])
    assert table.splitlines()[1].split()[:4] == ["x", "1", "0", "-"]


def test_examples_layout_labels_below_images(tmp_path: Path) -> None:
    from farklecam.datasets.yolo import label_file

    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "x.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    assert label_file(tmp_path / "x.jpg") == tmp_path / "labels" / "x.txt"
    assert label_file(tmp_path / "images" / "y.jpg") == tmp_path / "labels" / "y.txt"


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="needs the committed models")
def test_no_search_leaves_leaning_dice_to_the_classifier(capsys: pytest.CaptureFixture[str]) -> None:
    """Uncalibrated, the vertical searched in the dice lets the cocked test decide; ``--no-search`` turns that off.

    The classifier alone still calls the example's leaning die cocked, but only just;
    under the searched vertical the cocked test is sure of it.
    """
    frame = load_image(ROOT / "examples" / "tray_cocked.jpg")
    searched = DiceReader().read(frame)
    alone = DiceReader(config=ReaderConfig(vertical_search=False)).read(frame)
    cocked = searched.status == "cocked"
    assert cocked.sum() == 1 and (alone.status == "cocked").tolist() == cocked.tolist()
    assert searched.face_confidence[cocked][0] > alone.face_confidence[cocked][0] + 0.2
    assert main([str(ROOT / "examples"), "--no-tray", "--no-search", "--json"]) == 0
    (stats,) = json.loads(capsys.readouterr().out)["folders"].values()
    assert stats["cocked_recall"] == 1.0 and stats["face_accuracy"] == 1.0


def test_set_changes_one_reader_setting(
    tmp_path: Path, fake_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path / "set")
    runs = {}
    for name, extra in {"default": [], "strict": ["--set", "det_conf=1.0"]}.items():
        assert main([str(root), "--models", str(fake_model_dir), "--json", *extra]) == 0
        runs[name] = json.loads(capsys.readouterr().out)["folders"][str(root)]
    # A detector that must be certain finds none of the fake model's dice.
    assert runs["default"]["recall"] == 1.0 and runs["strict"]["recall"] == 0.0
    with pytest.raises(SystemExit) as exit_info:
        main([str(root), "--set", "face_view=1"])
    assert exit_info.value.code == 2 and "'face_view' is no ReaderConfig field" in capsys.readouterr().err


def test_sidecar_corners_are_labelled_or_clicked_the_same_way_every_run() -> None:
    from farklecam.models.evaluate.run import sidecar_outline

    corners = np.array([[100, 100], [500, 110], [520, 400], [90, 380]], np.float32)
    exact = sidecar_outline(corners, 0.0, "a.jpg")
    assert exact.source == "labelled" and exact.corner_sigma_px == 0.0
    clicked, again, other = (sidecar_outline(corners, 2.0, name) for name in ("a.jpg", "a.jpg", "b.jpg"))
    assert clicked.source == "corners" and clicked.corner_sigma_px == 2.0
    np.testing.assert_array_equal(clicked.polygon, again.polygon)
    assert not np.array_equal(clicked.polygon, other.polygon)
    assert 0 < np.abs(np.sort(clicked.polygon, axis=0) - np.sort(exact.polygon, axis=0)).max() < 12


def test_a_photo_set_in_a_larger_canvas_keeps_its_pixels_and_its_dice() -> None:
    photo = np.full((80, 100, 3), 50, np.uint8)
    photo[10:30, 10:30] = 200
    labels = ImageLabels(np.array([[10, 10, 30, 30], [85, 60, 105, 80]], np.float32), np.array([0, 5]))
    frame, placed = place(photo, labels, (300, 200), 1.0)
    assert frame.shape == (200, 300, 3) and (frame[70:90, 110:130] == 200).all() and frame[0, 0, 0] == 50
    np.testing.assert_allclose(placed.xyxy[0], [110, 70, 130, 90])
    assert placed.occluded is not None and placed.occluded.tolist() == [False, False]


def test_closer_up_the_middle_fills_the_canvas_and_dice_cut_by_it_are_occluded() -> None:
    photo = np.zeros((80, 100, 3), np.uint8)
    labels = ImageLabels(
        np.array([[45, 35, 55, 45], [0, 0, 10, 10], [18, 30, 28, 40]], np.float32), np.array([0, 1, 2])
    )
    frame, placed = place(photo, labels, (100, 80), 2.0)  # the middle half of the photo, twice as large
    assert frame.shape == (80, 100, 3)
    np.testing.assert_allclose(placed.xyxy[0], [40, 30, 60, 50])
    assert placed.classes.tolist() == [0, 2]  # the corner die fell outside; the left one is cut
    assert placed.occluded is not None and placed.occluded.tolist() == [False, True]


@pytest.mark.parametrize("canvas", ["wide", "10x10"])
def test_a_bad_canvas_is_one_clear_line(tmp_path: Path, canvas: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path), "--canvas", canvas])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "--canvas" in err and "Traceback" not in err


def test_a_scale_out_of_range_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--canvas", "640x480", "--scale", "0"]) == 2
    assert "--scale must be between" in capsys.readouterr().err
