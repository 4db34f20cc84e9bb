"""Scoring verbs: ``score``, ``advise``, ``solve`` and ``rules``."""

from __future__ import annotations

import argparse
from typing import Any

from scoring.presets import PRESETS
from service.commands.base import (
    Command,
    add_json_flag,
    add_rules_options,
    add_turn_options,
    emit,
    format_table,
    parse_dice,
    rules_from_args,
)
from service.usecases.rules import option_catalogue
from service.usecases.scoring import advice_for, score_roll

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
    _configure_dice(parser)
    add_turn_options(parser)


def _render_advice(data: dict[str, Any]) -> str:
    if data.get("farkle"):
        return "FARKLE: no die scores; the turn total is lost."
    if data.get("throw_again"):
        return f"no score yet: throw the last die again (expected {data['expected']:.1f})"
    lines = [
        f"best: keep {' '.join(map(str, data['keep']))} for {data['points']} and {data['action'].upper()}"
        f" (expected {data['expected']:.1f})"
    ]
    rows = [
        (" ".join(map(str, a["keep"])), a["points"], a["action"], f"{a['expected']:.1f}")
        for a in data.get("alternatives", [])
    ]
    if rows:
        lines.append(format_table(("other keeps", "points", "then", "expected"), rows))
    return "\n".join(lines)


def _run_advise(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    advice = advice_for(parse_dice(args.dice), rules, turn_total=args.turn_total, on_board=args.on_board)
    emit(advice, args.json, _render_advice)
    return 0


def _configure_solve(parser: argparse.ArgumentParser) -> None:
    add_rules_options(parser)
    add_json_flag(parser)


def _render_solve(data: dict[str, Any]) -> str:
    rows = [(n, f"{float(data['farkle_probability'][n]):.4f}", data["bank_at"][n]) for n in sorted(data["bank_at"])]
    return f"expected points per turn: {data['expected_turn']:.3f}\n" + format_table(
        ("dice", "P(farkle)", "bank at"), rows
    )


def _run_solve(args: argparse.Namespace) -> int:
    from scoring.solver import solve_summary

    emit(solve_summary(rules_from_args(args)), args.json, _render_solve)
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
    "advise", "best keep for a roll, then bank or roll, with expected values", _configure_advise, _run_advise
)
SOLVE = Command("solve", "solve a rule set: expected turn score, P(farkle), when to bank", _configure_solve, _run_solve)
RULES = Command(
    "rules",
    "list presets and the options in effect: what each does, its range and its rule text",
    _configure_rules,
    _run_rules,
)
