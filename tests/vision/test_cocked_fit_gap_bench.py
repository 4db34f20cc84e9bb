"""``bench/cocked_fit_gap.py`` reads every visible labelled die once, in each part of each folder."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from cocked_fit_gap import SHEET_COLUMNS, TILE, main, write_sheet  # noqa: E402  (a script folder, not a package)

from farklecam.datasets.synthetic.mesh import COCKED_TILT_DEG  # noqa: E402
from farklecam.datasets.training_sets import read_synthetic_frame, synthetic_split  # noqa: E402
from farklecam.datasets.yolo import (  # noqa: E402
    COCKED_CLASS,
    find_images,
    read_sidecar,
)
from farklecam.models.training.cocked import labelled_box_probs, scene_view  # noqa: E402
from farklecam.vision.pose.cocked import CockedTest  # noqa: E402
from farklecam.vision.reader import default_model_dir  # noqa: E402


def test_every_visible_labelled_die_is_read_once_with_its_truth(leaning_scenes: Path) -> None:
    paths = sorted(find_images(leaning_scenes))
    visible = leaning = 0
    for path in paths:
        frame = read_synthetic_frame(path)
        assert frame is not None
        scene = scene_view(path, frame.size, len(frame.boxes))
        assert scene is not None  # every generated scene has its tray outline
        seen = ~scene[1]
        visible += int(seen.sum())
        leaning += int((frame.classes == COCKED_CLASS)[seen].sum())
    reads = labelled_box_probs(CockedTest(default_model_dir() / "cocked_test.onnx"), paths)
    probs, truth = reads.probs, reads.truth
    assert len(probs) == len(truth) == len(reads.boxes) == len(reads.paths) == len(reads.index) == visible > 0
    assert int(truth.sum()) == leaning > 0
    assert ((probs >= 0) & (probs <= 1)).all() and np.unique(probs).size > 1
    for path, die, lean in zip(reads.paths, reads.index, truth, strict=True):  # each row names its sidecar die
        assert (read_sidecar(path)["dice"][die]["tilt_deg"] > COCKED_TILT_DEG) == lean


def test_a_sheet_holds_one_tile_per_die_and_none_is_drawn_for_no_dice(leaning_scenes: Path, tmp_path: Path) -> None:
    reads = labelled_box_probs(
        CockedTest(default_model_dir() / "cocked_test.onnx"), sorted(find_images(leaning_scenes))
    )
    write_sheet(reads, np.arange(SHEET_COLUMNS + 1), tmp_path / "nine.jpg")
    sheet = cv2.imread(str(tmp_path / "nine.jpg"))
    assert sheet.shape == (2 * TILE, SHEET_COLUMNS * TILE, 3)  # nine tiles: a full row and one more
    assert sheet[TILE:, 2 * TILE :].max() < 16  # the second row's padding is black
    write_sheet(reads, np.zeros(0, np.intp), tmp_path / "none.jpg")
    assert not (tmp_path / "none.jpg").exists()


def test_the_table_has_a_row_per_folder_and_part(leaning_scenes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train, held = synthetic_split(leaning_scenes)
    assert train and held  # twelve scenes split both ways by file-name hash
    assert main(["--train", str(leaning_scenes), "--calib", str(leaning_scenes), "--limit", "12"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [r[1] for r in rows] == ["trained-on", "held-out", "calibration"]
    dice = {r[1]: int(r[2]) for r in rows}
    assert dice["trained-on"] + dice["held-out"] == dice["calibration"]  # the two parts make the whole folder


def test_a_missing_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--model", str(tmp_path / "none.onnx")])
    assert exit_info.value.code == 2 and "no cocked test at" in capsys.readouterr().err
