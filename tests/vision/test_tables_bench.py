"""``bench/tables.py`` judges a table's reports against a video's truth: first report right, the rest extra."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

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


_rv_spec = importlib.util.spec_from_file_location("bench_read_videos", ROOT / "bench" / "read_videos.py")
assert _rv_spec is not None and _rv_spec.loader is not None
sys.path.insert(0, str(ROOT / "bench"))  # read_videos imports tables as its neighbour
read_videos = importlib.util.module_from_spec(_rv_spec)
_rv_spec.loader.exec_module(read_videos)


def test_judge_reports_names_the_report_judged_for_each_throw() -> None:
    reports = [(5, 0.5, (4,), 0), (20, 1.4, (1, 5), 0), (40, 3.0, (1, 5), 0), (80, 5.5, (2, 3, 3), 1)]
    assert tables.judge_reports(TRUTH, reports) == {0: 1, 1: 3}


def test_explain_throw_says_which_die_went_wrong_and_how() -> None:
    throw = {
        "labels": [
            {"box": [0, 0, 30, 30], "face": 3, "status": "ok", "size_px": 30.0},
            {"box": [100, 0, 130, 30], "face": 5, "status": "ok", "size_px": 30.0},
            {"box": [200, 0, 230, 30], "face": 2, "status": "ok", "size_px": 30.0},
            {"box": [300, 0, 330, 30], "face": None, "status": "cocked", "size_px": 30.0},
        ]
    }
    dice = [
        {"box": [1, 1, 31, 31], "face": 3, "status": "ok"},  # right
        {"box": [101, 0, 129, 30], "face": 6, "status": "ok"},  # wrong face
        {"box": [300, 0, 330, 30], "face": 4, "status": "uncertain"},  # a cocked die read uncertain
        {"box": [400, 0, 430, 30], "face": 1, "status": "ok"},  # nothing there
    ]
    image = np.zeros((40, 440, 3), np.uint8)
    image[10:20, 100:110] = 255  # a sharp edge inside the second die only
    said = read_videos.explain_throw(throw, dice, image)
    assert said[0].startswith("(5, 30 px, sharpness ") and said[0].endswith(") read 6")
    assert float(said[0].split("sharpness ")[1].split(")")[0]) > 100
    assert said[1:] == ["(2, 30 px, sharpness 0) no box", "(cocked, 30 px, sharpness 0) read uncertain (hint 4)",
                        "box with no die read 1"]  # fmt: skip
    assert read_videos.explain_throw(throw, None) == ["never reported"]
    all_right = [
        dice[0],
        dict(dice[1], face=5),
        {"box": [200, 0, 230, 30], "face": 2, "status": "ok"},
        {"box": [300, 0, 330, 30], "face": 0, "status": "cocked"},
    ]
    assert read_videos.explain_throw(throw, all_right) == []


def test_a_die_mostly_out_of_view_may_be_reported_or_not_unless_counted() -> None:
    labels = [
        {"face": 2, "status": "ok", "visible": 0.95},
        {"face": 5, "status": "ok", "visible": 0.3},  # mostly behind the picture's edge
        {"face": 1, "status": "off_tray", "visible": 0.17},
        {"face": 3, "status": "ok", "visible": 0.9},
    ]
    throw = {"faces": [2, 3, 5], "rethrow": 1, "labels": labels}
    assert tables.right_answers(throw) == {((2, 3, 5), 1), ((2, 3), 1), ((2, 3, 5), 0), ((2, 3), 0)}
    assert tables.right_answers(throw, count_occluded=True) == {((2, 3, 5), 1)}
    truth = {"throws": [{**throw, "throw": 0, "rest_time": 1.0}], "frames": [{"throw": 0}] * 30}
    missed_both = [(20, 1.5, (3, 2), 0)]
    assert tables.score_reports(truth, missed_both)[1] == 1
    assert tables.score_reports(truth, missed_both, count_occluded=True)[1] == 0
    assert tables.score_reports(truth, [(20, 1.5, (2,), 0)])[1] == 0  # a die in full view is never excused


def test_a_game_whose_log_holds_less_than_was_acknowledged_is_named_lost(capsys: Any) -> None:
    server = tables.Server("http://127.0.0.1:1", name="hall-1")
    whole, short = tables.GameTable(server, "g1", "t"), tables.GameTable(server, "g2", "t")
    whole.acknowledge(7, "hall-1 frame")
    whole.acknowledge(5, "hall-1 action")  # a smaller count answered later acknowledges nothing more
    short.acknowledge(9, "hall-2 frame")
    whole.kept, short.kept = {"hall-1": 7, "hall-2": 7}, {"hall-1": 9, "hall-2": 8}
    tables.report_kept([whole, short])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "acknowledged actions kept: 15/16"
    assert out[1].strip().startswith("LOST: table 1 game g2: acknowledged 9 (hall-2 frame)")


def test_a_camera_moves_to_the_next_server_that_is_up() -> None:
    fleet = tables.Fleet([tables.Server(f"http://127.0.0.1:{p}") for p in (1, 2, 3)], down={2})
    assert fleet.next_live(1) == 0
    assert fleet.next_live(0) == 1
