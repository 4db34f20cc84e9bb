"""``bench/tables.py`` judges a table's reports against a video's truth: first report right, the rest extra."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_tables", ROOT / "bench" / "tables.py")
assert _spec is not None and _spec.loader is not None
tables = importlib.util.module_from_spec(_spec)
sys.modules["bench_tables"] = tables
_spec.loader.exec_module(tables)

TRUTH: dict[str, Any] = {
    "throws": [
        {"throw": 0, "rest_time": 1.0, "faces": [1, 5], "rethrow": 0},
        {"throw": 1, "rest_time": 5.0, "faces": [2, 2, 3], "rethrow": 1},
    ],
    "frames": [{"throw": -1}] * 10 + [{"throw": 0}] * 50 + [{"throw": 1}] * 40,
}


def test_first_report_after_rest_is_judged_and_the_rest_are_extra() -> None:
    reports = [
        (20, 1.4, (1, 5), 0),  # throw 0, right, 0.4 s after rest
        (40, 3.0, (1, 5), 0),  # throw 0 again: extra
        (80, 5.5, (2, 3, 3), 1),  # throw 1, wrong faces
        (5, 0.5, (4,), 0),  # before any throw: extra
    ]
    throws, right, extra, lags = tables.score_reports(TRUTH, reports)
    assert (throws, right, extra) == (2, 1, 2)
    assert [round(lag, 2) for lag in lags] == [0.4, 0.5]


def test_a_report_before_the_dice_rest_is_extra_and_the_throw_unreported() -> None:
    throws, right, extra, lags = tables.score_reports(TRUTH, [(60, 4.8, (2, 2, 3), 1)])
    assert (throws, right, extra, lags) == (2, 0, 1, [])
