"""The bank line (farklecam.scoring.bank_line): the advisor's own bank-or-throw decision, as a line per dice count."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError
from farklecam.scoring import winprob
from farklecam.scoring.bank_line import MAX_GAPS, Stage, bank_line, default_score, gap_range
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.solver import solve

HOUSE = get_rules("house")
#: Rule sets the agreement is checked under: the presets' shipped tables (passes followed, a farkle penalty)
#: and small customised ones that solve in a second (an exact target, hot dice that must be thrown).
RULE_SETS = {
    "house": HOUSE,
    "progressive": get_rules("progressive"),
    "zilch": get_rules("zilch"),
    "exact-target": get_rules("boxed").with_options({"target": 2000, "exact_target": True}),
    "must-roll": get_rules("boxed").with_options(
        {"target": 2000, "must_roll_after_hot_dice": True, "last_round": False}
    ),
}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    winprob.clear_memory_cache()


@pytest.mark.parametrize("name", list(RULE_SETS))
@settings(max_examples=20, deadline=None)
@given(
    at=st.floats(0.0, 0.999),
    gap=st.integers(-40, 80).map(lambda units: 50 * units),
    roll=st.lists(st.integers(1, 6), min_size=1, max_size=6),
    turn_total=st.integers(0, 60).map(lambda units: 50 * units),
)
def test_the_line_is_where_the_advisor_banks(name: str, at: float, gap: int, roll: list[int], turn_total: int) -> None:
    # At or above the line (or at one of its also_bank totals) every keep is advised bank; below it, roll.
    rules = RULE_SETS[name]
    mine = int(at * rules.target) // 50 * 50
    line = bank_line(rules, mine=mine, gaps=[gap])
    assume(line.stages[0] is not Stage.OUT_OF_PLAY)
    advice = winprob.advise_win(tuple(roll), rules, [mine, mine + gap], turn_total=turn_total)
    assume(not advice.farkle and not advice.throw_again)
    for option in (advice, *advice.alternatives):
        total = turn_total + option.points
        if line.up_to is not None and total > line.up_to:
            continue  # past an exact target: not charted
        dice = option.dice_left or rules.dice  # no dice left: hot dice, all thrown again
        expected = "bank" if line.line(dice).banks(0, total) else "roll"
        assert option.action == expected, (mine, gap, roll, turn_total, option)


def test_points_line_is_the_solvers_bank_at() -> None:
    line = bank_line(HOUSE, mine=3000, gaps=[0])
    policy = solve(HOUSE)
    assert [d.points_bank_from for d in line.lines] == [policy.bank_at(n) for n in range(1, 7)]


def test_behind_means_throwing_on_longer() -> None:
    # Mid-game, the further the opponent is ahead the higher every line; each at least the first bankable total.
    line = bank_line(HOUSE, mine=3000, gaps=gap_range(-2000, 2000, 50))
    assert all(stage is Stage.PLAYING for stage in line.stages)
    for dice in line.lines:
        totals = [t for t in dice.bank_from if t is not None]
        assert len(totals) == len(line.gaps)
        assert totals == sorted(totals)
        assert totals[-1] > totals[0]
    hot = line.line(6).bank_from
    assert all(h > one for h, one in zip(hot, line.line(1).bank_from, strict=True))


def test_a_player_not_on_the_board_cannot_bank_below_the_opening_minimum() -> None:
    line = bank_line(HOUSE, mine=0, gaps=gap_range(0, 3000, 500))
    assert line.to_dict()["bank_minimum"] == 500
    for dice in line.lines:
        assert all(t is not None and t >= 500 for t in dice.bank_from)
        assert dice.points_bank_from is not None and dice.points_bank_from >= 500
    assert line.line(1).bank_from[0] == 500


def test_a_bank_reaching_the_target_wins() -> None:
    rules = get_rules("boxed").with_options({"target": 2000, "last_round": False})
    line = bank_line(rules, mine=1500, gaps=gap_range(-1000, 450, 50))
    for dice in line.lines:
        assert all(t is not None and t <= 500 for t in dice.bank_from)


def test_last_turn_banks_once_ahead() -> None:
    # The opponent has 10,500: the mover's last turn. Ahead wins for sure; a tie is banked only where
    # throwing on scores less than half the time (one die: a third).
    line = bank_line(HOUSE, mine=7000, gaps=[3500])
    assert line.stages == (Stage.LAST_TURN,)
    assert line.line(1).bank_from == (3500,)
    assert all(line.line(n).bank_from == (3550,) for n in range(2, 7))


def test_no_line_where_banking_is_never_best() -> None:
    rules = RULE_SETS["must-roll"]  # hot dice must be thrown again
    line = bank_line(rules, mine=500, gaps=[-1000, 0, 500])
    assert line.stages[0] is Stage.OUT_OF_PLAY  # an opponent below 0
    assert all(d.bank_from[0] is None and d.also_bank[0] == () for d in line.lines)
    hot = line.line(rules.dice)
    assert hot.hot_dice and hot.bank_from == (None, None, None) and hot.points_bank_from is None
    assert line.line(1).bank_from[1] is not None


def test_exact_target_charts_totals_up_to_the_target() -> None:
    line = bank_line(RULE_SETS["exact-target"], mine=1200, gaps=[0])
    assert line.up_to == 800
    assert all(t is None or t <= 800 for d in line.lines for t in (*d.bank_from, *d.also_bank[0]))


def test_json_form() -> None:
    line = bank_line(HOUSE, mine=default_score(HOUSE), gaps=gap_range(-6000, 5000, 1000))
    data = line.to_dict()
    assert (data["rules"], data["score"], data["target"], data["on_board"]) == ("house", 5000, 10_000, True)
    assert data["gaps"][0] == -6000 and data["opponents"][0] == -1000
    assert data["stages"][0] == "out_of_play" and data["stages"][-1] == "last_turn"
    assert [d["dice"] for d in data["lines"]] == [1, 2, 3, 4, 5, 6]
    assert [d["hot_dice"] for d in data["lines"]] == [False] * 5 + [True]
    assert all(len(d["bank_from"]) == len(d["also_bank"]) == 12 for d in data["lines"])
    assert data["approximation"] is None and data["up_to"] is None


@pytest.mark.parametrize(
    ("mine", "gaps", "message"),
    [
        (3001, [0], "multiple of 50"),
        (10_000, [0], "0..9950"),
        (-50, [0], "0..9950"),
        (3000, [], "at least one"),
        (3000, [0, 0], "ascending"),
        (3000, [75], "multiple of 50"),
        (3000, list(range(0, 50 * (MAX_GAPS + 1), 50)), "at most"),
    ],
)
def test_bad_input_says_why(mine: int, gaps: list[int], message: str) -> None:
    with pytest.raises(IllegalActionError, match=message):
        bank_line(HOUSE, mine=mine, gaps=gaps)


@pytest.mark.parametrize(
    ("low", "high", "step", "message"),
    [
        (-5000, 5000, 0, "at least 50"),
        (100, -100, 50, "low to high"),
        (-5025, 0, 50, "multiple"),
        (0, 10**6, 50, "at most"),
    ],
)
def test_bad_gap_range_says_why(low: int, high: int, step: int, message: str) -> None:
    with pytest.raises(IllegalActionError, match=message):
        gap_range(low, high, step)


def test_a_line_over_two_hundred_gaps_is_quick() -> None:
    import time

    rules: Rules = HOUSE
    bank_line(rules, mine=3000, gaps=[0])  # loads the table and the compiled sweep
    start = time.perf_counter()
    bank_line(rules, mine=4000, gaps=gap_range(-5000, 5000, 50))
    assert time.perf_counter() - start < 5.0  # about half a second on two shared cores
