"""``farklecam profiles list|show NAME|export NAME DIR|forget NAME``: the tables' profiles kept on this machine."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from farklecam.service.commands.base import Command, add_json_flag, emit, format_table

if TYPE_CHECKING:
    from farklecam.vision.profiles.profile import Profile

__all__ = ["PROFILES", "summary"]


def summary(profile: Profile) -> dict[str, Any]:
    """What a profile holds, for people and ``--json``: corrections by truth, pictures, first and last."""
    corrections = profile.corrections
    truths = Counter(c.truth for c in corrections)
    return {
        "name": profile.name,
        "folder": str(profile.folder),
        "corrections": len(corrections),
        "truths": dict(sorted(truths.items())),
        "pictures": len({c.source for c in corrections if c.source}),
        "first": corrections[0].when if corrections else None,
        "last": corrections[-1].when if corrections else None,
        "classifier": profile.embedding_source,
    }


def _truths(counts: dict[str, int]) -> str:
    return ", ".join(f"{truth} x{n}" for truth, n in counts.items()) or "-"


def _list(args: argparse.Namespace) -> int:
    from farklecam.service.profiles.store import ProfileStore

    store = ProfileStore()
    rows = [summary(store.open(name)) for name in store.names()]

    def render(data: list[dict[str, Any]]) -> str:
        if not data:
            return f"no profiles in {store.root}; teach one with `farklecam teach NAME --labels DIR`"
        return format_table(
            ("name", "corrections", "truths", "last"),
            [(r["name"], r["corrections"], _truths(r["truths"]), r["last"] or "-") for r in data],
        )

    emit(rows, args.json, render)
    return 0


def _show(args: argparse.Namespace) -> int:
    from farklecam.service.profiles.store import ProfileStore

    data = summary(ProfileStore().open(args.name))

    def render(r: dict[str, Any]) -> str:
        return "\n".join(
            [
                f"profile {r['name']} ({r['folder']})",
                f"  corrections: {r['corrections']} from {r['pictures']} pictures",
                f"  truths:      {_truths(r['truths'])}",
                f"  first, last: {r['first'] or '-'}, {r['last'] or '-'}",
                f"  features of: classifier {r['classifier'] or '-'}",
            ]
        )

    emit(data, args.json, render)
    return 0


def _export(args: argparse.Namespace) -> int:
    from farklecam.service.profiles.export import export_profile
    from farklecam.service.profiles.store import ProfileStore

    profile = ProfileStore().open(args.name)
    done = export_profile(profile, args.out)
    left = f" ({done.left_out} dice off the tray with no face given left out)" if done.left_out else ""
    sys.stdout.write(f"wrote {done.written} crops and YOLO labels of {profile.name} to {args.out}{left}\n")
    return 0


def _forget(args: argparse.Namespace) -> int:
    from farklecam.service.profiles.store import ProfileStore

    held = ProfileStore().forget(args.name)
    sys.stdout.write(f"forgot profile {args.name} and its {held} corrections\n")
    return 0


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "Profiles live in the user data folder's profiles/ ($FARKLECAM_PROFILES_DIR overrides it)."
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every profile and what it holds")
    add_json_flag(listing)
    listing.set_defaults(act=_list)
    show = actions.add_parser("show", help="one profile: corrections by truth, pictures, first and last")
    show.add_argument("name", metavar="NAME")
    add_json_flag(show)
    show.set_defaults(act=_show)
    export = actions.add_parser(
        "export",
        help="write the profile's crops and YOLO labels (class = face - 1, 6 leaning; then ok, cocked or off_tray) "
        "to DIR/images and DIR/labels, as the training commands read them",
    )
    export.add_argument("name", metavar="NAME")
    export.add_argument("out", type=Path, metavar="DIR")
    export.set_defaults(act=_export)
    forget = actions.add_parser("forget", help="delete a profile and everything it was taught")
    forget.add_argument("name", metavar="NAME")
    forget.set_defaults(act=_forget)


def _run(args: argparse.Namespace) -> int:
    status: int = args.act(args)
    return status


PROFILES = Command("profiles", "list, show, export or forget the tables' profiles", _configure, _run)
