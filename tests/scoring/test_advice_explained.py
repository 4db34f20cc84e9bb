"""Advice that explains itself: each keep's worth, what throwing on risks, what playing for points costs."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from farklecam.scoring import last_round_dp
from farklecam.scoring.advisor import advise
from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides
from farklecam.scoring.winprob import advise_win
from tests.scoring.last_round_brute import Brute
from tests.scoring.test_last_round import CUT, plays, random_last_round


def farkle_by_count(rules: Rules, dice: int) -> Fraction:
    """The chance a throw of ``dice`` dice scores nothing, counted roll by roll."""
    return sum((p for roll, p in roll_outcomes(dice) if not legal_set_asides(roll, rules)), Fraction(0))


@pytest.mark.parametrize(("preset", "roll"), [("house", (1, 5, 2, 2, 4, 6)), ("elizabethan", (1, 5, 5, 2, 3, 4))])
def test_each_keep_says_what_throwing_on_risks(preset: str, roll: tuple[int, ...]) -> None:
    rules = get_rules(preset)
    found = advise(roll, rules, turn_total=400)
    won = advise_win(roll, rules, (2000, 3000), turn_total=400)
    by_keep = {o.keep: o.farkle_chance for o in (*found.alternatives,)} | {found.keep: found.farkle_chance}
    by_keep_win = {o.keep: o.farkle_chance for o in won.alternatives} | {won.keep: won.farkle_chance}
    for option in legal_set_asides(roll, rules):
        dice = rules.dice if option.hot_dice else option.dice_left
        exact = farkle_by_count(rules, dice) ** (rules.single_die_throws if dice == 1 else 1)
        assert by_keep[option.keep] == pytest.approx(float(exact), abs=1e-12)
        assert by_keep_win[option.keep] == by_keep[option.keep]


def test_a_missed_single_die_risks_every_throw_left() -> None:
    rules = get_rules("elizabethan")
    found = advise((3,), rules, turn_total=1000, throws_left=3)
    assert found.throw_again and found.farkle_chance == pytest.approx((2 / 3) ** 2)  # two more throws, both miss


def test_the_advised_keep_is_worth_the_better_of_banking_and_throwing_on() -> None:
    rules = get_rules("house")
    for roll in [(1, 5), (1, 1, 5, 2, 3, 4), (5, 2, 3)]:
        found = advise_win(roll, rules, [9000, 9900, 9500, 10_200], turn_total=1150)
        for option in (found, *found.alternatives):
            chances = [option.roll_win] + ([option.bank_win] if option.bank_win is not None else [])
            assert option.win == max(c for c in chances if c is not None)
            assert option.action == (
                "bank" if option.bank_win is not None and option.bank_win >= option.roll_win else "roll"
            )


def test_playing_for_points_says_what_it_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(last_round_dp, "cut_units", lambda rules: CUT // 50)
    rules = get_rules("house")
    rng = random.Random(7)
    differed = 0
    for _ in range(60):
        scores, turn_total, roll = random_last_round(rng, 3, rules)
        found = advise_win(roll, rules, scores, turn_total=turn_total)
        if found.points_keep is None:
            continue
        differed += 1
        chances = plays(Brute(rules, scores, turn_total, CUT // 50), rules, roll, turn_total)
        played = chances[(found.points_keep, found.points_action)]
        assert found.points_win == pytest.approx(played, abs=1e-12)
        block = found.to_dict()["points_advice"]
        assert block["cost"] == pytest.approx(max(chances.values()) - played, abs=1e-12)
        assert block["cost"] >= 0
    assert differed >= 3  # the test saw the two plays part
