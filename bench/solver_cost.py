"""How costly can one solve get inside the rule options' bounds?

    python bench/solver_cost.py [--seconds 240] [--seed 2]

Solves random corners of the bounds of :class:`farklecam.scoring.rules.Rules` (each integer
option at its smallest or largest allowed value, each switch on or off, each
kind scoring) from scratch, without any cache, for the given time, and prints
the three costliest: seconds to solve and the size of the policy the disk cache
would store. The bounds are chosen so that this stays a few seconds and a few
MB (without them, ``three_ones=10000000`` took 55 s and 69 MB).
A benchmark, not a test: the seconds depend on the machine's load.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import fields
from typing import Any

from farklecam.scoring.rules import KindScoring, Rules, option_spec
from farklecam.scoring.solver import compute_policy


def corner(rng: random.Random) -> dict[str, Any]:
    """One random corner of the options' bounds (the target and the tie rule do not reach the solver)."""
    options: dict[str, Any] = {}
    for f in fields(Rules):
        spec = option_spec(f.name)
        if spec is None or f.name in ("target", "tie"):
            continue
        if f.name == "kind_scoring":
            options[f.name] = rng.choice(list(KindScoring))
        elif spec.low is None or spec.high is None:
            options[f.name] = rng.random() < 0.6
        else:
            options[f.name] = rng.choice([spec.low, spec.high, spec.high, spec.high])
    return options


def main() -> None:
    """Solve corners until the time is up; print the costliest three."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=240.0)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    worst: list[tuple[float, int, dict[str, Any]]] = []
    solved = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        options = corner(rng)
        started = time.perf_counter()
        policy = compute_policy(Rules(**options))
        seconds = time.perf_counter() - started
        size = sum(a.nbytes for a in policy.to_arrays().values())
        worst = sorted([*worst, (seconds, size, options)], key=lambda w: -w[0])[:3]
        solved += 1
    print(f"{solved} rule sets solved; the costliest:")
    for seconds, size, options in worst:
        changed = {k: str(v) for k, v in options.items() if getattr(Rules(), k) != v}
        print(f"  {seconds:.2f} s, {size / 2**20:.1f} MiB: {changed}")


if __name__ == "__main__":
    main()
