"""Time a two-player win table's solve and the advice read from it.

Solves the table from scratch (a fresh cache directory), prints CPU and wall
seconds and the two anchors' quantities, then times :func:`farklecam.scoring.winprob.advise_win`
on random positions: the first roll of a turn (its states swept once) and again
(memoised).

Run: ``python bench/winprob_speed.py --rules busche-neller --set last_round=false``
(``--cache-dir DIR`` reuses a table solved there before: then only the advice is timed;
``--against REV`` also solves it with ``scoring/winprob_dp.py`` as of git revision REV, the
last build, in the same run, and prints the ratio of the two solve times).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.scoring import winprob, winprob_dp
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules


def _against(rev: str, rules: Rules, wall: float) -> dict[str, object]:
    """Solve the same table with the solver core of git revision ``rev``: its wall seconds and the ratio."""
    repo = Path(__file__).resolve().parents[1]
    source = subprocess.run(
        ["git", "show", f"{rev}:scoring/winprob_dp.py"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    # a real file: numba caches a compiled kernel next to its source, and refuses source it cannot locate
    path = Path(tempfile.mkdtemp(prefix="winprob-then-")) / "winprob_dp_then.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("winprob_dp_then", path)
    assert spec is not None and spec.loader is not None
    then = importlib.util.module_from_spec(spec)
    sys.modules[then.__name__] = then  # its dataclasses look their module up
    spec.loader.exec_module(then)
    start = time.perf_counter()
    then.solve_table(rules)
    seconds = time.perf_counter() - start
    return {"rev": rev, "solve_wall_s": round(seconds, 1), "ratio_then_to_now": round(seconds / wall, 2)}


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="boxed")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--players", type=int, default=2, help="players in the advised positions (2-8)")
    parser.add_argument("--cache-dir", help="cache directory to reuse (default: a fresh one, so the table is solved)")
    parser.add_argument("--against", metavar="REV", help="also solve with winprob_dp.py of git revision REV")
    args = parser.parse_args()
    rules = get_rules(args.rules).with_settings(args.set)
    os.environ["FARKLECAM_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="winprob-speed-")
    if args.cache_dir is None:  # the presets' tables ship solved: look in an empty folder instead, so it is solved
        winprob.BUNDLED_DIR = Path(tempfile.mkdtemp(prefix="winprob-speed-none-"))
    wall, cpu = time.perf_counter(), time.process_time()
    table = winprob.solve_win(rules)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rng = random.Random(1)
    goal = rules.target // 50
    first, again = [], []
    for _ in range(args.positions):
        scores = tuple(rng.randrange(goal) * 50 for _ in range(args.players))
        roll = tuple(rng.randint(1, 6) for _ in range(rules.dice))
        start = time.perf_counter()
        winprob.advise_win(roll, rules, scores)
        first.append(time.perf_counter() - start)
        start = time.perf_counter()
        winprob.advise_win(roll, rules, scores)
        again.append(time.perf_counter() - start)
    first.sort()
    again.sort()
    against = _against(args.against, rules, wall) if args.against else None
    print(
        json.dumps(
            {
                "against": against,
                "rules": rules.to_dict(),
                "table_from_cache": args.cache_dir is not None and cpu < 1,
                "solve_cpu_s": round(cpu, 1),
                "solve_wall_s": round(wall, 1),
                "first_player_win": round(table.first_player_win, 5),
                "compensation": table.compensation(),
                "advice_first_ms_median": round(1000 * first[len(first) // 2], 2),
                "advice_first_ms_max": round(1000 * first[-1], 2),
                "advice_again_ms_median": round(1000 * again[len(again) // 2], 3),
                "threads": winprob_dp._THREADS,
                "players": args.players,
                "load_average": os.getloadavg()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
