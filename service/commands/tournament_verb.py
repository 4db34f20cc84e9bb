"""``farklecam tournament``: run the house rules' tournament from the command line, or simulate one.

``new``, ``signup``, ``start``, ``standings`` and ``export`` work on the same
database ``farklecam serve`` uses (``--db``, a file's path or a ``postgresql://`` URL, else
``FARKLECAM_DB``, else ``FARKLECAM_DB_PATH``, else the user data folder), so an organiser
can seat a round here and the tables play it on their camera pages. ``simulate`` plays a
whole tournament with the advisor and stores nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from farklecam.errors import StorageError
from farklecam.scoring.tournament import MAX_PLAYERS, MIN_PLAYERS
from farklecam.scoring.tournament_sim import simulate
from farklecam.service.commands.base import Command, add_json_flag, emit, format_table
from farklecam.service.tournament_store import TournamentStore, open_store
from farklecam.service.tournament_view import standings_csv, tournament_view

__all__ = ["TOURNAMENT"]


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", default=None, metavar="PATH|URL", help="game database: a file or postgresql:// URL (default as `serve`)"
    )


def _configure(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    new = steps.add_parser("new", help="create a tournament (its seed is drawn and kept unless given)")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--seed", type=int, default=None, help="seat every round from this seed (a whole number >= 0)")
    signup = steps.add_parser("signup", help=f"sign players up (at most {MAX_PLAYERS}, unique names)")
    signup.add_argument("name", metavar="NAME")
    signup.add_argument("players", nargs="+", metavar="PLAYER")
    start = steps.add_parser("start", help="seat the next round (round 1 closes the sign-up) and create its games")
    start.add_argument("name", metavar="NAME")
    standings = steps.add_parser("standings", help="every table, the standings and who goes on")
    standings.add_argument("name", metavar="NAME")
    add_json_flag(standings)
    export = steps.add_parser("export", help="write the standings as CSV")
    export.add_argument("name", metavar="NAME")
    export.add_argument("--csv", type=Path, required=True, metavar="FILE", help="the CSV file to write")
    for sub in (new, signup, start, standings, export):
        _add_db(sub)
    sim = steps.add_parser("simulate", help="play a whole tournament with the advisor making every choice")
    sim.add_argument("--players", type=int, default=MAX_PLAYERS, help=f"{MIN_PLAYERS}-{MAX_PLAYERS} (default 40)")
    sim.add_argument("--seed", type=int, default=0, help="seats every round and seeds every table's dice")
    sim.add_argument(
        "--progressive-final-at", type=int, default=None, metavar="TURNS",
        help="the organiser switches the final to progressive rules after this many turns",
    )  # fmt: skip
    add_json_flag(sim)


def _store(args: argparse.Namespace) -> TournamentStore:
    from farklecam.service.settings import Settings

    return open_store(Settings.from_env(db=args.db).database)


def _render(view: dict[str, Any]) -> str:
    lines = [f"tournament {view['name']} (seed {view['seed']}): {len(view['players'])} signed up"]
    if not view["started"]:
        lines.append("not started: " + (", ".join(view["players"]) or "nobody yet"))
    for round_ in view["rounds"]:
        state = "finished" if round_["complete"] else "playing"
        lines.append(f"\n{round_['name']} ({round_['rules']}, {state})")
        rows = [
            (t["table"], p, s, "winner" if p in t["winners"] else "", "goes on" if p in t["advance"] else "", t["link"])
            for t in round_["tables"]
            for p, s in zip(t["players"], t["scores"], strict=True)
        ]
        lines.append(format_table(("table", "player", "score", "", "", "camera page"), rows))
    if view["next_round"]:
        seats = "; ".join(f"table {i}: {', '.join(t)}" for i, t in enumerate(view["next_round"]["seating"], 1))
        lines.append(f"\nnext: {view['next_round']['name']}: {seats}")
    if view["champion"]:
        lines.append(f"\nwinner: {view['champion']}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    if args.step == "simulate":
        report = simulate(args.players, args.seed, progressive_final_at=args.progressive_final_at).to_dict()
        emit(report, args.json, _render_simulation)
        return 0
    with _store(args) as store:
        if args.step == "new":
            tournament = store.create(args.name, args.seed)
            sys.stdout.write(f"tournament {tournament.name} created (seed {tournament.seed})\n")
        elif args.step == "signup":
            tournament = store.signup(args.name, args.players)
            sys.stdout.write(f"{len(tournament.players)} of {MAX_PLAYERS} signed up to {tournament.name}\n")
        elif args.step == "start":
            tournament = store.start(args.name)
            sys.stdout.write(_render(tournament_view(store, args.name)) + "\n")
        elif args.step == "standings":
            emit(tournament_view(store, args.name), args.json, _render)
        else:
            text = standings_csv(tournament_view(store, args.name))
            try:
                args.csv.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise StorageError(f"cannot write {args.csv}: {exc.strerror or exc}") from exc
            sys.stdout.write(f"wrote {args.csv} ({text.count(chr(10)) - 1} rows)\n")
    return 0


def _render_simulation(report: dict[str, Any]) -> str:
    lines = []
    for round_ in report["rounds"]:
        lines.append(f"{round_['name']} ({round_['rules']})")
        for i, t in enumerate(round_["tables"], 1):
            seats = ", ".join(f"{p} {s}" for p, s in zip(t["players"], t["scores"], strict=True))
            lines.append(f"  table {i}: {seats}  -> {', '.join(t['advance'])}")
    lines.append(f"winner: {report['winner']}")
    return "\n".join(lines)


TOURNAMENT = Command(
    "tournament",
    "the house rules' tournament: new, signup, start, standings, export, simulate",
    _configure,
    _run,
)
