"""Progressive: take the passed dice or start fresh, by points and, with the scores, by the chance to win."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError
from farklecam.scoring.advisor import advise_piggyback
from farklecam.scoring.pass_advice import advise_pass
from farklecam.scoring.pass_win import advise_pass_win
from farklecam.scoring.presets import get_rules
from farklecam.scoring.risk import next_throw_farkle

RULES = get_rules("progressive")


@given(st.integers(1, 80).map(lambda k: 50 * k), st.integers(1, 6))
@settings(max_examples=40, deadline=None)
def test_without_scores_the_advice_is_this_turns_points(total: int, dice: int) -> None:
    advice = advise_pass(RULES, total, dice)
    own = advise_piggyback(RULES, total, dice)
    assert (advice.expected_take, advice.expected_fresh) == (own.expected_take, own.expected_fresh)
    assert advice.take == advice.points_take == own.take and advice.win is None
    assert advice.farkle_chance == next_throw_farkle(RULES, 0 if dice == 6 else dice)
    assert "points this turn" in advice.text and "win" not in advice.to_dict()


@given(st.integers(1, 60).map(lambda k: 50 * k), st.integers(1, 6), st.integers(0, 180).map(lambda k: 50 * k))
@settings(max_examples=30, deadline=None)
def test_with_scores_the_advice_is_the_chance_to_win(total: int, dice: int, mine: int) -> None:
    advice = advise_pass(RULES, total, dice, scores=[mine, 4000])
    win = advise_pass_win(RULES, [mine, 4000], total, dice)
    assert advice.win == win and advice.take == win.take
    assert advice.text == win.text and advice.to_dict()["win"]["take_probability"] == win.take_win


@given(st.integers(1, 200).map(lambda k: 50 * k))
@settings(max_examples=20, deadline=None)
def test_six_passed_dice_are_always_taken_for_points(total: int) -> None:
    assert advise_pass(RULES, total, 6).take


def test_a_big_pass_with_two_dice_is_taken_and_a_small_one_is_not() -> None:
    assert advise_pass(RULES, 1600, 2).take  # the text's example
    small = advise_pass(RULES, 50, 1)
    assert not small.take and small.text.startswith("start fresh")


def test_a_pass_the_rules_cannot_offer_is_refused() -> None:
    with pytest.raises(IllegalActionError, match="piggyback"):
        advise_pass(get_rules("house"), 1000, 2)
    with pytest.raises(IllegalActionError, match="multiple of 50"):
        advise_pass(RULES, 1010, 2)
