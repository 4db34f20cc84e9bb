"""The ``farklecam`` command line: one verb per job, JSON with ``--json``, tables without.

This module only builds the parser and turns every :class:`~farklecam.errors.FarkleError`
into one clear line on stderr and exit status 2; each verb lives in its own
module under :mod:`farklecam.service.commands` and calls the same library functions the
web service does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from farklecam import __version__
from farklecam.errors import FarkleError
from farklecam.service.commands import COMMANDS

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (every verb registers its own sub-parser)."""
    parser = argparse.ArgumentParser(
        prog="farklecam",
        description="Read Farkle dice from a camera or photos, score every legal set-aside and advise the best play.",
    )
    parser.add_argument("--version", action="version", version=f"farklecam {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for command in COMMANDS:
        sub = verbs.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status (0 ok, 1 partial failure, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except FarkleError as exc:
        print(f"farklecam: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("farklecam: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `farklecam ... | head` closed the pipe: not an error worth a traceback
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
