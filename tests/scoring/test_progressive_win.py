"""Progressive by the chance to win: the two-player table that follows passes, and take-or-fresh from it."""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from farklecam.errors import IllegalActionError
from farklecam.scoring import last_round_dp, win_offers, winprob, winprob_dp
from farklecam.scoring.pass_win import advise_pass_win
from farklecam.scoring.presets import get_rules
from tests.scoring.last_round_brute import Brute
from tests.scoring.winprob_brute import brute_pass_table

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_progressive_selfplay", ROOT / "bench" / "progressive_selfplay.py")
assert _spec is not None and _spec.loader is not None
selfplay = importlib.util.module_from_spec(_spec)
sys.modules["bench_progressive_selfplay"] = selfplay
_spec.loader.exec_module(selfplay)

PROGRESSIVE = get_rules("progressive")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    winprob.clear_memory_cache()


def _within(results: Any, expected: float) -> None:
    """The mean of game results agrees with ``expected`` within four standard errors of the sample."""
    error = float(np.std(results, ddof=1)) / math.sqrt(len(results))
    assert abs(float(np.mean(results)) - expected) < 4 * error, (float(np.mean(results)), expected, error)


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("progressive", {"target": 200, "opening_minimum": 100}),  # the last round: a pass to the last turn too
        ("progressive", {"target": 200, "opening_minimum": 0, "last_round": False}),
        ("busche-neller", {"target": 200, "piggyback": True, "single_die_throws": 2, "last_round": False}),
    ],
)
def test_pass_table_equals_naive_value_iteration(
    preset: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(winprob_dp, "LAST_ROUND_MARGIN", 150)
    rules = get_rules(preset).with_options(options)
    ctx, _ = winprob_dp.solve_context(rules)
    fresh, offered = brute_pass_table(rules, 150 // 50)
    assert ctx.passing
    assert np.abs(ctx.v[0, 0] - np.array(fresh)).max() < 1e-9
    for (i, j, total, dice), value in offered.items():
        assert ctx.v[0, 0, i, j] + ctx.w[i, winprob_dp.offer_index(j, total), dice - 1] == pytest.approx(
            value, abs=1e-9
        )


def test_passes_are_followed_only_where_the_table_can_hold_them() -> None:
    assert winprob_dp.passing_modelled(PROGRESSIVE)
    assert not winprob_dp.passing_modelled(get_rules("house"))
    assert not winprob_dp.passing_modelled(PROGRESSIVE.with_options({"farkle_penalty": 500}))
    assert not winprob_dp.passing_modelled(PROGRESSIVE.with_options({"exact_target": True}))


def test_the_offers_survive_their_compact_form() -> None:
    rng = np.random.default_rng(3)
    gains = rng.random((4, 10, 6)) * rng.integers(0, 2, (4, 10, 6))
    stored = win_offers.quantize(gains)
    back = win_offers.decode(win_offers.encode(stored), stored.shape)
    assert np.array_equal(back, stored)
    assert np.abs(back * win_offers.SCALE - gains).max() <= win_offers.SCALE / 2 + 1e-15
    with pytest.raises(ValueError, match="does not match"):
        win_offers.decode(win_offers.encode(stored), (4, 10, 5))


def test_a_cached_table_answers_as_the_solve_did() -> None:
    rules = PROGRESSIVE.with_options({"target": 2000})
    solved = winprob.solve_win(rules)
    winprob.clear_memory_cache()
    read = winprob.solve_win(rules)  # from the disk cache
    assert read.passing and np.array_equal(read.offers, solved.offers)
    assert read.start_chance(500, 700, passed=(600, 2)) == solved.start_chance(500, 700, passed=(600, 2))


def test_two_players_take_or_fresh_is_the_table() -> None:
    rules = PROGRESSIVE.with_options({"target": 2000})
    table = winprob.solve_win(rules)
    rng = random.Random(5)
    for _ in range(40):
        mine, other = 50 * rng.randrange(40), 50 * rng.randrange(1, 40)
        total, dice = 50 * rng.randint(1, other // 50), rng.randint(1, 6)
        advice = advise_pass_win(rules, (mine, other), total, dice)
        # the table stores the gains of passes to SCALE, and the advice sweeps its turn from them
        assert advice.fresh_win == pytest.approx(table.start_chance(mine, other), abs=win_offers.SCALE)
        with_pass = table.start_chance(mine, other, passed=(total, dice))
        assert advice.win == pytest.approx(with_pass, abs=win_offers.SCALE)
        assert advice.take == (advice.take_win > advice.fresh_win) and advice.approximation is None


def test_the_last_turn_takes_a_pass_by_its_exact_chance(monkeypatch: pytest.MonkeyPatch) -> None:
    cut = 2000
    monkeypatch.setattr(last_round_dp, "cut_units", lambda rules: cut // 50)  # the oracle's finite game
    rng = random.Random(2)
    for _ in range(12):
        # the mover, a player still to take their last turn (the mover's pass goes to them), the trigger
        scores = [50 * rng.randrange(170, 200), 50 * rng.randrange(170, 200), 50 * rng.randrange(200, 215)]
        total, dice = 50 * rng.randint(1, 40), rng.randint(1, 6)
        left = 0 if dice == 6 else dice
        advice = advise_pass_win(PROGRESSIVE, scores, total, dice)
        assert advice.last_turn and advice.approximation is None
        assert advice.take_win == pytest.approx(
            Brute(PROGRESSIVE, scores, total, cut // 50).roll(total, left), abs=1e-9
        )
        assert advice.fresh_win == pytest.approx(Brute(PROGRESSIVE, scores, 0, cut // 50).roll(0, 0), abs=1e-9)


def test_more_players_are_a_labelled_approximation() -> None:
    rules = PROGRESSIVE.with_options({"target": 2000})
    advice = advise_pass_win(rules, (500, 700, 900), 600, 2)
    assert advice.approximation is not None and "next player only" in advice.approximation
    take_next, fresh_next = winprob.take_or_fresh(rules, 500, 700, 600, 2)
    take_far, fresh_far = winprob.take_or_fresh(rules, 500, 900, 600, 2, passes_on=False)
    assert advice.take_win == pytest.approx(winprob.combine_opponents([take_next, take_far]))
    assert advice.fresh_win == pytest.approx(winprob.combine_opponents([fresh_next, fresh_far]))


@pytest.mark.parametrize(
    ("rules", "scores", "total", "dice", "message"),
    [
        (get_rules("house"), (500, 700), 600, 2, "piggyback is off"),
        (PROGRESSIVE, (500, 700), 625, 2, "multiple of 50"),
        (PROGRESSIVE, (500, 700), 600, 7, "1-6"),
        (PROGRESSIVE, (500, 9900), 10_000, 2, "would have reached"),
    ],
)
def test_bad_passes_are_refused(rules: Any, scores: tuple[int, ...], total: int, dice: int, message: str) -> None:
    with pytest.raises(IllegalActionError, match=message):
        advise_pass_win(rules, scores, total, dice)


def test_the_roll_advice_weighs_what_a_bank_passes_on() -> None:
    """A bank's worth is the opponent's turn with that pass on offer: more dice left offer them more."""
    rules = PROGRESSIVE.with_options({"target": 2000})
    advice = winprob.advise_win((1, 5, 2, 3, 3, 6), rules, (1000, 1200), turn_total=400)
    by_keep = {o.keep: o for o in (advice, *advice.alternatives)}
    table = winprob.solve_win(rules)
    one = by_keep[(1,)].bank_win  # 500 banked, five dice passed
    both = by_keep[(1, 5)].bank_win  # 550 banked, four dice passed
    assert one == pytest.approx(1 - table.start_chance(1200, 1500, passed=(500, 5)), abs=win_offers.SCALE)
    assert both == pytest.approx(1 - table.start_chance(1200, 1550, passed=(550, 4)), abs=win_offers.SCALE)


def test_self_play_wins_as_often_as_the_table_says() -> None:
    """The advisor's decisions played against themselves: 20,000 games to 3,000 (the bench plays 100,000 to 10,000)."""
    rules = PROGRESSIVE.with_options({"target": 3000})
    policy = selfplay.build_policy(rules)
    found = selfplay.check(policy, 40, seed=4)
    assert found["take_disagreements"] == found["bank_disagreements"] == 0
    assert found["keep_worth_gap"] < 1e-6  # float32 arrays
    _within(selfplay.play_fast(policy, 20_000, seed=11), policy.first_player_win)


def test_the_advisor_itself_wins_as_often_as_the_table_says() -> None:
    """Games through the game engine, every decision asked of the advisor (to 1,000: short games)."""
    rules = PROGRESSIVE.with_options({"target": 1000})
    results = np.array([selfplay.play_engine(rules, seed) for seed in range(1000)])
    _within(results, winprob.solve_win(rules).first_player_win)


def test_a_cache_file_from_before_the_passes_gives_way_to_the_package() -> None:
    """An older cache entry of progressive holds ``V`` alone: the shipped table answers, nothing is solved again."""
    from farklecam.scoring import policy_cache

    shipped = policy_cache.read_arrays(winprob.bundled_path(PROGRESSIVE), ("V", "meta"))
    assert shipped is not None
    policy_cache.store_arrays(winprob._name(PROGRESSIVE), {"V": shipped["V"], "meta": shipped["meta"]})
    assert winprob.ready(PROGRESSIVE, (0, 0))
    table = winprob.solve_win(PROGRESSIVE)
    assert table.passing and table.first_player_win == pytest.approx(float(shipped["V"][0, 0, 0, 0]))
