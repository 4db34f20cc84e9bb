"""The presets' win tables shipped in the package (farklecam.scoring.bundle_tables): present, current and still
solved."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from farklecam.scoring import policy_cache, win_offers, winprob, winprob_dp
from farklecam.scoring.presets import PRESETS, get_rules

STATES = 24  # sampled turn starts per table: each is one sweep of a whole turn


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    winprob.clear_memory_cache()


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_ships_a_current_table(name: str) -> None:
    rules = PRESETS[name].rules
    path = winprob.bundled_path(rules)
    assert path.is_file(), f"{path.name} is missing or stale: run `python -m farklecam.scoring.bundle_tables`"
    arrays = policy_cache.read_arrays(path, ("V", "meta"))
    assert arrays is not None
    assert json.loads(str(arrays["meta"]))["key"] == rules.key()
    assert winprob.ready(rules, (0, 0))  # nothing solved here: the package's table answers
    assert winprob.solve_win(rules).first_player_win == pytest.approx(float(arrays["V"][0, 0, 0, 0]))


def test_the_package_holds_no_table_that_no_preset_names() -> None:
    names = {winprob.bundled_path(p.rules).name for p in PRESETS.values()}
    assert {path.name for path in winprob.BUNDLED_DIR.glob("*.npz")} == names


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_shipped_table_is_a_fixed_point_of_the_solver(name: str) -> None:
    """Each sampled turn start, swept again from the table's own values, gives its value back.

    A table solved by an older solver or for other rules fails here, so the shipped
    files cannot drift from the code that reads them.
    """
    rules = get_rules(name)
    solved = winprob.solve_win(rules)
    table = solved.streak_values
    ctx = winprob_dp.make_context(rules)
    ctx.v = np.array(table)
    # with passes the gains are stored to SCALE: a turn swept from them moves by no more than that
    tolerance = 1e-9
    if solved.passing:
        ctx.w, ctx.w_scale, tolerance = solved.offers, win_offers.SCALE, win_offers.SCALE
    rng = np.random.default_rng(len(name))
    k, goal = table.shape[0], table.shape[2]
    a, b = rng.integers(0, k, STATES), rng.integers(0, k, STATES)
    i, j = rng.integers(0, goal, STATES), rng.integers(0, goal, STATES)
    f = winprob_dp.farkle_worth(ctx, i, j, a, b)
    offers = np.zeros((STATES, goal, rules.dice)) if solved.passing else None
    swept, _ = winprob_dp.turn_starts(ctx, i, j, f, b=b, slopes=False, offers=offers)
    assert np.abs(swept - table[a, b, i, j]).max() < tolerance
    if offers is not None:  # each pass's stored gain is what taking it is worth over starting fresh
        for k_, (mine, other) in enumerate(zip(i, j, strict=True)):
            rows = winprob_dp.offer_index(other, 0)
            stored = solved.offers[mine, rows + 1 : rows + other + 1] * win_offers.SCALE
            gain = np.maximum(offers[k_, 1 : other + 1] - swept[k_], 0.0)
            assert np.abs(stored - gain).max() < 2 * tolerance
