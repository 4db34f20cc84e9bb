from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.presets import get_rules
from farklecam.scoring.setasides import legal_set_asides
from farklecam.service.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_score_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "score", "1,1,1,5,3,4")
    assert data["roll"] == [1, 1, 1, 3, 4, 5]
    assert data["farkle"] is False
    options = data["options"]
    assert isinstance(options, list)
    expected = legal_set_asides((1, 1, 1, 5, 3, 4), get_rules("boxed"))
    assert [o["keep"] for o in options] == [list(o.keep) for o in expected]
    assert {"keep", "points", "dice_left", "hot_dice"} <= set(options[0])
    assert options[0] == {
        "keep": [1, 1, 1, 5],
        "points": 350,
        "dice_left": 2,
        "hot_dice": False,
        "combinations": ["three 1s", "single 5"],
    }


def test_score_with_settings_and_spaces(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "score", "--rules", "boxed", "--set", "three_ones=1000", "1", "1", "1")
    assert data["options"][0]["points"] == 1000


def test_score_farkle(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "score", "2,2,3,4,6,6")
    assert data == {"roll": [2, 2, 3, 4, 6, 6], "farkle": True, "options": []}


def test_score_table_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "5,5,2,3,4,6"]) == 0
    out = capsys.readouterr().out
    assert "5 5" in out and "100" in out and "counted as" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "7,1"], "dice faces must be 1-6, got 7"),
        (["score", "1,1,1,1,1,1,1,1"], "at most 6 dice"),
        (["score", "--rules", "nope", "1"], "unknown rule preset 'nope'"),
        (["score", "--set", "bogus=1", "1"], "unknown rule option 'bogus'"),
        (["score", "one,two"], "dice must be written like"),
    ],
)
def test_bad_input_is_one_clear_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("farklecam: error:")


def test_rules_verb_lists_presets(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "rules", "--rules", "elizabethan")
    assert data["rules"]["turn_minimum"] == 350
    assert "zilch" in data["presets"]
    options = {o["name"]: o for o in data["options"]}  # type: ignore[attr-defined]
    assert (
        options["turn_minimum"]["value"] == 350 and options["turn_minimum"]["allowed"] == "a multiple of 50 in 0..5000"
    )
    assert "elizabethan-directorie.txt: 350" in options["turn_minimum"]["source"]


def test_rules_verb_says_what_each_option_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "what it does" in out and "A player not yet on the board cannot bank a turn below this." in out
    assert "three_ones: boxed-set-rules-and-house-variants.txt: 300; its variant 'Three 1s score 1,000'" in out


@pytest.mark.parametrize("value", ["10**21", "1000000000000000000000", "10000000"])
def test_solve_refuses_a_huge_option_in_one_line(capsys: pytest.CaptureFixture[str], value: str) -> None:
    started = time.perf_counter()
    assert main(["solve", "--set", f"straight={value}"]) == 2
    assert time.perf_counter() - started < 1.0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'straight' must be a multiple of 50 in 0..5000" in err[0]


def test_installed_console_script_exits_nonzero() -> None:
    """The real entry point, as a user runs it: one line on stderr, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "farklecam.service.cli", "score", "7"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "farklecam: error: dice faces must be 1-6, got 7"
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- advice by the chance to win
def test_advise_with_scores_never_banks_a_certain_loss(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "advise", "--scores", "3500,12000", "5,5,5,2,3,4")
    assert data["action"] == "bank"  # maximising points
    win = data["win"]
    assert win["last_turn"] and win["keep"] == [5, 5, 5] and win["action"] == "roll"
    theirs = win["points_advice"]
    assert (theirs["keep"], theirs["action"]) == ([5, 5, 5], "bank")
    assert theirs["win_probability"] == 0.0  # banking 4,000 against 12,000 in the last turn loses
    assert theirs["cost"] == win["win_probability"] > 0


def test_advise_with_scores_banks_on_an_exact_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    settings = ["--set", "target=500", "--set", "exact_target=true", "--set", "last_round=false"]
    data = run_json(capsys, "advise", *settings, "--scores", "400,100", "1,2,3,3,4,6")
    assert (data["win"]["keep"], data["win"]["action"], data["win"]["win_probability"]) == ([1], "bank", 1.0)
    assert main(["advise", *settings, "--scores", "400,100", "1,2,3,3,4,6"]) == 0
    assert "to win: keep 1 for 100 and BANK (chance to win 100.0%)" in capsys.readouterr().out


def test_advise_with_streaks_weighs_the_farkle_penalty(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    settings = ["--rules", "busche-neller", "--set", "target=1000", "--set", "last_round=false"]
    penalty = [*settings, "--set", "farkle_penalty=500"]
    calm = run_json(capsys, "advise", *penalty, "--scores", "600,400", "--streaks", "0,0", "2,3,4,6,2,3")["win"]
    fined = run_json(capsys, "advise", *penalty, "--scores", "600,400", "--streaks", "2,0", "2,3,4,6,2,3")["win"]
    assert calm["farkle"] and fined["win_probability"] < calm["win_probability"]  # the third farkle costs 500
    free = run_json(capsys, "advise", *settings, "--scores", "600,400", "--streaks", "2,0", "2,3,4,6,2,3")["win"]
    assert (
        free["win_probability"]
        == run_json(capsys, "advise", *settings, "--scores", "600,400", "2,3,4,6,2,3")["win"]["win_probability"]
    )  # no penalty: the streak changes nothing


def test_solve_two_players(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    argv = ["solve", "--rules", "busche-neller", "--set", "target=500", "--set", "last_round=false", "--players", "2"]
    assert main([*argv, "--json"]) == 0
    first = capsys.readouterr()
    assert "solving the win table" in first.err  # a wait is announced on stderr; stdout stays JSON
    data = json.loads(first.out)
    assert 0.5 < data["first_player_win"] < 1.0
    assert data["compensation"] % 50 == 0 and data["compensation"] > 0
    assert "expected_turn" in data  # the one-player summary is still there
    assert main(argv) == 0
    again = capsys.readouterr()
    assert "the first wins" in again.out and "solving" not in again.err  # kept: no wait


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["advise", "--scores", "500", "1,2"], "at least one other"),
        (["advise", "--scores", "500,x", "1,2"], "whole numbers"),
        (["advise", "--scores", "525,100", "1,2"], "multiples of 50"),
        (["advise", "--scores", "10000,100", "1,2"], "at or past the target"),
        (["advise", "--streaks", "2,0", "1,2"], "--streaks goes with --scores"),
        (["advise", "--scores", "500,100", "--streaks", "2", "1,2"], "a farkle streak for each"),
        (["advise", "--scores", "500,100", "--streaks", "2,x", "1,2"], "whole numbers"),
    ],
)
def test_advise_bad_scores(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refuses a malformed --scores itself
        status = int(str(exc.code))
    assert status == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------------- a single die with throws to spare
def test_advise_throws_a_missed_single_die_again(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["advise", "--rules", "elizabethan", "--turn-total", "1000", "--scores", "2000,3000"]
    assert main([*argv, "3"]) == 0
    out = capsys.readouterr().out
    assert "throw the last die again (chance to win" in out and "FARKLE" not in out
    win = run_json(capsys, *argv, "--throws-left", "2", "3")["win"]
    assert win["throw_again"] and not win["farkle"] and win["action"] == "roll"
    last = run_json(capsys, *argv, "--throws-left", "1", "3")["win"]  # the third miss in a row
    assert last["farkle"] and not last["throw_again"] and last["win_probability"] < win["win_probability"]


@pytest.mark.parametrize(
    ("extra", "message"), [(["--throws-left", "4", "3"], "1-3"), (["--throws-left", "2", "3", "4"], "single die")]
)
def test_advise_refuses_throws_left_out_of_place(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["advise", "--rules", "elizabethan", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


# ---------------------------------------------------------------------- advice that explains itself
def test_advise_shows_each_keeps_risk_and_worth(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "advise", "--turn-total", "350", "1,5,2,2,4,6")
    rules = get_rules("boxed")
    five = sum(float(p) for roll, p in roll_outcomes(5) if not legal_set_asides(roll, rules))  # keep 1: five left
    assert data["keep"] == [1] and data["farkle_probability"] == pytest.approx(five, abs=1e-12)
    assert all(0 < a["farkle_probability"] < 1 for a in data["alternatives"])
    assert main(["advise", "--turn-total", "350", "1,5,2,2,4,6"]) == 0
    out = capsys.readouterr().out
    assert "the next throw farkles 7.7%" in out and "next throw farkles" in out.splitlines()[1]


def test_advise_with_scores_explains_the_play_to_win(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["advise", "--rules", "house", "--turn-total", "1150", "--scores", "9000,9900,9500,10200", "1,5"]
    win = run_json(capsys, *argv)["win"]
    assert (win["keep"], win["action"]) == ([1, 5], "roll") and win["approximate"] is False
    assert win["roll_probability"] == win["win_probability"] > 0.48 > 0.24 > win["bank_probability"]
    assert win["farkle_probability"] == pytest.approx(0.0231, abs=1e-4)  # six dice again
    for other in win["alternatives"]:
        assert other["win_probability"] == max(other["roll_probability"], other["bank_probability"] or 0)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "banking: 23.1%; throwing on: 48.5%, its next throw farkles 2.3%" in out


def test_advise_says_what_playing_for_points_costs(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["advise", "--scores", "3500,12000", "5,5,5,2,3,4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "for the most points: keep 5 5 5 and BANK (chance to win 0.0%: it costs 0.0035% of the chance to win)" in out


# ---------------------------------------------------------------------- progressive: the pass on offer
def test_advise_passed_weighs_taking_against_starting_fresh(capsys: pytest.CaptureFixture[str]) -> None:
    from farklecam.scoring.advisor import advise_piggyback
    from farklecam.scoring.pass_win import advise_pass_win

    rules = get_rules("progressive")
    argv = ["advise", "--rules", "progressive", "--passed", "1650,1"]
    points = run_json(capsys, *argv)["passed"]
    own = advise_piggyback(rules, 1650, 1)
    assert (points["take"], points["expected_take"], points["expected_fresh"]) == (
        own.take,
        own.expected_take,
        own.expected_fresh,
    )
    assert points["farkle_probability"] == pytest.approx(2 / 3) and "win" not in points
    win = run_json(capsys, *argv, "--scores", "3000,4000")["passed"]["win"]
    found = advise_pass_win(rules, (3000, 4000), 1650, 1)
    assert win["available"] and (win["take"], win["take_probability"]) == (found.take, found.take_win)
    assert win["fresh_probability"] == found.fresh_win and not win["approximate"]
    assert main([*argv, "--scores", "3000,4000"]) == 0
    out = capsys.readouterr().out
    assert "to win: " in out and "for the most points: " in out and "taking" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["advise", "--rules", "progressive", "--passed", "1650,1", "1,2"], "give no dice"),
        (["advise", "--rules", "progressive"], "give the dice thrown"),
        (["advise", "--rules", "house", "--passed", "1650,1"], "piggyback is off"),
        (["advise", "--rules", "progressive", "--passed", "1650"], "the total and the dice"),
        (["advise", "--rules", "progressive", "--passed", "10000,1", "--scores", "500,9900"], "before the last round"),
    ],
)
def test_advise_passed_refuses_what_no_pass_is(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refuses a malformed --passed itself
        status = int(str(exc.code))
    assert status == 2
    assert message in capsys.readouterr().err


def test_solve_says_what_its_figures_cover(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from farklecam.scoring.winprob import solve_win

    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    data = run_json(capsys, "solve", "--rules", "progressive", "--players", "2")
    assert data["first_player_win"] == solve_win(get_rules("progressive")).first_player_win
    assert data["passed_dice"]["win"].startswith("passed dice counted")
    assert data["passed_dice"]["points"].endswith("passed dice are not in these figures")
    assert main(["solve", "--rules", "progressive", "--players", "2"]) == 0
    assert "two players playing to win (passed dice counted" in capsys.readouterr().out
    exact = ["solve", "--rules", "progressive", "--set", "target=1000", "--set", "exact_target=true", "--players", "2"]
    assert run_json(capsys, *exact)["passed_dice"]["win"].startswith("passed dice left out")
    assert "passed_dice" not in run_json(capsys, "solve", "--rules", "house")
