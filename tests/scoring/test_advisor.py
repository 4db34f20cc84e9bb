"""advise(): the best keep, bank or roll, expected values and the CLI JSON shape."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError, InvalidDiceError
from farklecam.scoring.advisor import Advice, advise, advise_piggyback
from farklecam.scoring.presets import PRESETS, get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides
from farklecam.scoring.solver import solve


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FARKLECAM_CACHE_DIR", str(tmp_path_factory.mktemp("policies")))
        yield


BOXED = get_rules("boxed")


def test_cli_json_shape() -> None:
    data = json.loads(json.dumps(advise([1, 1, 6, 2, 6, 4], BOXED, turn_total=450).to_dict()))
    assert {"keep", "points", "action", "expected", "alternatives", "farkle"} <= set(data)
    assert data["farkle"] is False
    assert data["action"] in ("bank", "roll")
    assert isinstance(data["points"], int) and isinstance(data["expected"], float)
    for alternative in data["alternatives"]:
        assert {"keep", "points", "action", "expected"} <= set(alternative)
        assert alternative["expected"] <= data["expected"]


def test_worked_example_choice() -> None:
    """The boxed text's turn: 1,1,6,2,6,4 with 450 set aside. Keeping one 1 and rolling five dice is best."""
    advice = advise([1, 1, 6, 2, 6, 4], BOXED, turn_total=450)
    assert (advice.keep, advice.points, advice.action) == ((1,), 100, "roll")
    policy = solve(BOXED)
    assert advice.expected == pytest.approx(policy.roll_value(550, 5))
    assert [a.keep for a in advice.alternatives] == [(1, 1)]


def test_every_keep_is_ranked() -> None:
    roll = (1, 1, 1, 5, 5, 2)
    advice = advise(roll, BOXED, turn_total=0)
    keeps = {advice.keep} | {a.keep for a in advice.alternatives}
    assert keeps == {o.keep for o in legal_set_asides(roll, BOXED)}
    values = [advice.expected] + [a.expected for a in advice.alternatives]
    assert values == sorted(values, reverse=True)


def test_big_total_banks() -> None:
    advice = advise([1, 2, 3, 4, 6, 6], BOXED, turn_total=3000)
    assert (advice.keep, advice.action, advice.expected) == ((1,), "bank", 3100.0)


def test_hot_dice_roll_on() -> None:
    advice = advise([1, 2, 3, 4, 5, 6], BOXED, turn_total=0)
    assert advice.keep == (1, 2, 3, 4, 5, 6) and advice.hot_dice and advice.action == "roll"
    assert advice.expected > 1500


def test_opening_minimum_forces_a_roll() -> None:
    on = advise([1, 2, 3, 4, 6, 6], BOXED, turn_total=250, on_board=True)
    off = advise([1, 2, 3, 4, 6, 6], BOXED, turn_total=250, on_board=False)
    assert off.action == "roll"
    assert off.expected < on.expected


def test_must_roll_after_hot_dice() -> None:
    rules = BOXED.with_options({"must_roll_after_hot_dice": True})
    advice = advise([1, 2, 3, 4, 5, 6], rules, turn_total=100_000)
    straight = next(o for o in (advice, *advice.alternatives) if o.keep == (1, 2, 3, 4, 5, 6))
    assert straight.action == "roll"  # banking 101,500 would be better, but is not allowed
    assert straight.expected < 101_500
    assert (advice.keep, advice.action, advice.expected) == ((1, 5), "bank", 100_150)


def test_farkle() -> None:
    advice = advise([2, 3, 4, 6], BOXED, turn_total=400)
    assert advice.farkle and advice.keep == () and advice.action is None and advice.expected == 0
    assert advice.to_dict()["farkle"] is True


def test_zilch_penalty_makes_a_farkle_cost() -> None:
    zilch = get_rules("zilch")
    assert advise([2, 3], zilch, farkle_streak=2).expected == pytest.approx(-500.0)
    assert -500 < advise([2, 3], zilch, farkle_streak=1).expected < 0
    assert advise([2, 2, 3, 3, 4, 6], zilch).keep == (2, 2, 3, 3, 4, 6)  # no score with six dice: 500


def test_elizabethan_single_die_throws() -> None:
    rules = get_rules("elizabethan")
    first = advise([3], rules, turn_total=1500)
    assert not first.farkle and first.action == "roll" and first.keep == () and first.throw_again
    assert first.to_dict()["throw_again"] is True
    last = advise([3], rules, turn_total=1500, throws_left=1)
    assert last.farkle
    made = advise([5], rules, turn_total=1500, throws_left=1)
    assert made.keep == (5,) and made.hot_dice
    assert first.expected < advise([3], rules, turn_total=1500, throws_left=3).expected + 1e-9


def test_piggyback() -> None:
    rules = get_rules("progressive")
    assert advise_piggyback(rules, 1600, 2).take
    assert not advise_piggyback(rules, 50, 1).take
    one = advise([5, 3], rules, turn_total=1600)
    assert one.keep == (5,) and one.dice_left == 1


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"turn_total": 125}, IllegalActionError),
        ({"turn_total": -50}, IllegalActionError),
        ({"throws_left": 2}, IllegalActionError),
    ],
)
def test_bad_state(kwargs: dict[str, int], error: type[Exception]) -> None:
    with pytest.raises(error):
        advise([1, 2, 3], BOXED, **kwargs)  # type: ignore[arg-type]


def test_a_streak_past_the_penalty_is_refused() -> None:
    with pytest.raises(IllegalActionError, match="farkle_streak"):
        advise([1, 2, 3], get_rules("zilch"), farkle_streak=3)


def test_bad_dice() -> None:
    with pytest.raises(InvalidDiceError):
        advise([7, 1], BOXED)
    with pytest.raises(InvalidDiceError):
        advise([1] * 7, BOXED)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([p.rules for p in PRESETS.values()]),
    st.lists(st.integers(1, 6), min_size=1, max_size=6),
    st.integers(0, 80),
    st.booleans(),
)
def test_advice_is_consistent(rules: Rules, roll: list[int], step: int, on_board: bool) -> None:
    total = 50 * step
    advice = advise(roll, rules, turn_total=total, on_board=on_board)
    assert isinstance(advice, Advice)
    if advice.farkle:
        assert not legal_set_asides(roll, rules)
        return
    if not advice.keep:  # an Elizabethan miss with throws left
        assert len(roll) == 1
        return
    for option in (advice, *advice.alternatives):
        assert option.expected <= advice.expected
        if option.action == "bank":
            assert option.expected == total + option.points
        elif solve(rules).bank_allowed(total + option.points, on_board=on_board, hot_dice=option.hot_dice):
            assert option.expected > total + option.points
