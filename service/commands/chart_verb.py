"""``farklecam chart``: the bank line by dice left against the score gap, as a PNG (and JSON with ``--json``)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from farklecam.errors import StorageError
from farklecam.service.commands.base import (
    Command,
    add_json_flag,
    add_rules_options,
    emit,
    format_table,
    rules_from_args,
)

__all__ = ["CHART"]

#: Gaps shown in the text table (every one of them is in the JSON and the picture).
_TABLE_ROWS = 11


def _gap_range(text: str) -> tuple[int, int]:
    """``--gap-range -5000,5000``: the lowest and the highest gap."""
    try:
        low, high = (int(part.strip().replace("_", "")) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects LOW,HIGH, e.g. -5000,5000; got {text!r}") from None
    return low, high


def _configure(parser: argparse.ArgumentParser) -> None:
    # "-5000,5000" starts with a dash: read it as a value, not as an unknown option (argparse takes only
    # a plain negative number so).
    parser._negative_number_matcher = re.compile(r"^-\d[\d_]*(,\s*-?[\d_]+)*$|^-\d*\.\d+$")
    add_rules_options(parser)
    add_json_flag(parser)
    parser.add_argument(
        "--score",
        type=int,
        metavar="MINE",
        help="the banked score of the player deciding, a multiple of 50 below the target (default: half the target)",
    )
    parser.add_argument(
        "--gap-range",
        type=_gap_range,
        default=(-5000, 5000),
        metavar="LOW,HIGH",
        help="score gaps charted, the opponent's score minus MINE (default -5000,5000)",
    )
    parser.add_argument("--step", type=int, default=50, help="points between two gaps charted (default 50)")
    parser.add_argument(
        "--scale",
        choices=("log", "linear"),
        default="log",
        help="the turn total axis (default log: the lines of one die and of hot dice both readable)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="FILE.png", help="draw the chart here (a PNG, 900 x 600; without it: a table)"
    )


def _table_rows(gaps: list[int]) -> list[int]:
    """Which gaps the text table shows: round ones (every 1000, say), at most :data:`_TABLE_ROWS` of them."""
    for step in (50, 100, 250, 500, 1000, 2000, 2500, 5000, 10_000, 25_000, 50_000):
        round_ones = [k for k, gap in enumerate(gaps) if gap % step == 0]
        if 2 <= len(round_ones) <= _TABLE_ROWS:
            return round_ones
    return list(range(0, len(gaps), max(1, -(-len(gaps) // _TABLE_ROWS))))


def _render(data: dict[str, Any]) -> str:
    gaps = data["gaps"]
    rows = []
    for k in _table_rows(gaps):
        cells = ["-" if line["bank_from"][k] is None else line["bank_from"][k] for line in data["lines"]]
        rows.append((gaps[k], data["opponents"][k], *cells, data["stages"][k].replace("_", " ")))
    names = [f"{line['dice']}{' hot' if line['hot_dice'] else ''}" for line in data["lines"]]
    points = ["-" if line["points_bank_from"] is None else line["points_bank_from"] for line in data["lines"]]
    head = f"bank line, {data['rules']} rules, your score {data['score']}: bank from these turn totals, by dice left"
    lines = [head, format_table(("gap", "opponent", *names, "stage"), [*rows, ("points", "-", *points, "")])]
    lines.append(f"wrote {data['picture']}" if data.get("picture") else "(--out FILE.png draws it as a picture)")
    if data.get("approximation"):
        lines.append(f"(an approximation: {data['approximation']})")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    from farklecam.scoring.bank_line import bank_line, default_score, gap_range
    from farklecam.scoring.winprob import ready, solve_wait

    rules = rules_from_args(args)
    mine = default_score(rules) if args.score is None else args.score
    low, high = args.gap_range
    gaps = gap_range(low, high, args.step)
    if mine % 50 == 0 and 0 <= mine < rules.target and not ready(rules, [mine, 0]):  # a bad score: one error only
        wait = solve_wait(rules)
        sys.stderr.write(f"farklecam: solving the win table of these rules first ({wait}; kept for next time)\n")
    line = bank_line(rules, mine=mine, gaps=gaps)
    data = line.to_dict()
    if args.out is not None:
        from farklecam.service.chart_picture import chart_png

        try:
            args.out.write_bytes(chart_png(line, scale=args.scale))
        except OSError as exc:
            raise StorageError(f"cannot write {args.out}: {exc.strerror or exc}") from exc
        data["picture"] = str(args.out)
    emit(data, args.json, _render)
    return 0


CHART = Command(
    "chart",
    "the bank line: from which turn total to bank, by dice left, against the score gap (--out: as a PNG)",
    _configure,
    _run,
)
