"""Solve the presets' two-player win tables ahead and write them into the package (``scoring/tables``).

Why ship them: a rule set with a farkle penalty (zilch) takes about a minute and a half
to solve on two cores (:mod:`farklecam.scoring.winprob_dp`), the others a few seconds, and a
server that has not solved a table answers its win advice ``available: false``
(:func:`farklecam.scoring.winprob.ready`). A shipped table makes a preset's win advice
answer from the first request (progressive's holds the passes too, 7.6 MB: :mod:`farklecam.scoring.win_offers`).
Each file is named like a cache entry (the rules'
key and :data:`farklecam.scoring.winprob.WIN_VERSION`), so a changed rule or solver never
reads a stale one; ``tests/scoring/test_bundled_tables.py`` checks that every
preset has one and that each is still a fixed point of the solver. Rewrite them
after a change to the solver or a preset:

    python -m farklecam.scoring.bundle_tables
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from farklecam.scoring import winprob
from farklecam.scoring.presets import PRESETS

__all__ = ["main", "write_table"]


def write_table(name: str, directory: Path) -> Path:
    """Solve preset ``name``'s table and write it (compressed) into ``directory``; returns the file."""
    rules = PRESETS[name].rules
    start = time.perf_counter()
    _, arrays = winprob.solve_arrays(rules, preset=name)
    path = directory / winprob.bundled_path(rules).name
    np.savez_compressed(path, **arrays)
    seconds, size = time.perf_counter() - start, path.stat().st_size // 1024
    sys.stdout.write(f"{name}: {path.name}, {seconds:.1f} s, {size} KiB\n")
    sys.stdout.flush()
    return path


def main() -> None:
    """Write every preset's table, and remove files no preset names any more (an old key or version)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=winprob.BUNDLED_DIR)
    parser.add_argument("--preset", action="append", choices=list(PRESETS), help="only these (default: all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    written = {write_table(name, args.out) for name in args.preset or PRESETS}
    if not args.preset:
        for stale in set(args.out.glob("*.npz")) - written:
            stale.unlink()
            sys.stdout.write(f"removed {stale.name}\n")


if __name__ == "__main__":
    main()
