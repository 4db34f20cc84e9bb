"""``farklecam read``: the committed models on the bundled examples, bad files reported per file, outputs."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import cv2
import pytest

from farklecam.service.cli import main
from farklecam.service.usecases.report import NOT_STRAIGHT_DOWN
from farklecam.vision.reader import CLASSIFIER_FILE, DETECTOR_FILE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
pytestmark = pytest.mark.skipif(
    not ((ROOT / "models" / DETECTOR_FILE).exists() and (ROOT / "models" / CLASSIFIER_FILE).exists()),
    reason="the trained models are not committed",
)


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def labelled_ok_faces(name: str) -> list[int]:
    dice = json.loads((EXAMPLES / "labels" / f"{name}.json").read_text())["dice"]
    return sorted(d["face"] for d in dice if d["status"] == "ok")


def test_the_bundled_example_is_read_scored_and_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(EXAMPLES / "tray_ok.jpg"), "--json", "--out", str(tmp_path)]) == 0
    [result] = json_lines(capsys.readouterr().out)
    assert sorted(result["reading"]["faces"]) == labelled_ok_faces("tray_ok")  # type: ignore[arg-type]
    assert result["reading"]["rethrow"] == 0 and result["advice"]["keep"] == [5, 5, 5]  # type: ignore[index]
    assert {d["status"] for d in result["reading"]["dice"]} == {"ok"}  # type: ignore[union-attr]
    drawn = cv2.imread(str(result["annotated"]))
    assert drawn is not None and drawn.shape == cv2.imread(str(EXAMPLES / "tray_ok.jpg")).shape


def test_a_camera_said_to_look_straight_down_reads_a_near_overhead_picture_alike(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """tray_ok's camera is 2.7 degrees off straight down: the cocked test, now run, leaves its flat dice ok."""
    assert main(["read", str(EXAMPLES / "tray_ok.jpg"), "--json", "--straight-down"]) == 0
    [result] = json_lines(capsys.readouterr().out)
    assert sorted(result["reading"]["faces"]) == labelled_ok_faces("tray_ok")  # type: ignore[arg-type]
    assert {d["status"] for d in result["reading"]["dice"]} == {"ok"}  # type: ignore[union-attr]


def test_bad_files_are_reported_one_by_one_and_the_batch_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.jpg").write_text("not a picture")
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "cut.jpg").write_bytes((EXAMPLES / "tray_ok.jpg").read_bytes()[:300])
    shutil.copy(EXAMPLES / "tray_ok.jpg", tmp_path / "good.jpg")
    status = main(["read", str(tmp_path), str(tmp_path / "missing.jpg"), "--json"])
    results = {Path(str(r["image"])).name: r for r in json_lines(capsys.readouterr().out)}
    assert status == 1
    assert set(results) == {"notes.jpg", "empty.png", "cut.jpg", "good.jpg", "missing.jpg"}
    assert sorted(results["good.jpg"]["reading"]["faces"]) == labelled_ok_faces("tray_ok")  # type: ignore[arg-type]
    for bad in ("notes.jpg", "empty.png", "cut.jpg", "missing.jpg"):
        assert "error" in results[bad] and "reading" not in results[bad], results[bad]
    assert "truncated" in str(results["cut.jpg"]["error"]) and "empty" in str(results["empty.png"]["error"])


def test_an_error_names_its_file_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.jpg"
    assert main(["read", str(missing)]) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{missing}: ERROR ") and line.count(str(missing)) == 1, line


@pytest.mark.parametrize("inside", [[], ["notes.txt"]])
def test_a_folder_with_nothing_to_read_is_one_clear_line_and_exit_2(
    tmp_path: Path, inside: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for name in inside:
        (tmp_path / name).write_text("no picture here")
    assert main(["read", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "no image or video in this folder" in captured.err and "Traceback" not in captured.err


def test_an_empty_folder_beside_photos_is_reported_in_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["read", str(tmp_path), str(EXAMPLES / "tray_ok.jpg"), "--json"]) == 1
    results = json_lines(capsys.readouterr().out)
    assert "no image or video" in str(results[0]["error"]) and "reading" in results[1]


@pytest.mark.parametrize("corners", ["0,0,0,0,0,0,0,0", "0,0,10,10,20,20,30,30", "1,2,3", "a,b,c,d,e,f,g,h"])
def test_tray_corners_that_outline_no_tray_are_one_clear_line_and_exit_2(
    corners: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["read", str(EXAMPLES / "tray_ok.jpg"), "--tray", corners]) == 2
    err = capsys.readouterr().err
    assert err.startswith("farklecam: error: --tray") and err.count("\n") == 1 and "Traceback" not in err


def test_csv_rows_and_one_camera_for_a_batch(capsys: pytest.CaptureFixture[str]) -> None:
    photos = [str(EXAMPLES / f"{name}.jpg") for name in ("tray_cocked", "tray_ok", "tray_cocked")]
    assert main(["read", *photos, "--csv", "--fixed-camera"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [Path(r["image"]).name for r in rows] == ["tray_cocked.jpg", "tray_ok.jpg", "tray_cocked.jpg"]
    assert sorted(map(int, rows[1]["faces"].split())) == labelled_ok_faces("tray_ok")
    assert rows[0]["rethrow"] == "1" and rows[1]["keep"] == "5 5 5"


def test_json_and_csv_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(EXAMPLES / "tray_ok.jpg"), "--json", "--csv"]) != 0
    assert "one of --json and --csv" in capsys.readouterr().err


def test_pictures_of_any_shape_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A strip of a picture, a thumbnail, a portrait or a panorama: each gets an answer, none stops the batch."""
    import numpy as np

    frame = cv2.imread(str(EXAMPLES / "tray_ok.jpg"))
    cv2.imwrite(str(tmp_path / "strip.png"), np.full((2, 900, 3), 128, np.uint8))
    cv2.imwrite(str(tmp_path / "column.png"), np.full((900, 1, 3), 128, np.uint8))
    cv2.imwrite(str(tmp_path / "thumb.png"), cv2.resize(frame, (40, 30)))
    cv2.imwrite(str(tmp_path / "portrait.jpg"), cv2.rotate(frame, cv2.ROTATE_90_CLOCKWISE))
    cv2.imwrite(str(tmp_path / "panorama.jpg"), cv2.copyMakeBorder(frame, 0, 0, 400, 400, cv2.BORDER_REPLICATE))
    assert main(["read", str(tmp_path), "--json", "--out", str(tmp_path / "out")]) == 0
    results = {Path(str(r["image"])).stem: r for r in json_lines(capsys.readouterr().out)}
    assert set(results) == {"strip", "column", "thumb", "portrait", "panorama"}
    assert results["strip"]["reading"]["dice"] == [] and results["column"]["reading"]["dice"] == []
    for name in ("portrait", "panorama"):  # the dice are those of the example, seen at the detector's scale
        assert sorted(results[name]["reading"]["faces"]) == labelled_ok_faces("tray_ok"), name  # type: ignore[arg-type]


def test_a_bug_on_one_file_is_reported_and_the_batch_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from farklecam.vision.reader import DiceReader

    real_read = DiceReader.read

    def read(self: DiceReader, frame: object, **kwargs: object) -> object:
        if getattr(frame, "shape", (0, 0))[:2] == (30, 40):
            raise RuntimeError("a bug in the reader")
        return real_read(self, frame, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DiceReader, "read", read)
    cv2.imwrite(str(tmp_path / "a_thumb.png"), cv2.resize(cv2.imread(str(EXAMPLES / "tray_ok.jpg")), (40, 30)))
    shutil.copy(EXAMPLES / "tray_ok.jpg", tmp_path / "b_good.jpg")
    assert main(["read", str(tmp_path), "--json"]) == 1
    results = {Path(str(r["image"])).stem: r for r in json_lines(capsys.readouterr().out)}
    assert "RuntimeError: a bug in the reader" in str(results["a_thumb"]["error"])
    assert sorted(results["b_good"]["reading"]["faces"]) == labelled_ok_faces("tray_ok")  # type: ignore[arg-type]


def test_a_tilted_camera_said_to_look_straight_down_is_named_in_the_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """tray_webcam's camera is 30-35 degrees off: its dice overrule --straight-down and the report says so."""
    assert main(["read", str(EXAMPLES / "tray_webcam.jpg"), "--straight-down"]) == 0
    assert NOT_STRAIGHT_DOWN in capsys.readouterr().out
    assert main(["read", str(EXAMPLES / "tray_webcam.jpg"), "--straight-down", "--json"]) == 0
    [result] = json_lines(capsys.readouterr().out)
    assert result["notice"] == NOT_STRAIGHT_DOWN
    assert main(["read", str(EXAMPLES / "tray_webcam.jpg"), "--json"]) == 0  # not said: nothing to doubt
    [plain] = json_lines(capsys.readouterr().out)
    assert plain["notice"] is None
