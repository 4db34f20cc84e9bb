"""The two-player win-probability solver (farklecam.scoring.winprob_dp) and advice by the chance to win
(farklecam.scoring.winprob)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError
from farklecam.scoring import winprob, winprob_dp
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides
from tests.scoring.winprob_brute import brute_streak_table, brute_table

#: The cardgames.io table as domsleee/farkle plays it (first to 10,000 wins at once).
CARDGAMES = get_rules("boxed").with_options(
    {"three_ones": 1000, "straight": 2500, "three_pairs": 1500, "four_kind_with_pair": 0, "two_triplets": 0,
     "opening_minimum": 0, "last_round": False}
)  # fmt: skip


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    winprob.clear_memory_cache()


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("busche-neller", {"target": 300, "last_round": False}),
        ("boxed", {"target": 250, "last_round": False, "opening_minimum": 100}),
        ("busche-neller", {"target": 250, "exact_target": True, "last_round": False}),
        ("house", {"target": 250, "exact_target": True, "turn_minimum": 100, "opening_minimum": 150}),
        ("busche-neller", {"target": 150, "last_round": True}),
        ("elizabethan", {"target": 300, "last_round": False, "opening_minimum": 0, "turn_minimum": 100}),
        ("boxed", {"target": 250, "last_round": False, "opening_minimum": 0, "must_roll_after_hot_dice": True}),
    ],
)
def test_table_equals_naive_value_iteration(
    preset: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(winprob_dp, "LAST_ROUND_MARGIN", 150)
    rules = get_rules(preset).with_options(options)
    values, _, _ = winprob_dp.solve_table(rules)
    expected = np.array(brute_table(rules, 150 // 50))
    assert values.shape[:2] == (1, 1)  # no penalty: the streaks are not in the state
    assert np.abs(values[0, 0] - expected).max() < 1e-9


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("zilch", {"target": 300, "last_round": False, "turn_minimum": 0, "farkle_penalty": 100, "no_score_bonus": 0}),
        ("boxed", {"target": 250, "opening_minimum": 100, "farkle_penalty": 150, "farkle_penalty_streak": 2}),
        # every bank larger than the largest streak total: each wavefront sweep reads this pass's banks only
        (
            "zilch",
            {"target": 400, "last_round": False, "turn_minimum": 250, "farkle_penalty": 100, "no_score_bonus": 0},
        ),
    ],
)
def test_streak_table_equals_naive_value_iteration(
    preset: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    # With a farkle penalty both players' streaks are in the state, and the penalty reaches back to smaller sums.
    monkeypatch.setattr(winprob_dp, "LAST_ROUND_MARGIN", 150)
    rules = get_rules(preset).with_options(options)
    values, _, _ = winprob_dp.solve_table(rules)
    expected = np.array(brute_streak_table(rules, 150 // 50, tol=1e-15))  # its Gauss-Seidel creeps there
    assert values.shape == expected.shape == (rules.farkle_penalty_streak,) * 2 + (rules.target // 50,) * 2
    assert np.abs(values - expected).max() < 1e-9
    free, _, _ = winprob_dp.solve_table(rules.with_options({"farkle_penalty": 0}))
    last = rules.farkle_penalty_streak - 1
    assert np.abs(values[last, 0] - free[0, 0]).max() > 1e-4  # one farkle from the penalty: it matters


@pytest.mark.parametrize(
    ("preset", "options"),
    [("busche-neller", {"target": 250, "last_round": False}), ("house", {"target": 250, "exact_target": True})],
)
def test_newton_alone_equals_naive_value_iteration(
    preset: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The secant steps solve every level met so far; the Newton fallback must be exact on its own too.
    monkeypatch.setattr(winprob_dp, "LAST_ROUND_MARGIN", 150)
    monkeypatch.setattr(winprob_dp, "_SECANT_STEPS", 0)
    calls: list[int] = []
    newton = winprob_dp._newton

    def counted(*args: Any) -> int:
        calls.append(1)
        return newton(*args)

    monkeypatch.setattr(winprob_dp, "_newton", counted)
    rules = get_rules(preset).with_options(options)
    values, _, _ = winprob_dp.solve_table(rules)
    assert calls
    assert np.abs(values[0, 0] - np.array(brute_table(rules, 150 // 50))).max() < 1e-9


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    values, _, _ = winprob_dp.solve_table(
        get_rules("busche-neller").with_options({"target": 1000, "last_round": False})
    )
    return values[0, 0]


scores = st.integers(0, 19)


@settings(max_examples=60, deadline=None)
@given(i=scores, j=scores)
def test_probabilities_and_monotone(table: np.ndarray, i: int, j: int) -> None:
    value = table[i, j]
    assert 0.0 <= value <= 1.0
    if i + 1 < 20:
        assert table[i + 1, j] >= value - 1e-12  # more banked never hurts
    if j + 1 < 20:
        assert table[i, j + 1] <= value + 1e-12
    assert value > 0.0 if i < 19 or j < 19 else True


def test_moving_first_is_an_advantage(table: np.ndarray) -> None:
    assert table[0, 0] > 0.5
    assert np.all(np.diag(table) >= 0.5 - 1e-12)  # level scores: the player to move is ahead


def test_compensation_is_the_closest_to_even() -> None:
    rules = get_rules("busche-neller").with_options({"target": 1000, "last_round": False})
    found = winprob.solve_win(rules)
    row = found.values[0]
    c = found.compensation()
    assert c % 50 == 0
    assert abs(row[c // 50] - 0.5) == pytest.approx(np.abs(row - 0.5).min())


def test_table_cached_on_disk(tmp_path: Path) -> None:
    rules = get_rules("busche-neller").with_options({"target": 500})
    first = winprob.solve_win(rules).first_player_win
    assert list(tmp_path.glob("policies/win-*.npz"))
    winprob.clear_memory_cache()
    assert winprob.solve_win(rules).first_player_win == first


def test_last_turn_never_banks_a_certain_loss() -> None:
    # The example: boxed rules, Ann banked 12,000; Bob, 8,500 behind in his last turn, throws 5,5,5,2,3,4.
    advice = winprob.advise_win((5, 5, 5, 2, 3, 4), get_rules("boxed"), (3500, 12000))
    assert advice.last_turn
    assert advice.action == "roll"
    assert advice.points_action == "bank"  # maximising points says bank: the advice names the difference
    assert all(o.action == "roll" for o in advice.alternatives)
    assert 0.0 < advice.win < 0.01


@settings(max_examples=30, deadline=None)
@given(roll=st.lists(st.integers(1, 6), min_size=1, max_size=6), behind=st.integers(1, 40))
def test_last_turn_banks_only_a_win_or_a_tie(roll: list[int], behind: int) -> None:
    rules = get_rules("boxed").with_options({"target": 2000})
    mine, best = 2000 - 50 * behind, 2000 + 50
    advice = winprob.advise_win(tuple(roll), rules, (mine, best))
    for option in (advice, *advice.alternatives):
        if option.action == "bank":  # a win, or a tie (worth one half) when throwing on is worse
            assert mine + option.points >= best
            assert mine + option.points > best or option.win == 0.5


@settings(max_examples=40, deadline=None)
@given(roll=st.lists(st.integers(1, 6), min_size=1, max_size=6), gap=st.sampled_from([50, 100, 150, 200]))
def test_never_rolls_past_an_exact_target(roll: list[int], gap: int) -> None:
    # The example, scaled down: a player at target - 100 keeps a 1 and must bank, not roll past.
    rules = get_rules("boxed").with_options({"target": 1000, "exact_target": True})
    mine = 1000 - gap
    advice = winprob.advise_win(tuple(roll), rules, (mine, 400))
    if advice.farkle:
        return
    for option in (advice, *advice.alternatives):
        if mine + option.points == 1000:
            assert option.action == "bank"
    lands = [o for o in legal_set_asides(tuple(sorted(roll)), rules) if mine + o.points == 1000]
    if lands:
        assert mine + advice.points == 1000 and advice.action == "bank"


def test_exact_target_example_keeps_the_one_and_banks() -> None:
    rules = get_rules("boxed").with_options({"target": 1000, "exact_target": True})
    advice = winprob.advise_win((1, 2, 3, 3, 4, 6), rules, (900, 500))
    assert (advice.keep, advice.action) == ((1,), "bank")


def test_advice_agrees_with_the_table_at_the_start_of_a_turn() -> None:
    rules = get_rules("busche-neller").with_options({"target": 1000, "last_round": False})
    found = winprob.solve_win(rules)
    from farklecam.scoring.chance import roll_outcomes

    total = 0.0
    for roll, p in roll_outcomes(6):
        advice = winprob.advise_win(roll, rules, (300, 450))
        total += float(p) * advice.win
    assert total == pytest.approx(found.start_chance(300, 450), abs=1e-9)


@pytest.mark.parametrize(
    ("scores", "message"),
    [((500,), "at least one other"), ((525, 100), "multiples of 50"), ((10_000, 50), "at or past the target")],
)
def test_bad_scores_are_refused(scores: tuple[int, ...], message: str) -> None:
    with pytest.raises(IllegalActionError, match=message):
        winprob.advise_win((1, 2, 3), get_rules("boxed"), scores)


def test_game_over_without_last_round() -> None:
    rules: Rules = get_rules("boxed").with_options({"last_round": False})
    with pytest.raises(IllegalActionError, match="game is over"):
        winprob.advise_win((1, 2, 3), rules, (500, 10_000))


@pytest.mark.parametrize(  # each solves a 10,000-point table: about 10 s of CPU (bench/winprob_speed.py)
    ("rules", "first", "compensation"),
    [(CARDGAMES, 0.533, None), (get_rules("busche-neller").with_options({"last_round": False}), None, 200)],
)
def test_published_anchors(rules: Rules, first: float | None, compensation: int | None) -> None:
    found = winprob.solve_win(rules)
    if first is not None:
        assert round(found.first_player_win, 3) == first
    if compensation is not None:
        assert found.compensation() == compensation


def test_last_turn_on_an_exact_target_can_only_tie() -> None:
    rules = get_rules("boxed").with_options({"target": 1000, "exact_target": True})
    landing = winprob.advise_win((1, 2, 3, 3, 4, 6), rules, (900, 1000))
    assert landing.last_turn and (landing.keep, landing.action, landing.win) == ((1,), "bank", 0.5)
    short = winprob.advise_win((5, 2, 3, 3, 4, 6), rules, (900, 1000))
    assert (short.keep, short.action) == ((5,), "roll") and 0.0 < short.win < 0.5


def test_advice_reads_the_streaks_where_a_penalty_is_played() -> None:
    rules = get_rules("busche-neller").with_options({"target": 1000, "last_round": False, "farkle_penalty": 500})
    # nothing scores: the advice is the chance to win after the farkle, the third in a row costing 500
    calm = winprob.advise_win((2, 3, 4, 6, 2, 3), rules, (600, 400), streaks=(0, 0))
    fined = winprob.advise_win((2, 3, 4, 6, 2, 3), rules, (600, 400), streaks=(2, 0))
    assert calm.farkle and fined.farkle
    table = winprob.solve_win(rules)
    assert fined.win == pytest.approx(1.0 - table.start_chance(400, 100, (0, 0)))
    assert calm.win == pytest.approx(1.0 - table.start_chance(400, 600, (0, 1)))
    assert fined.win < calm.win
    with pytest.raises(IllegalActionError, match="farkle streak"):
        winprob.advise_win((1, 2, 3, 4, 6, 6), rules, (600, 400), streaks=(3, 0))
    free = rules.with_options({"farkle_penalty": 0})  # no penalty: any streak, and it changes nothing
    assert winprob.advise_win((1, 5, 2, 3, 4, 6), free, (600, 400), streaks=(7, 1)) == winprob.advise_win(
        (1, 5, 2, 3, 4, 6), free, (600, 400)
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.001, 0.999), min_size=1, max_size=5), st.integers(0, 4), st.floats(0.0, 0.5))
def test_opponents_combine_as_strengths(chances: list[float], which: int, better: float) -> None:
    combined = winprob.combine_opponents(chances)
    assert 0.0 < combined <= min(chances) + 1e-12  # beating the field is no easier than beating any one
    k = which % len(chances)
    stronger = [*chances[:k], min(0.999, chances[k] + better), *chances[k + 1 :]]
    assert winprob.combine_opponents(stronger) >= combined - 1e-12  # a better chance against one helps
    assert winprob.combine_opponents(chances[:1]) == chances[0]
    n = len(chances) + 1
    assert winprob.combine_opponents([0.5] * (n - 1)) == pytest.approx(1 / n)  # equals share evenly
    assert winprob.combine_opponents([*chances, 0.0]) == 0.0


def test_three_players_are_valued_against_each_opponent() -> None:
    rules = get_rules("busche-neller").with_options({"target": 1000, "last_round": False})
    table = winprob.solve_win(rules)
    alone = [table.start_chance(300, 200), table.start_chance(300, 600)]
    field = winprob.advise_win((2, 3, 4, 6, 2, 3), rules, (300, 200, 600))  # a farkle: the chance after it
    assert field.farkle and field.approximate
    expected = winprob.combine_opponents([1 - table.start_chance(200, 300), 1 - table.start_chance(600, 300)])
    assert field.win == pytest.approx(expected)
    assert winprob.combine_opponents(alone) < min(alone)
    two = winprob.advise_win((1, 5, 2, 3, 4, 6), rules, (300, 600))
    three = winprob.advise_win((1, 5, 2, 3, 4, 6), rules, (300, 200, 600))
    assert three.approximate and not two.approximate
    assert three.win < two.win  # one more opponent never raises the chance to win


# ----------------------------------------------------------------------------- the chance to win now
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=6).map(tuple),
    st.integers(0, 190).map(lambda k: 50 * k),
    st.integers(0, 210).map(lambda k: 50 * k),
    st.integers(0, 30).map(lambda k: 50 * k),
)
@settings(max_examples=40, deadline=None)
def test_the_chance_now_is_what_the_advice_values_between_throws(
    roll: tuple[int, ...], mine: int, other: int, turn_total: int
) -> None:
    rules = get_rules("house")
    scores = [mine, other]
    if not legal_set_asides(roll, rules) or (other >= rules.target and rules.tie != "shared"):
        return
    advice = winprob.advise_win(roll, rules, scores, turn_total=turn_total)
    best = (advice.points, advice.dice_left, advice.win, advice.roll_win)
    rest = [(o.points, o.dice_left, o.win, o.roll_win) for o in advice.alternatives]
    for points, left, win, roll_win in (best, *rest):
        total = turn_total + points
        kept = winprob.chance_now(rules, scores, turn_total=total, dice=left, kept=True)
        assert kept == pytest.approx(win, abs=1e-12)  # the better of banking and throwing on
        if left and roll_win is not None:
            thrown = winprob.chance_now(rules, scores, turn_total=total, dice=left)
            assert thrown == pytest.approx(roll_win, abs=1e-12)
    if other < rules.target:
        assert winprob.chance_now(rules, scores) == solve_house().start_chance(mine, other)


def solve_house() -> winprob.WinTable:
    return winprob.solve_win(get_rules("house"))


def test_the_chance_now_is_for_two_players() -> None:
    with pytest.raises(IllegalActionError, match="two players"):
        winprob.chance_now(get_rules("house"), [0, 0, 0])


@pytest.mark.parametrize(
    ("preset", "target"), [("house", 2000), ("zilch", 1500), ("elizabethan", 1500), ("progressive", 1500)]
)
def test_settled_states_past_the_target_change_no_bit_of_the_table(preset: str, target: int) -> None:
    # The solve sweeps stop where the states past the target no longer depend on the farkle worth
    # (winprob_dp.Settled) and read them as closed forms: the table must be the one swept to the cut.
    rules = get_rules(preset).with_options({"target": target})
    tables = []
    for settle in (True, False):
        ctx = winprob_dp.make_context(rules, settle=settle)
        if winprob_dp.passing_modelled(rules):
            ctx.w = np.zeros(winprob_dp.offers_shape(rules))
        (winprob_dp._solve_pairs if ctx.streak == 1 else winprob_dp._solve_streaks)(ctx)
        tables.append(ctx.v)
    settled = winprob_dp.make_context(rules, settle=True).settled
    assert settled is not None
    assert settled.start.min() < (winprob_dp.LAST_ROUND_MARGIN // 50) // 2  # it does stop the sweeps early
    assert np.array_equal(tables[0], tables[1])
