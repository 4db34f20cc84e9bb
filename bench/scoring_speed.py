"""Solver and advisor speed per preset: ``python -m bench.scoring_speed`` (or ``python bench/scoring_speed.py``).

Cold solve: every cache emptied (memory, disk, the set-aside and combination
caches), so the time includes enumerating every roll's keeps. Warm advise: the
median of many ``advise`` calls on rolls already seen, with the policy in memory.
Times are wall clock and, in brackets, CPU time of this process (the two differ
on a busy machine).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time

from farklecam.scoring import combinations, setasides, turn_dp
from farklecam.scoring.advisor import advise
from farklecam.scoring.presets import get_rules, preset_names
from farklecam.scoring.rules import Rules
from farklecam.scoring.solver import clear_memory_cache, solve


def _empty_caches() -> None:
    clear_memory_cache()
    turn_dp.cached_tables.cache_clear()
    setasides._set_asides.cache_clear()
    combinations._best.cache_clear()
    combinations._table.cache_clear()


def cold_solve(rules: Rules, repeats: int) -> tuple[float, float, float]:
    """Best (wall, cpu) seconds of a solve from nothing, and the expected turn score."""
    walls, cpus = [], []
    expected = 0.0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as empty:
            os.environ["FARKLECAM_CACHE_DIR"] = empty
            _empty_caches()
            wall, cpu = time.perf_counter(), time.process_time()
            expected = solve(rules).expected_turn
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), expected


def warm_advise(rules: Rules, calls: int, seed: int = 0) -> float:
    """Median seconds of one ``advise`` call (policy and set-asides warm)."""
    rng = random.Random(seed)
    states = [
        ([rng.randint(1, 6) for _ in range(rng.randint(1, rules.dice))], 50 * rng.randint(0, 40)) for _ in range(50)
    ]
    for roll, total in states:
        advise(roll, rules, turn_total=total)
    times = []
    for i in range(calls):
        roll, total = states[i % len(states)]
        start = time.perf_counter()
        advise(roll, rules, turn_total=total)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    """Print one row per preset."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="cold solves per preset (best is shown)")
    parser.add_argument("--calls", type=int, default=5000, help="advise calls per preset")
    args = parser.parse_args(argv)
    saved = os.environ.get("FARKLECAM_CACHE_DIR")
    header = f"{'preset':<14} {'cold solve ms (cpu)':>20} {'warm advise us':>15} {'expected turn':>14}"
    print(header)
    print("-" * len(header))
    try:
        for name in preset_names():
            rules = get_rules(name)
            wall, cpu, expected = cold_solve(rules, args.repeats)
            advise_s = warm_advise(rules, args.calls)
            cold = f"{wall * 1e3:.0f} ({cpu * 1e3:.0f})"
            print(f"{name:<14} {cold:>20} {advise_s * 1e6:>15.1f} {expected:>14.3f}")
    finally:
        if saved is None:
            os.environ.pop("FARKLECAM_CACHE_DIR", None)
        else:
            os.environ["FARKLECAM_CACHE_DIR"] = saved
        clear_memory_cache()


if __name__ == "__main__":
    main()
