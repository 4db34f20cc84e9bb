"""``farklecam teach``, ``farklecam profiles ...`` and ``read --profile``: with the shipped models, offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from farklecam.service.cli import main
from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore
from tests.vision.conftest import fake_model_dir, onnx_available  # noqa: F401  (the stand-in models)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(autouse=True)
def profiles_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    return tmp_path / "profiles"


def labelled(tmp_path: Path, names: tuple[str, ...] = ("tray_ok", "tray_cocked")) -> Path:
    """A folder of the bundled examples in the images/ and labels/ layout."""
    out = tmp_path / "labelled"
    (out / "images").mkdir(parents=True)
    (out / "labels").mkdir()
    for name in names:
        shutil.copy(EXAMPLES / f"{name}.jpg", out / "images")
        shutil.copy(EXAMPLES / "labels" / f"{name}.txt", out / "labels")
    return out


def test_teach_then_list_show_export_and_forget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teach", "table1", "--labels", str(labelled(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert out == "taught table1: 8 dice from 2 pictures; it holds 8 corrections\n"
    assert main(["profiles", "list", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["name"] == "table1" and row["corrections"] == 8 and row["pictures"] == 2
    assert row["truths"] == {"1": 1, "3": 1, "4": 1, "5": 3, "6": 1, "cocked": 1}
    assert main(["profiles", "list"]) == 0
    assert "table1" in capsys.readouterr().out
    assert main(["profiles", "show", "table1"]) == 0
    shown = capsys.readouterr().out
    assert "corrections: 8 from 2 pictures" in shown and "5 x3" in shown
    assert main(["profiles", "export", "table1", str(tmp_path / "export")]) == 0
    assert "wrote 8 crops and YOLO labels of table1" in capsys.readouterr().out
    lines = sorted(
        p.read_text().split()[0] + " " + p.read_text().split()[-1]
        for p in (tmp_path / "export" / "labels").glob("*.txt")
    )
    assert lines == ["0 ok", "2 ok", "3 ok", "4 ok", "4 ok", "4 ok", "5 ok", "6 cocked"]
    # taught again: the corrections add up
    assert main(["teach", "table1", "--labels", str(labelled(tmp_path / "again", ("tray_webcam",)))]) == 0
    assert "it holds 11 corrections" in capsys.readouterr().out
    assert main(["profiles", "forget", "table1"]) == 0
    assert capsys.readouterr().out == "forgot profile table1 and its 11 corrections\n"
    assert ProfileStore().names() == []


def test_bad_names_and_folders_are_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv, why in (
        (["teach", "../x", "--labels", str(tmp_path)], "cannot name a profile"),
        (["teach", "t", "--labels", str(tmp_path / "missing")], "no such folder"),
        (["teach", "t", "--labels", str(empty)], "no pictures in it"),
        (["profiles", "show", "nope"], "no profile 'nope'"),
        (["profiles", "forget", "nope"], "no profile 'nope'"),
        (["profiles", "export", "nope", str(tmp_path)], "no profile 'nope'"),
        (["read", str(EXAMPLES / "tray_ok.jpg"), "--profile", "nope"], "no profile 'nope'"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("farklecam: error: ") and why in err, err
    assert ProfileStore().names() == []


def test_pictures_that_cannot_be_used_are_named_and_the_rest_still_taught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = labelled(tmp_path)
    (folder / "images" / "broken.jpg").write_bytes(b"not a picture")
    (folder / "labels" / "broken.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    shutil.copy(EXAMPLES / "tray_webcam.jpg", folder / "images" / "unlabelled.jpg")
    shutil.copy(EXAMPLES / "tray_off_tray.jpg", folder / "images" / "badline.jpg")
    (folder / "labels" / "badline.txt").write_text("2 0.27 0.35 0.07 0.09\n9 0.5 0.5 0.1 0.1\n")
    assert main(["teach", "t", "--labels", str(folder)]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("farklecam: ")]
    assert len(errors) == 4, captured.err
    assert any("broken.jpg" in e for e in errors)
    assert any("unlabelled.jpg: no label file" in e for e in errors)
    assert any("badline.jpg: line 2: class 9 is no die" in e for e in errors)
    assert errors[-1] == "farklecam: 3 picture(s) could not be taught"
    assert captured.out == "taught t: 8 dice from 2 pictures; it holds 8 corrections\n"


def test_read_with_a_profile_reads_and_reports_as_without(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teach", "t", "--labels", str(labelled(tmp_path, ("tray_ok",)))]) == 0
    capsys.readouterr()
    picture = str(EXAMPLES / "tray_ok.jpg")
    assert main(["read", picture, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["read", picture, "--json", "--profile", "t"]) == 0
    taught = json.loads(capsys.readouterr().out)
    assert taught["reading"]["faces"] == plain["reading"]["faces"] == [3, 4, 5, 5, 5]


def test_a_classifier_without_features_is_refused_and_leaves_no_profile(
    tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    models = request.getfixturevalue("fake_model_dir")  # stand-ins whose classifier has no 'embedding' output
    assert main(["teach", "t", "--labels", str(labelled(tmp_path)), "--models", str(models)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "embedding_output" in err
    assert ProfileStore().names() == []
