"""exact_target reaches the points solver: totals past the target are worth a farkle."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from farklecam.scoring import solver
from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    solver.clear_memory_cache()


def naive_start(rules: Rules) -> float:
    """Expected points of a turn on the board, by plain recursion; a bank past the target scores nothing."""
    throws = {
        n: [(float(p), [(o.points, rules.dice if o.hot_dice else o.dice_left) for o in legal_set_asides(r, rules)])
            for r, p in roll_outcomes(n)]
        for n in range(1, rules.dice + 1)
    }  # fmt: skip

    @cache
    def throw(t: int, n: int) -> float:
        value = 0.0
        for p, keeps in throws[n]:
            value += p * max((after(t + pts, left) for pts, left in keeps), default=0.0)
        return value

    def after(t: int, left: int) -> float:
        if t > rules.target:
            return 0.0
        return max(float(t), throw(t, left))

    return throw(0, rules.dice)


@pytest.mark.parametrize("target", [500, 1500])
def test_exact_target_equals_naive_recursion(target: int) -> None:
    rules = get_rules("boxed").with_options({"target": target, "exact_target": True, "opening_minimum": 0})
    assert solver.solve(rules).start_value() == pytest.approx(naive_start(rules), abs=1e-9)


def test_solve_with_exact_target_differs() -> None:
    plain = get_rules("boxed").with_options({"target": 3000})
    exact = plain.with_options({"exact_target": True})
    assert solver.solve(exact).expected_turn < solver.solve(plain).expected_turn - 1


def test_never_rolls_past_an_exact_target() -> None:
    exact = get_rules("boxed").with_options({"target": 3000, "exact_target": True})
    policy = solver.solve(exact)
    assert policy.decide(3000, 1)[0] == "bank"
    assert policy.decide(2900, 0)[0] == "bank"  # six hot dice: any score but a single 1 or 5 overshoots
    assert solver.solve(get_rules("boxed").with_options({"target": 3000})).decide(2900, 0)[0] == "roll"
    assert policy.roll_value(3100, 3) == policy.farkle_value()
