"""What a CLI verb is, and the options and output helpers verbs share."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from farklecam.errors import InvalidDiceError, TrayError
from farklecam.scoring.presets import get_rules, preset_names, rules_from_file
from farklecam.scoring.rules import Rules

if TYPE_CHECKING:  # the vision stack loads only when a verb reads pictures
    from farklecam.vision.profiles.profile import Profile

__all__ = [
    "Command",
    "add_json_flag",
    "add_profile_option",
    "add_rules_options",
    "add_tray_option",
    "add_turn_options",
    "emit",
    "format_table",
    "parse_dice",
    "profile_from_args",
    "rules_from_args",
    "tray_from_args",
]


@dataclass(frozen=True)
class Command:
    """One verb: its name, one-line help, how it adds its options, and what it runs."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def add_tray_option(parser: argparse.ArgumentParser) -> None:
    """``--tray x1,y1,...,x4,y4``: the tray floor's corners, calibrated once for a fixed camera; ``--straight-down``."""
    parser.add_argument(
        "--tray",
        metavar="X,Y,...",
        help="the tray floor's four corners x1,y1,...,x4,y4 in pixels, in order around it (default: found in "
        "each picture, and the camera's vertical, which the cocked test needs, found from the dice)",
    )
    parser.add_argument(
        "--straight-down",
        action="store_true",
        help="the camera looks straight down at the dice (within about 5 degrees: an overhead rig), which gives "
        "the cocked test its vertical without --tray; where the dice clearly lie under a vertical more than 10 "
        "degrees off, they are read under theirs and a notice says so",
    )


def add_profile_option(parser: argparse.ArgumentParser, *, taught: bool = False, env: str | None = None) -> None:
    """``--profile NAME``: read with a table's profile (see ``farklecam profiles``).

    ``taught``: the verb keeps every correction the players make in the profile, which the help says;
    ``env``: the environment variable that names it too.
    """
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="read with this table's profile: the dice it was taught (`farklecam teach NAME --labels DIR`) vote "
        "on every face and leaning call"
        + ("; every die corrected at the table is kept in it and counts from the next read" if taught else "")
        + (f" (also {env})" if env else ""),
    )


def profile_from_args(args: argparse.Namespace) -> Profile | None:
    """The profile named with ``--profile``, or None.

    Raises:
        ProfileError: an invalid or unknown name, or a profile that cannot be read.
    """
    from farklecam.service.profiles.store import ProfileStore

    name: str | None = args.profile
    return None if name is None else ProfileStore().open(name)


def tray_from_args(args: argparse.Namespace) -> list[list[float]] | None:
    """The corners given with ``--tray``, or None.

    Raises:
        TrayError: not exactly eight numbers, or corners that enclose no area (all equal, in a line).
    """
    from farklecam.vision.tray.outline import TrayOutline

    text: str | None = args.tray
    if text is None:
        return None
    try:
        values = [float(v) for v in text.replace(" ", ",").split(",") if v]
    except ValueError:
        values = []
    if len(values) != 8:
        raise TrayError(f"--tray needs four corners as 8 numbers x1,y1,...,x4,y4, got {text!r}")
    corners = [values[i : i + 2] for i in range(0, 8, 2)]
    try:
        TrayOutline.from_corners(corners)
    except ValueError as exc:
        raise TrayError(f"--tray {text!r} outlines no tray ({exc}); give the floor's four corners in order") from exc
    return corners


def add_rules_options(parser: argparse.ArgumentParser) -> None:
    """``--rules PRESET``, ``--rules-file FILE`` and repeatable ``--set key=value``."""
    group = parser.add_argument_group("rules")
    group.add_argument(
        "--rules", default="boxed", metavar="PRESET", help=f"rule preset: {', '.join(preset_names())} (default boxed)"
    )
    group.add_argument("--rules-file", type=Path, metavar="FILE", help="TOML rules file (preset = ... and options)")
    group.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one rule option, e.g. --set three_ones=1000 (see `farklecam rules`)",
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The rules the user asked for: file or preset, then every ``--set`` on top."""
    base = rules_from_file(args.rules_file) if args.rules_file else get_rules(args.rules)
    return base.with_settings(args.settings)


def _turn_total(text: str) -> int:
    """``--turn-total``: checked by the API's own :data:`~service.schemas.TurnTotal` rule, so both refuse alike."""
    from pydantic import TypeAdapter, ValidationError

    from farklecam.service.schemas import TurnTotal

    try:
        return int(TypeAdapter(TurnTotal).validate_python(text.strip(), strict=False))
    except ValidationError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc.errors()[0]['msg']}") from None


def add_turn_options(parser: argparse.ArgumentParser) -> None:
    """``--turn-total N`` (points already set aside, a multiple of 50) and ``--not-on-board``."""
    parser.add_argument(
        "--turn-total", type=_turn_total, default=0, metavar="N", help="points already set aside this turn"
    )
    board = parser.add_mutually_exclusive_group()
    board.add_argument("--on-board", dest="on_board", action="store_true", default=True, help="(default)")
    board.add_argument("--not-on-board", dest="on_board", action="store_false", help="no score banked yet")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """``--json``: machine-readable output on stdout."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


_DICE_SPLIT = re.compile(r"[\s,;]+")


def parse_dice(text: str | Sequence[str]) -> tuple[int, ...]:
    """Parse dice written as ``1,1,5``, ``1 1 5`` or ``115`` (faces are validated later by the rules).

    Raises:
        InvalidDiceError: anything that is not a list of whole numbers.
    """
    joined = " ".join(text) if not isinstance(text, str) else text
    tokens = [t for t in _DICE_SPLIT.split(joined.strip()) if t]
    if len(tokens) == 1 and tokens[0].isdigit() and len(tokens[0]) > 1:
        tokens = list(tokens[0])
    try:
        return tuple(int(t) for t in tokens)
    except ValueError:
        raise InvalidDiceError(f"dice must be written like 1,1,5,3 (faces 1-6), got {joined!r}") from None


def emit(data: Any, as_json: bool, render: Callable[[Any], str]) -> None:
    """Print ``data`` as JSON or through ``render`` for people."""
    sys.stdout.write((json.dumps(data) if as_json else render(data)) + "\n")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
