"""``farklecam chart``: the bank line as a PNG, as JSON, and one clear line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from farklecam.scoring import winprob
from farklecam.service.cli import main


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path / "cache"))
    winprob.clear_memory_cache()


def test_writes_a_picture_and_prints_the_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chart.png"
    argv = ["chart", "--rules", "house", "--score", "3000", "--gap-range", "-5000,5000", "--step", "100"]
    assert main([*argv, "--out", str(out)]) == 0
    picture = cv2.imread(str(out))
    assert picture is not None and picture.shape == (600, 900, 3)
    assert len({tuple(px) for px in picture.reshape(-1, 3)[::97]}) > 10  # lines in several colours, not a blank
    text = capsys.readouterr().out
    assert "house rules, your score 3000" in text and f"wrote {out}" in text
    assert "points" in text and "6 hot" in text


def test_json_has_every_gap_and_dice_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chart.png"
    argv = ["chart", "--rules", "house", "--score", "2500", "--gap-range", "-1000,1000", "--step", "250"]
    assert main([*argv, "--json", "--out", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"] == "house" and data["score"] == 2500 and data["picture"] == str(out)
    assert data["gaps"] == [-1000, -750, -500, -250, 0, 250, 500, 750, 1000]
    assert data["opponents"] == [1500 + 250 * k for k in range(9)]
    assert set(data["stages"]) == {"playing"}
    assert [line["dice"] for line in data["lines"]] == [1, 2, 3, 4, 5, 6]
    for line in data["lines"]:
        assert {"dice", "hot_dice", "bank_from", "also_bank", "points_bank_from"} <= set(line)
        assert len(line["bank_from"]) == 9 and all(isinstance(t, int) and t % 50 == 0 for t in line["bank_from"])
    assert out.is_file()


def test_json_alone_needs_no_file_and_defaults_to_half_the_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chart", "--rules", "house", "--step", "1000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["score"] == 5000 and data["gaps"][0] == -5000 and data["gaps"][-1] == 5000
    assert "picture" not in data


def test_customised_rules_say_their_table_is_solved_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["chart", "--rules", "boxed", "--set", "target=2000", "--score", "500", "--gap-range", "-500,500"]
    assert main([*argv, "--step", "500", "--json"]) == 0
    captured = capsys.readouterr()
    assert "solving the win table of these rules first (a few seconds" in captured.err
    assert json.loads(captured.out)["target"] == 2000
    assert main([*argv, "--step", "500", "--json"]) == 0  # kept: no second notice
    assert "solving" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--score", "3001"], "a banked score is a multiple of 50, got 3001"),
        (["--score", "10000"], "the mover's score must be 0..9950"),
        (["--gap-range", "5000,-5000"], "the gap range goes from low to high"),
        (["--step", "0"], "the step between gaps is at least 50"),
        (["--step", "1"], "a step is a multiple of 50"),
        (["--rules", "nope"], "unknown rule preset 'nope'"),
        (["--set", "target=12"], "target"),
        (["--set", "target=2000", "--score", "2001"], "a banked score is a multiple of 50"),  # no solving notice
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["chart", "--out", str(tmp_path / "c.png"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("farklecam: error:") and message in err[0], err
    assert not (tmp_path / "c.png").exists()


def test_without_a_file_the_lines_are_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chart", "--rules", "house", "--score", "3000"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == "bank line, house rules, your score 3000: bank from these turn totals, by dice left"
    assert [row.split()[0] for row in text[3:14]] == [str(gap) for gap in range(-5000, 5001, 1000)]
    assert text[7].split() == ["-1000", "2000", "300", "250", "400", "950", "2300", "4550", "playing"]
    assert text[-1] == "(--out FILE.png draws it as a picture)"


def test_a_file_that_cannot_be_written_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chart", "--step", "1000", "--out", str(tmp_path / "missing" / "c.png")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("farklecam: error: cannot write")


@pytest.mark.parametrize("value", ["a,b", "1000", "-5000"])
def test_a_malformed_gap_range_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["chart", "--json", "--gap-range", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--gap-range" in err and "Traceback" not in err
