"""``farklecam live``: a window on the camera that keeps score for the table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

from farklecam.errors import CameraError, InvalidRulesError
from farklecam.service.commands.base import (
    Command,
    add_profile_option,
    add_rules_options,
    add_tray_option,
    profile_from_args,
    rules_from_args,
    tray_from_args,
)

__all__ = ["LIVE", "parse_head_start", "parse_players"]


def parse_players(text: str | None) -> tuple[str, ...]:
    """``"Ann, Bob"`` -> ``("Ann", "Bob")``; None or empty -> ``()`` (the saved game's players).

    Raises:
        InvalidRulesError: fewer than two names, or a name twice.
    """
    if not text:
        return ()
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if len(names) < 2 or len(set(names)) != len(names):
        raise InvalidRulesError(f"--players needs two or more different names separated by commas, got {text!r}")
    return names


def parse_head_start(text: str | None) -> dict[str, int] | Literal["fair"] | None:
    """``"fair"``, or ``"Bob=200,Cy=400"`` -> ``{"Bob": 200, "Cy": 400}``; None for none.

    Raises:
        InvalidRulesError: text that is neither (the game checks the names and points).
    """
    if not text:
        return None
    if text == "fair":
        return "fair"
    given: dict[str, int] = {}
    for part in text.split(","):
        name, sep, points = part.partition("=")
        if not sep or not name.strip() or not points.strip().isdigit():
            raise InvalidRulesError(f"--head-start is fair or NAME=POINTS[,NAME=POINTS...], got {text!r}")
        given[name.strip()] = int(points)
    return given


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _configure(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--camera", type=int, default=0, metavar="N", help="camera index (default 0)")
    source.add_argument("--video", type=Path, metavar="FILE", help="play a video file instead of a camera")
    source.add_argument("--demo", action="store_true", help="scripted throws: try the window without camera or model")
    add_rules_options(parser)
    parser.add_argument("--players", metavar="A,B,...", help="players in seating order (default: the saved game's)")
    parser.epilog = (
        "The game is saved after every action and resumed next time unless other players or rules are asked for."
    )
    parser.add_argument("--game-file", type=Path, metavar="FILE", help="where the game is saved (default: user data)")
    parser.add_argument("--new", dest="new_game", action="store_true", help="start a new game (the old one is kept)")
    parser.add_argument(
        "--roll-off", action="store_true",
        help="a new game starts with a roll-off: each player throws one die in turn, the highest starts "
        "(default: the first player starts)",
    )  # fmt: skip
    parser.add_argument(
        "--head-start", metavar="fair|NAME=POINTS,...",
        help="a new game gives these players a head start: fair gives the second of two players the points "
        "that make the game closest to even (from the rules' win table); or points by name, e.g. Bob=200",
    )  # fmt: skip
    parser.add_argument("--models", type=Path, metavar="DIR", help="folder with the ONNX models (default: bundled)")
    add_tray_option(parser)
    add_profile_option(parser, taught=True)
    parser.add_argument(
        "--read-every", type=_positive, default=1, metavar="K", help="read one still frame in K (slow machines: 2-3)"
    )


def _run(args: argparse.Namespace) -> int:
    from farklecam.service.live.app import LiveOptions, run_live
    from farklecam.service.live.gamefile import GameFile
    from farklecam.vision.settle.detector import SettleConfig

    asked = args.rules_file is not None or args.settings or args.rules != "boxed"  # else: the saved game's
    options = LiveOptions(
        rules=rules_from_args(args) if asked else None,
        players=parse_players(args.players),
        camera=args.camera,
        video=args.video,
        demo=args.demo,
        game_file=args.game_file,
        new_game=args.new_game,
        roll_off=args.roll_off,
        head_start=parse_head_start(args.head_start),
        model_dir=args.models,
        tray=tray_from_args(args),
        straight_down=args.straight_down,
        profile=profile_from_args(args),
        settle=SettleConfig(read_every=args.read_every),
    )
    try:
        return run_live(options)
    except CameraError as exc:
        raise CameraError(f"{exc}; the saved game is kept in {GameFile(args.game_file).path}") from exc


LIVE = Command("live", "a window on the camera that reads throws and keeps score", _configure, _run)
