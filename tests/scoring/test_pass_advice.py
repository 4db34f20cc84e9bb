"""Progressive: take the passed dice or start fresh, weighing what the choice passes on to the next player."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.scoring.advisor import advise_piggyback
from farklecam.scoring.pass_advice import advise_pass, expected_gift
from farklecam.scoring.presets import get_rules
from farklecam.scoring.solver import solve

RULES = get_rules("progressive")


@given(st.integers(1, 80).map(lambda k: 50 * k), st.integers(1, 6))
@settings(max_examples=40, deadline=None)
def test_the_advice_weighs_points_against_what_is_passed_on(total: int, dice: int) -> None:
    advice = advise_pass(RULES, total, dice)
    own = advise_piggyback(RULES, total, dice)
    assert (advice.expected_take, advice.expected_fresh) == (own.expected_take, own.expected_fresh)
    assert advice.gives_take >= 0 and advice.gives_fresh >= 0 and math.isfinite(advice.gives_take)
    net_take, net_fresh = advice.expected_take - advice.gives_take, advice.expected_fresh - advice.gives_fresh
    assert advice.take == (net_take >= net_fresh or dice == 6)
    assert f"passes on {advice.gives_take:.0f}" in advice.text


@given(st.integers(1, 200).map(lambda k: 50 * k))
@settings(max_examples=20, deadline=None)
def test_six_passed_dice_are_always_taken(total: int) -> None:
    assert advise_pass(RULES, total, 6).take


def test_a_single_die_past_the_cap_passes_on_only_its_hot_dice_banks() -> None:
    policy = solve(RULES)
    total = policy.cap + 1000

    def offer(points: int) -> float:
        return max(0.0, policy.roll_value(points, 6) - policy.start_value())

    assert expected_gift(RULES, total, 1) == pytest.approx((offer(total + 100) + offer(total + 50)) / 6)


def test_a_big_pass_with_two_dice_is_taken_and_a_small_one_is_not() -> None:
    assert advise_pass(RULES, 1600, 2).take  # the text's example
    small = advise_pass(RULES, 50, 1)
    assert not small.take and small.text.startswith("start fresh")
