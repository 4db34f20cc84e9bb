"""Scoring verbs: ``score``, ``advise``, ``solve`` and ``rules``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from farklecam.errors import IllegalActionError
from farklecam.scoring.presets import PRESETS
from farklecam.scoring.rules import Rules
from farklecam.service.commands.base import (
    Command,
    add_json_flag,
    add_rules_options,
    add_turn_options,
    emit,
    format_table,
    parse_dice,
    rules_from_args,
)
from farklecam.service.usecases.rules import option_catalogue
from farklecam.service.usecases.scoring import advice_for, pass_advice_for, score_roll

__all__ = ["ADVISE", "RULES", "SCORE", "SOLVE"]


def _configure_dice(parser: argparse.ArgumentParser) -> None:
    add_rules_options(parser)
    add_json_flag(parser)
    parser.add_argument("dice", nargs="+", metavar="DICE", help="the faces thrown, e.g. 1,1,1,5,3,4")


def _render_score(data: dict[str, Any]) -> str:
    head = f"roll {' '.join(map(str, data['roll']))}"
    if data["farkle"]:
        return f"{head}: FARKLE (no die scores)"
    rows = [
        (
            " ".join(map(str, o["keep"])),
            o["points"],
            o["dice_left"],
            "yes" if o["hot_dice"] else "",
            ", ".join(o["combinations"]),
        )
        for o in data["options"]
    ]
    return head + "\n" + format_table(("keep", "points", "dice left", "hot dice", "counted as"), rows)


def _run_score(args: argparse.Namespace) -> int:
    emit(score_roll(parse_dice(args.dice), rules_from_args(args)), args.json, _render_score)
    return 0


def _configure_advise(parser: argparse.ArgumentParser) -> None:
    add_rules_options(parser)
    add_json_flag(parser)
    parser.add_argument(
        "dice", nargs="*", metavar="DICE", help="the faces thrown, e.g. 1,1,1,5,3,4 (none with --passed)"
    )
    add_turn_options(parser)
    parser.add_argument(
        "--passed",
        type=_passed,
        metavar="TOTAL,DICE",
        help="progressive, the start of a turn: the last banker passed DICE dice with TOTAL points; say whether "
        "to take them or start fresh (by points, and with --scores by the chance to win; the last score banked "
        "the pass). Give no dice with it",
    )
    parser.add_argument(
        "--scores",
        type=_scores,
        metavar="MINE,OTHER[,...]",
        help="banked scores, the player to move first: advise by the chance to win (a score at or past the "
        "target among the others means this is the last turn)",
    )
    parser.add_argument(
        "--throws-left",
        type=int,
        metavar="N",
        help="a single die (Elizabethan rules): throws still allowed for it, this one included "
        "(default: all of them); a miss with throws to spare is thrown again",
    )
    parser.add_argument(
        "--streaks",
        type=_streaks,
        metavar="MINE,OTHER[,...]",
        help="with --scores and a farkle penalty: each player's farkles in a row, in the same order (default 0s)",
    )


def _passed(text: str) -> tuple[int, int]:
    """``--passed 1600,2``: the total passed, then the dice."""
    parts = [part.strip().replace("_", "") for part in text.split(",")]
    try:
        total, dice = (int(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects the total and the dice, e.g. 1600,2; got {text!r}") from None
    return total, dice


def _streaks(text: str) -> list[int]:
    """``--streaks 2,0``: whole numbers, one per score."""
    try:
        return [int(part.strip()) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects whole numbers separated by commas, e.g. 2,0; got {text!r}") from None


def _scores(text: str) -> list[int]:
    """``--scores 2500,4000``: whole numbers, at least two."""
    try:
        scores = [int(part.strip().replace("_", "")) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expects whole numbers separated by commas, e.g. 2500,4000; got {text!r}"
        ) from None
    if len(scores) < 2:
        raise argparse.ArgumentTypeError(
            f"needs the player's score and at least one other, e.g. 2500,4000; got {text!r}"
        )
    return scores


def _pct(p: float) -> str:
    """A chance as a percentage, with two significant digits below 1% (a last turn's 0.04% is not 0.0%)."""
    return f"{p:.1%}" if p >= 0.01 or p == 0 else f"{100 * p:.2g}%"


def _keep_text(keep: list[int]) -> str:
    return " ".join(map(str, keep)) or "-"


def _render_win(win: dict[str, Any]) -> str:
    where = "last turn, to beat " if win["last_turn"] else "against "
    head = f"scores {', '.join(map(str, win['scores']))} ({where}{win['opponent']})"
    note = f"\n(an approximation: {win['approximation']})" if win.get("approximation") else ""
    if win["farkle"]:
        return f"{head}\nFARKLE: chance to win now {_pct(win['win_probability'])}{note}"
    if win.get("throw_again"):
        return (
            f"{head}\nno score yet: throw the last die again (chance to win {_pct(win['win_probability'])};"
            f" every throw left misses {_pct(win['farkle_probability'])} of the time){note}"
        )
    bank = win.get("bank_probability")
    lines = [
        head,
        f"to win: keep {_keep_text(win['keep'])} for {win['points']} and {win['action'].upper()}"
        f" (chance to win {_pct(win['win_probability'])})",
        f"  banking: {_pct(bank) if bank is not None else 'not allowed'}; throwing on: "
        f"{_pct(win['roll_probability'])}, its next throw farkles {_pct(win['farkle_probability'])}",
    ]
    if win["points_advice"]:
        theirs = win["points_advice"]
        lines.append(
            f"for the most points: keep {_keep_text(theirs['keep'])} and {theirs['action'].upper()}"
            f" (chance to win {_pct(theirs['win_probability'])}: it costs {_pct(theirs['cost'])} of the chance to win)"
        )
    rows = [
        (
            _keep_text(a["keep"]),
            a["points"],
            a["action"],
            _pct(a["win_probability"]),
            "-" if a["bank_probability"] is None else _pct(a["bank_probability"]),
            _pct(a["roll_probability"]),
            _pct(a["farkle_probability"]),
        )
        for a in win["alternatives"]
    ]
    if rows:
        titles = ("other keeps", "points", "then", "chance to win", "if banked", "if thrown on", "next throw farkles")
        lines.append(format_table(titles, rows))
    return "\n".join(lines) + note


def _dice_word(n: int) -> str:
    return f"{n} {'die' if n == 1 else 'dice'}"


def _render_pass(data: dict[str, Any]) -> str:
    passed = data["passed"]
    choice = "TAKE the passed dice" if passed["points_take"] else "START FRESH"
    points = (
        f"for the most points: {choice} (expected {passed['expected_take']:.1f} points taking,"
        f" {passed['expected_fresh']:.1f} fresh)"
    )
    head = (
        f"passed: {passed['total']} with {_dice_word(passed['dice'])}; their throw scores nothing"
        f" {_pct(passed['farkle_probability'])} of the time"
    )
    win = passed.get("win")
    if win is None:
        return f"{head}\n{points.replace('for the most points', 'best', 1)}"
    if not win["available"]:
        return f"{head}\n{points}\n(no chance to win yet: {win['why']})"
    where = "last turn, to beat " if win["last_turn"] else "against "
    lines = [
        f"scores {', '.join(map(str, win['scores']))} ({where}{win['opponent']})",
        head,
        f"to win: {'TAKE the passed dice' if win['take'] else 'START FRESH'} (chance to win"
        f" {_pct(win['win_probability'])}; taking {_pct(win['take_probability'])},"
        f" fresh {_pct(win['fresh_probability'])})",
    ]
    if win["points_take"] != win["take"]:
        lines.append(f"{points}: it costs {_pct(win['points_cost'])} of the chance to win")
    else:
        lines.append(f"{points}: the same choice")
    if win.get("approximation"):
        lines.append(f"(an approximation: {win['approximation']})")
    return "\n".join(lines)


def _render_advice(data: dict[str, Any]) -> str:
    if "passed" in data:
        return _render_pass(data)
    if data.get("win"):
        return _render_win(data["win"])
    if data.get("farkle"):
        return "FARKLE: no die scores; the turn total is lost."
    if data.get("throw_again"):
        return (
            f"no score yet: throw the last die again (expected {data['expected']:.1f};"
            f" every throw left misses {_pct(data['farkle_probability'])} of the time)"
        )
    lines = [
        f"best: keep {_keep_text(data['keep'])} for {data['points']} and {data['action'].upper()}"
        f" (expected {data['expected']:.1f}; throwing on, the next throw farkles {_pct(data['farkle_probability'])})"
    ]
    rows = [
        (_keep_text(a["keep"]), a["points"], a["action"], f"{a['expected']:.1f}", _pct(a["farkle_probability"]))
        for a in data.get("alternatives", [])
    ]
    if rows:
        lines.append(format_table(("other keeps", "points", "then", "expected", "next throw farkles"), rows))
    return "\n".join(lines)


def _announce_solve(rules: Rules, scores: Sequence[int]) -> None:
    """Say on stderr (stdout stays the answer, JSON too) that a win table is solved first, and how long it takes."""
    from farklecam.scoring.winprob import ready, solve_wait

    if not ready(rules, scores):
        wait = solve_wait(rules)
        sys.stderr.write(f"farklecam: solving the win table of these rules first ({wait}; kept for next time)\n")


def _run_advise(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    if args.passed is not None and (args.dice or args.turn_total or args.throws_left is not None):
        raise IllegalActionError("--passed advises the start of a turn: give no dice, --turn-total or --throws-left")
    if args.passed is None and not args.dice:
        raise IllegalActionError("give the dice thrown (e.g. 1,1,5,3) or, at the start of a turn, --passed TOTAL,DICE")
    if args.scores is not None:
        _announce_solve(rules, args.scores)
    on_board = args.on_board if args.scores is None else args.scores[0] > 0
    if args.streaks is not None and args.scores is None:
        raise IllegalActionError("--streaks goes with --scores (the players' farkles in a row, in the same order)")
    if args.passed is not None:
        total, dice = args.passed
        passed = pass_advice_for(rules, total, dice, on_board=on_board, scores=args.scores, streaks=args.streaks)
        emit(passed, args.json, _render_advice)
        return 0
    advice = advice_for(
        parse_dice(args.dice),
        rules,
        turn_total=args.turn_total,
        on_board=on_board,
        farkle_streak=args.streaks[0] if args.streaks else 0,
        throws_left=args.throws_left,
        scores=args.scores,
        streaks=args.streaks,
    )
    emit(advice, args.json, _render_advice)
    return 0


def _configure_solve(parser: argparse.ArgumentParser) -> None:
    add_rules_options(parser)
    add_json_flag(parser)
    parser.add_argument(
        "--players",
        type=int,
        choices=(2,),
        help="2: also solve the game to win (first_player_win, and the compensation in points for the second "
        "player that makes it closest to even; the first solve of a rule set takes seconds, about a minute and a half "
        "with a farkle penalty, then it is cached)",
    )


#: What each figure of ``solve`` covers under piggyback rules, in words (the JSON's ``passed_dice``).
_POINTS_COVER = "a turn from all dice and nothing carried: passed dice are not in these figures"
_WIN_COUNTED = "passed dice counted: every bank passes its total and dice, taken where that wins more often"
_WIN_LEFT_OUT = "passed dice left out: every turn starts with all dice (with a farkle penalty or an exact target)"


def _render_solve(data: dict[str, Any]) -> str:
    rows = [(n, f"{float(data['farkle_probability'][n]):.4f}", data["bank_at"][n]) for n in sorted(data["bank_at"])]
    covers = data.get("passed_dice", {})
    points = f" ({covers['points']})" if "points" in covers else ""
    text = f"expected points per turn: {data['expected_turn']:.3f}{points}\n" + format_table(
        ("dice", "P(farkle)", "bank at"), rows
    )
    if "first_player_win" in data:
        win = f" ({covers['win']})" if "win" in covers else ""
        text += (
            f"\ntwo players playing to win{win}: the first wins {data['first_player_win']:.1%};"
            f" {data['compensation']} points to the second player make it closest to even"
        )
    return text


def _run_solve(args: argparse.Namespace) -> int:
    from farklecam.scoring.solver import solve_summary

    rules = rules_from_args(args)
    data = solve_summary(rules)
    covers = {"points": _POINTS_COVER} if rules.piggyback else {}
    if args.players == 2:
        from farklecam.scoring.winprob import solve_win

        _announce_solve(rules, [0, 0])
        table = solve_win(rules)
        data["first_player_win"] = table.first_player_win
        data["compensation"] = table.compensation()
        if rules.piggyback:
            covers["win"] = _WIN_COUNTED if table.passing else _WIN_LEFT_OUT
    if covers:
        data["passed_dice"] = covers
    emit(data, args.json, _render_solve)
    return 0


def _configure_rules(parser: argparse.ArgumentParser) -> None:
    add_rules_options(parser)
    add_json_flag(parser)


def _render_rules(data: dict[str, Any]) -> str:
    presets = format_table(("preset", "summary"), list(data["presets"].items()))
    rows = [(o["name"], o["value"], o["allowed"], o["description"]) for o in data["options"]]
    current = format_table(("option", "value", "allowed", "what it does"), rows)
    sources = "\n".join(f"  {o['name']}: {o['source']}" for o in data["options"])
    name = data["rules"]["name"]
    return (
        f"{presets}\n\nrules in effect ({name}):\n{current}\n\nwhere each option comes from (shared/rules):\n{sources}"
    )


def _run_rules(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    data = {
        "presets": {name: p.summary for name, p in PRESETS.items()},
        "rules": rules.to_dict(),
        "options": option_catalogue(rules),
    }
    emit(data, args.json, _render_rules)
    return 0


SCORE = Command("score", "list every legal set-aside of a roll", _configure_dice, _run_score)
ADVISE = Command(
    "advise",
    "best keep for a roll, then bank or roll, with expected values (with --scores: by the chance to win)",
    _configure_advise,
    _run_advise,
)
SOLVE = Command("solve", "solve a rule set: expected turn score, P(farkle), when to bank", _configure_solve, _run_solve)
RULES = Command(
    "rules",
    "list presets and the options in effect: what each does, its range and its rule text",
    _configure_rules,
    _run_rules,
)
