"""The exact turn solver: published numbers, a brute-force expectimax, properties, every preset."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError
from farklecam.scoring import turn_dp
from farklecam.scoring.presets import PRESETS, get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides
from farklecam.scoring.solver import farkle_probabilities, solve, solve_summary

#: Singles, triples, straight 1500, 300 to bank: aaron-hanson/Farkler (Farkle.cs ValidScore, ExpectedValueCalc.cs).
FARKLER = get_rules("busche-neller").with_options({"straight": 1500, "turn_minimum": 300})


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FARKLECAM_CACHE_DIR", str(tmp_path_factory.mktemp("policies")))
        yield


# ---------------------------------------------------------------- published numbers
def test_boxed_farkle_probabilities_are_exact() -> None:
    expected = [Fraction(2, 3), Fraction(4, 9), Fraction(5, 18), Fraction(17, 108), Fraction(25, 324), Fraction(5, 216)]
    assert farkle_probabilities(get_rules("boxed")) == dict(enumerate(expected, start=1))


def test_six_dice_farkle_without_three_pairs() -> None:
    rules = get_rules("boxed").with_options({"three_pairs": 0, "four_kind_with_pair": 0})
    assert farkle_probabilities(rules)[6] == Fraction(5, 162)


def test_zilch_average_per_turn_busche_2010() -> None:
    """Busche (2010), "Maximizing Expected Scores in the Game of Zilch": 620.855 points per turn."""
    policy = solve(get_rules("zilch"))
    assert policy.expected_turn == pytest.approx(620.855, abs=5e-4)
    assert policy.penalty_streaks == 3


def test_farkler_expected_turn() -> None:
    """aaron-hanson/Farkler EVCache.json "6:0": 469.88274854547706 (its table stops at 10,000; ours does not)."""
    assert solve(FARKLER).expected_turn == pytest.approx(469.8827485, abs=1e-7)


@pytest.mark.parametrize(
    ("dice", "total", "cached"),
    [
        (1, 250, 247.73140777471258),
        (2, 200, 206.71168374412522),
        (3, 150, 215.10157031698415),
        (3, 300, 324.66251821721295),
        (4, 400, 491.66654528195915),
        (5, 50, 342.13080167172484),
        (5, 1000, 1146.0542846643018),
        (6, 300, 721.44777269542953),
        (6, 1000, 1351.6029702165145),
    ],
)
def test_farkler_cached_table(dice: int, total: int, cached: float) -> None:
    """Entries "dice:total" of Farkler's EVCache.json (state: about to throw, total set aside, on the board)."""
    assert solve(FARKLER).roll_value(total, dice) == pytest.approx(cached, abs=1e-6)


# ---------------------------------------------------------------- brute force (OpenSpiel-style test_consistent)
def brute_turn(rules: Rules, cap: int, farkle_value: float, bank_minimum: int) -> tuple[object, object]:
    """Plain recursive expectimax over ordered dice outcomes; a turn ends with a bank at ``cap`` points."""
    outcomes = {
        n: [
            (roll, Fraction(k, 6**n))
            for roll, k in Counter(tuple(sorted(r)) for r in product(range(1, 7), repeat=n)).items()
        ]
        for n in range(1, rules.dice + 1)
    }

    @cache
    def after_keep(total: int, left: int) -> float:
        if total >= cap:
            return float(total)
        hot = left == 0
        roll = throw(total, rules.dice if hot else left, rules.single_die_throws)
        may_bank = total >= bank_minimum and not (hot and rules.must_roll_after_hot_dice)
        return max(roll, float(total)) if may_bank else roll

    @cache
    def throw(total: int, n: int, throws: int) -> float:
        value = 0.0
        for roll, p in outcomes[n]:
            keeps = legal_set_asides(roll, rules)
            if keeps:
                best = max(after_keep(total + k.points, k.dice_left) for k in keeps)
            elif n == 1 and throws > 1:
                best = throw(total, 1, throws - 1)
            else:
                best = farkle_value
            value += float(p) * best
        return value

    return throw, after_keep


BRUTE_CASES = [
    (get_rules("boxed"), 0.0, True),
    (get_rules("boxed"), 0.0, False),
    (get_rules("elizabethan"), 0.0, True),
    (get_rules("elizabethan"), 0.0, False),
    (get_rules("zilch"), -500.0, True),
    (get_rules("house").with_options({"must_roll_after_hot_dice": True, "turn_minimum": 300}), -250.0, True),
    (get_rules("boxed").with_options({"dice": 5, "must_keep_all_scoring": True}), 0.0, False),
]


@pytest.mark.parametrize(("rules", "farkle_value", "on_board"), BRUTE_CASES)
def test_dp_matches_brute_force(rules: Rules, farkle_value: float, on_board: bool) -> None:
    cap_points, start = 1200, 600
    minimum = rules.bank_minimum(on_board)
    tables = turn_dp.build_tables(rules, prune=False)  # a truncated turn is not monotone at the cap
    w, s1, _ = turn_dp.sweep(rules, tables, [farkle_value], [minimum], cap_points // 50, bank_tail=True)
    throw, _ = brute_turn(rules, cap_points, farkle_value, minimum)
    for total in range(start, cap_points, 50):
        for n in range(1, 4):
            assert w[0, total // 50, n] == pytest.approx(throw(total, n, rules.single_die_throws), abs=1e-9)
        one_throw_success = throw(total, 1, 1) - farkle_value * float(tables.pf[1])
        assert s1[0, total // 50] == pytest.approx(one_throw_success, abs=1e-9)


@pytest.mark.parametrize("name", ["zilch", "elizabethan"])
def test_pruning_dominated_keeps_is_exact(name: str) -> None:
    """Of the keeps leaving the same dice only the best-scoring one matters (values grow with the total)."""
    rules = get_rules(name)
    policy = solve(rules)
    cap = policy.cap // 50
    f, minimum = policy.farkle_value(), rules.bank_minimum(True)
    pruned = turn_dp.sweep(rules, turn_dp.build_tables(rules), [f], [minimum], cap)[0]
    full = turn_dp.sweep(rules, turn_dp.build_tables(rules, prune=False), [f], [minimum], cap)[0]
    assert abs(pruned - full).max() < 1e-9


FORCED = {"must_roll_after_hot_dice": True}


@pytest.mark.parametrize(
    "rules",
    [
        get_rules("boxed"),
        get_rules("zilch"),
        get_rules("elizabethan"),
        get_rules("boxed").with_options(FORCED),
        get_rules("elizabethan").with_options(FORCED),
    ],
)
def test_uncapped_turn_equals_a_far_cap(rules: Rules) -> None:
    """The closed-form tail above the cap is exact: truncating much later changes nothing."""
    policy = solve(rules)
    tables = turn_dp.cached_tables(rules)
    minimum = rules.bank_minimum(True)
    f = policy.farkle_value()
    w, _, _ = turn_dp.sweep(rules, tables, [f], [minimum], policy.cap // 50 + 400, bank_tail=True)
    assert w[0, 0, rules.dice] == pytest.approx(policy.start_value(), abs=1e-9)
    inside = [total for total in (0, 1000, 5000, 20_000) if total < policy.cap]  # forced rules: above the cap
    for n in range(1, rules.dice + 1):
        for total in (*inside, policy.cap - 50, policy.cap, policy.cap + 500):
            assert w[0, total // 50, n] == pytest.approx(policy.roll_value(total, n), abs=1e-8)


# ---------------------------------------------------------------- farkle penalty: the average-reward equations
def test_penalty_relative_values_satisfy_bellman() -> None:
    rules = get_rules("zilch")
    policy = solve(rules)
    g = policy.expected_turn
    h = [policy.start_value(farkle_streak=s) - g for s in range(3)]
    assert h[0] == pytest.approx(0.0, abs=1e-9)
    assert h[2] < h[1] < 0
    assert policy.farkle_value(farkle_streak=0) == pytest.approx(h[1])
    assert policy.farkle_value(farkle_streak=1) == pytest.approx(h[2])
    assert policy.farkle_value(farkle_streak=2) == pytest.approx(-500.0)


def test_penalty_with_opening_minimum_solves_off_board() -> None:
    rules = get_rules("boxed").with_options({"farkle_penalty": 1000})
    policy = solve(rules)
    assert policy.expected_turn < solve(get_rules("boxed")).expected_turn
    assert policy.start_value(on_board=False) < policy.start_value()
    assert policy.farkle_value(on_board=False, farkle_streak=2) < -1000 + 1e-9


def test_streak_out_of_range_is_an_error() -> None:
    with pytest.raises(IllegalActionError, match="farkle_streak"):
        solve(get_rules("zilch")).start_value(farkle_streak=3)


# ---------------------------------------------------------------- properties
PROPERTY_RULES = [p.rules for p in PRESETS.values()] + [
    FARKLER,
    get_rules("boxed").with_options({"must_roll_after_hot_dice": True}),
    get_rules("boxed").with_options({"dice": 5, "farkle_penalty": 500}),
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PROPERTY_RULES), st.integers(0, 600), st.integers(1, 6), st.booleans(), st.integers(0, 2))
def test_values_monotone_and_never_below_a_bank(
    rules: Rules, step: int, dice: int, on_board: bool, streak: int
) -> None:
    policy = solve(rules)
    dice = min(dice, rules.dice)
    streak = streak if rules.farkle_penalty else 0
    total = 50 * step
    here = policy.roll_value(total, dice, on_board=on_board, farkle_streak=streak)
    assert policy.roll_value(total + 50, dice, on_board=on_board, farkle_streak=streak) >= here - 1e-9
    for left in range(dice):
        action, value, roll = policy.decide(total, left, on_board=on_board, farkle_streak=streak)
        assert value >= roll - 1e-12
        if policy.bank_allowed(total, on_board=on_board, hot_dice=left == 0):
            assert value >= total
            assert (action == "bank") == (total >= roll)
        else:
            assert action == "roll"


def test_invalid_turn_totals() -> None:
    policy = solve(get_rules("boxed"))
    for bad in (-50, 125, 3.0):
        with pytest.raises(IllegalActionError, match="turn total"):
            policy.roll_value(bad, 3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- every preset
@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_solves(name: str) -> None:
    rules = get_rules(name)
    summary = solve_summary(rules)
    assert set(summary) == {"expected_turn", "farkle_probability", "bank_at"}
    assert 300 < summary["expected_turn"] < 1000
    keys = [str(n) for n in range(1, rules.dice + 1)]
    assert list(summary["farkle_probability"]) == keys and list(summary["bank_at"]) == keys
    assert all(0 <= p < 1 for p in summary["farkle_probability"].values())
    for n, at in summary["bank_at"].items():
        if at is None:
            assert summary["farkle_probability"][n] == 0
        else:
            assert at % 50 == 0 and at >= rules.bank_minimum(True)
            assert solve(rules).roll_value(at, int(n)) <= at
    policy = solve(rules)
    assert math.isclose(policy.start_value(), summary["expected_turn"])


def test_summary_values() -> None:
    zilch = solve_summary(get_rules("zilch"))
    assert zilch["bank_at"]["6"] is None  # six dice never farkle under the no-score bonus
    assert zilch["farkle_probability"]["6"] == 0
    elizabethan = solve_summary(get_rules("elizabethan"))
    assert elizabethan["farkle_probability"]["1"] == pytest.approx(8 / 27)  # three throws to make a 1 or 5


@given(st.integers(0, 50))
@settings(max_examples=20, deadline=None)
def test_a_long_streak_without_a_penalty_is_advised_like_no_streak(streak: int) -> None:
    # A game's log keeps counting farkles even where no penalty applies; the advice must not refuse them.
    policy = solve(get_rules("boxed"))
    assert policy.decide(350, 3, farkle_streak=streak) == policy.decide(350, 3)


def test_a_streak_past_the_penalty_is_refused() -> None:
    policy = solve(get_rules("zilch"))
    with pytest.raises(IllegalActionError, match="farkle_streak must be 0-2"):
        policy.decide(350, 3, farkle_streak=3)
