"""``farklecam serve``: the web service and the table's page, on this machine only by default."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scoring.presets import preset_names
from service.commands.base import Command

__all__ = ["SERVE"]


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help="interface to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=None, help="TCP port (default 8000)")
    parser.add_argument("--db", type=Path, default=None, metavar="PATH", help="game database file (default: user data)")
    parser.add_argument(
        "--rules", default=None, metavar="PRESET", help=f"default rule preset: {', '.join(preset_names())}"
    )
    parser.add_argument("--models", type=Path, default=None, metavar="DIR", help="folder with the ONNX models")
    parser.add_argument(
        "--straight-down",
        action="store_true",
        default=None,
        help="the tables' cameras look straight down (within about 5 degrees): the cocked test needs no marked tray; "
        "a table whose dice show a tilted camera is read under their vertical and its tray pill says so",
    )
    parser.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))


def _run(args: argparse.Namespace) -> int:
    import uvicorn

    from service.app import create_app
    from service.settings import Settings

    settings = Settings.from_env(
        host=args.host,
        port=args.port,
        db_path=args.db,
        rules=args.rules,
        model_dir=args.models,
        straight_down=args.straight_down,
    )
    if not settings.is_loopback:
        sys.stderr.write(
            f"farklecam: warning: listening on {settings.host}: anyone on this network can read and change games\n"
        )
    sys.stderr.write(f"farklecam: serving on http://{settings.host}:{settings.port}/  (games in {settings.database})\n")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=args.log_level)
    return 0


SERVE = Command("serve", "web service and the table's page (webcam in the browser)", _configure, _run)
