from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError, InvalidDiceError
from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.presets import PRESETS, get_rules
from farklecam.scoring.rules import KindScoring, Rules
from farklecam.scoring.setasides import NO_SCORE_BONUS, is_farkle, legal_set_asides, score_keep
from tests.scoring.brute_force import brute_best

ALL_RULES = [p.rules for p in PRESETS.values()] + [
    get_rules("boxed").with_options({"kind_scoring": "adding"}),
    get_rules("house").with_options({"split_kinds": False}),
    get_rules("boxed").with_options({"must_keep_all_scoring": True}),
    get_rules("boxed").with_options({"dice": 5}),
]
rolls = st.lists(st.integers(1, 6), min_size=1, max_size=6)
rule_sets = st.sampled_from(ALL_RULES)


def sub_multisets(roll: tuple[int, ...]) -> set[tuple[int, ...]]:
    return {
        tuple(sorted(f for f, take in zip(roll, mask, strict=True) if take))
        for mask in product((0, 1), repeat=len(roll))
    }


# ---------------------------------------------------------------- worked examples from the boxed text
def test_worked_example_three_rolls() -> None:
    """5,5,2,3,4,6 -> both 5s (100); 3,3,3,5 -> 350, hot dice at 450; 1,1,6,2,6,4 -> two 1s, 650."""
    rules = get_rules("boxed")
    first = score_keep((5, 5, 2, 3, 4, 6), (5, 5), rules)
    assert (first.points, first.dice_left, first.hot_dice) == (100, 4, False)
    second = score_keep((3, 3, 3, 5), (3, 3, 3, 5), rules)
    assert (second.points, second.hot_dice) == (350, True)
    third = score_keep((1, 1, 6, 2, 6, 4), (1, 1), rules)
    assert third.points == 200 and third.dice_left == 4
    assert first.points + second.points + third.points == 650
    # "That 5 does not join the two 5s from your first roll": a set-aside is counted from its own roll only.
    assert [o.points for o in legal_set_asides((5, 5, 2, 3, 4, 6), rules)] == [100, 50]


def test_worked_example_1100_point_turn() -> None:
    rules = get_rules("boxed")
    rolls_and_keeps = [
        ((6, 6, 6, 1, 3, 4), (6, 6, 6, 1), 700),
        ((1, 5), (1, 5), 150),
        ((2, 2, 2, 5, 4, 6), (2, 2, 2, 5), 250),
    ]
    total = 0
    for roll, keep, points in rolls_and_keeps:
        option = score_keep(roll, keep, rules)
        assert option.points == points
        total += option.points
    assert score_keep((1, 5), (1, 5), rules).hot_dice
    assert total == 1100


def test_house_example_1_2_3_3_3_5() -> None:
    """The house text's plays for 1-2-3-3-3-5 are all legal with the points it gives."""
    options = {o.keep: o.points for o in legal_set_asides((1, 2, 3, 3, 3, 5), get_rules("house"))}
    assert options[(3, 3, 3)] == 300
    assert options[(1,)] == 100
    assert options[(5,)] == 50
    assert options[(1, 3, 3, 3, 5)] == 450
    assert (2,) not in options and (1, 2) not in options


# ---------------------------------------------------------------- published probabilities
@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, Fraction(2, 3)),
        (2, Fraction(4, 9)),
        (3, Fraction(5, 18)),
        (4, Fraction(17, 108)),
        (5, Fraction(25, 324)),
        (6, Fraction(5, 216)),
    ],
)
def test_farkle_probability_boxed(n: int, expected: Fraction) -> None:
    rules = get_rules("boxed")
    assert sum((p for roll, p in roll_outcomes(n) if is_farkle(roll, rules)), Fraction(0)) == expected


def test_farkle_probability_six_dice_without_three_pairs() -> None:
    rules = get_rules("boxed").with_options({"three_pairs": 0, "four_kind_with_pair": 0})
    assert sum((p for roll, p in roll_outcomes(6) if is_farkle(roll, rules)), Fraction(0)) == Fraction(5, 162)


def test_roll_outcomes_are_a_distribution() -> None:
    for n in range(1, 7):
        assert sum(p for _, p in roll_outcomes(n)) == 1


# ---------------------------------------------------------------- enumeration against brute force
@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: f"{r.name}-{r.key()}")
def test_enumeration_matches_brute_force_over_all_six_dice_rolls(rules: Rules) -> None:
    """Every one of the 46,656 ordered rolls: the legal keeps are exactly the fully scoring sub-multisets."""
    expected_by_sorted: dict[tuple[int, ...], dict[tuple[int, ...], int]] = {}
    checked = 0
    for roll in product(range(1, 7), repeat=rules.dice):
        key = tuple(sorted(roll))
        if key not in expected_by_sorted:
            keeps = {k: brute_best(k, rules) for k in sub_multisets(key) if k}
            expected = {k: v for k, v in keeps.items() if v is not None}
            if not expected and rules.no_score_bonus and len(key) == rules.dice:
                expected = {key: rules.no_score_bonus}
            if rules.must_keep_all_scoring and expected:
                most = max(map(len, expected))
                expected = {k: v for k, v in expected.items() if len(k) == most}
            expected_by_sorted[key] = expected
        got = {o.keep: o.points for o in legal_set_asides(roll, rules)}
        assert got == expected_by_sorted[key], roll
        checked += 1
    assert checked == 6**rules.dice


# ---------------------------------------------------------------- properties
@given(rolls, rule_sets)
def test_points_positive_and_keeps_are_sub_multisets(roll: list[int], rules: Rules) -> None:
    if len(roll) > rules.dice:
        return
    have = Counter(roll)
    for option in legal_set_asides(roll, rules):
        assert option.points > 0
        assert not Counter(option.keep) - have
        assert option.dice_left == len(roll) - len(option.keep)
        assert option.hot_dice == (option.dice_left == 0)
        assert option.points % 50 == 0


@given(rolls, rule_sets)
def test_keeping_more_single_scoring_dice_stays_legal(roll: list[int], rules: Rules) -> None:
    """Adding another 1 or 5 of the roll to a legal keep never makes it illegal."""
    if len(roll) > rules.dice or rules.must_keep_all_scoring:
        return
    options = {o.keep: o for o in legal_set_asides(roll, rules)}
    for keep, option in options.items():
        spare = Counter(roll) - Counter(keep)
        for face in (1, 5):
            if spare[face]:
                bigger = tuple(sorted((*keep, face)))
                assert bigger in options
                assert options[bigger].points >= option.points


@given(rolls, rule_sets)
def test_adding_a_dead_die_makes_a_keep_illegal(roll: list[int], rules: Rules) -> None:
    """A die that scores in no keep of the roll can never be added to a legal keep."""
    if len(roll) > rules.dice:
        return
    options = legal_set_asides(roll, rules)
    scoring = {f for o in options for f in o.keep}
    for face in set(roll) - scoring:
        for option in options:
            with pytest.raises(IllegalActionError):
                score_keep(roll, (*option.keep, face), rules)


@settings(max_examples=50)
@given(rolls)
def test_must_keep_all_scoring_leaves_only_maximal_keeps(roll: list[int]) -> None:
    free, forced = get_rules("boxed"), get_rules("boxed").with_options({"must_keep_all_scoring": True})
    most = max((len(o.keep) for o in legal_set_asides(roll, free)), default=0)
    assert all(len(o.keep) == most for o in legal_set_asides(roll, forced))


# ---------------------------------------------------------------- rule-specific scores
@pytest.mark.parametrize(
    ("preset", "options", "keep", "points"),
    [
        ("boxed", {}, (1, 1, 1), 300),
        ("boxed", {"three_ones": 1000}, (1, 1, 1), 1000),
        ("boxed", {}, (2, 2, 2, 2), 1000),
        ("boxed", {}, (6, 6, 6, 6, 6, 6), 3000),
        ("boxed", {}, (3, 3, 3, 3, 4, 4), 1500),
        ("boxed", {}, (2, 2, 2, 4, 4, 4), 2500),
        ("boxed", {"kind_scoring": "adding"}, (2, 2, 2, 2, 2), 600),
        ("boxed", {"kind_scoring": "adding"}, (2, 2, 2, 2, 2, 2), 800),
        ("boxed", {"kind_scoring": "doubling", "three_ones": 1000}, (1, 1, 1, 1, 1, 1), 8000),
        ("boxed", {"straight": 1000}, (1, 2, 3, 4, 5, 6), 1000),
        ("boxed", {"three_pairs": 750, "four_kind_with_pair": 0}, (2, 2, 3, 3, 4, 4), 750),
        ("house", {}, (1, 1, 1, 1), 1100),
        ("house", {"split_kinds": False}, (1, 1, 1, 1), 1000),
        ("house", {}, (2, 2, 2, 3, 3, 3), 2500),
        ("elizabethan", {}, (2, 2, 2, 2), 400),
        ("elizabethan", {}, (2, 2, 2, 2, 2, 2), 1600),
        ("elizabethan", {}, (1, 1, 1, 1), 2000),
        ("elizabethan", {}, (3, 3, 4, 4, 6, 6), 500),
        ("busche-neller", {}, (2, 2, 2, 2, 2, 2), 400),
        ("busche-neller", {}, (1, 1, 1, 1), 1100),
        ("zilch", {}, (2, 2, 2, 2, 3, 3), 1500),
    ],
)
def test_combination_scores(preset: str, options: dict[str, object], keep: tuple[int, ...], points: int) -> None:
    rules = get_rules(preset).with_options(options)
    assert score_keep(keep, keep, rules).points == points


def test_triples_only_four_of_a_kind_leaves_a_dead_die() -> None:
    rules = get_rules("busche-neller")
    assert rules.kind_scoring is KindScoring.TRIPLES_ONLY
    with pytest.raises(IllegalActionError):
        score_keep((2, 2, 2, 2), (2, 2, 2, 2), rules)


def test_zilch_scoreless_six_dice_throw_is_worth_500_and_hot() -> None:
    rules = get_rules("zilch")
    (option,) = legal_set_asides((2, 2, 3, 4, 6, 6), rules)
    assert (option.points, option.hot_dice, option.combinations) == (500, True, (NO_SCORE_BONUS,))
    assert is_farkle((2, 3, 4, 6), rules)  # fewer than six dice: a plain zilch


def test_five_dice_has_no_six_dice_combinations() -> None:
    rules = get_rules("boxed").with_options({"dice": 5})
    with pytest.raises(InvalidDiceError):
        legal_set_asides((1, 2, 3, 4, 5, 6), rules)
    assert legal_set_asides((5, 5, 5, 5, 5), rules)[0].points == 2000


@pytest.mark.parametrize(
    ("roll", "message"),
    [((7, 1), "1-6"), ((0,), "1-6"), ((1,) * 7, "at most 6"), ((), "at least one")],
)
def test_invalid_rolls_are_clear_errors(roll: tuple[int, ...], message: str) -> None:
    with pytest.raises(InvalidDiceError, match=message):
        legal_set_asides(roll, get_rules("boxed"))


@pytest.mark.parametrize(
    ("keep", "message"),
    [((1, 1), "not all in the roll"), ((1, 2), "not every kept die scores"), ((), "at least one")],
)
def test_illegal_keeps_are_clear_errors(keep: tuple[int, ...], message: str) -> None:
    with pytest.raises(IllegalActionError, match=message):
        score_keep((1, 2, 3, 4, 6, 6), keep, get_rules("boxed"))
