"""``bench/cocked_by_condition.py`` counts the cocked calls as ``farklecam.models.evaluate.run`` does, and bins every
die."""

from __future__ import annotations

import sys
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from cocked_by_condition import BINS, NO_DIE, folder_calls  # noqa: E402  (a script folder, not a package)

from farklecam.models.evaluate.run import evaluate_folder  # noqa: E402
from farklecam.vision.reader import DiceReader  # noqa: E402


def test_the_bench_counts_the_cocked_calls_as_the_evaluator_does(leaning_scenes: Path) -> None:
    reader = DiceReader()
    calls = folder_calls(reader, leaning_scenes)
    stats, problems = evaluate_folder(reader, leaning_scenes)
    assert problems == []
    assert sum(c.leaning for c in calls) == stats.cocked_labels > 0
    assert sum(c.leaning and c.called for c in calls) == stats.cocked_tp
    assert sum(c.called for c in calls) == stats.cocked_preds
    assert sum(c.read_as != NO_DIE for c in calls) == stats.labels  # one row per labelled die, plus false calls
    for key, edges in BINS.items():  # a generated scene's sidecar says every condition: each die lands in one bin
        binned = sum(sum(1 for c in calls if lo <= (c.conditions[key] or -1) < hi) for lo, hi in pairwise(edges))
        assert binned == len(calls), key
