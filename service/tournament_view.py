"""What the organiser sees: every table live, the standings, who goes on, the next seating, CSV.

One function builds the view from the store (:func:`tournament_view`), and the CLI's
``standings --json``, the API and the organiser page all show that same dict; each table says
where its camera streams now (``camera``: the server, or null: :mod:`farklecam.service.live_tables`);
:func:`standings_csv` writes it as a spreadsheet, one row per player and round.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from farklecam.scoring.tournament import MAX_PLAYERS, MIN_PLAYERS, TableResult, Tournament, TournamentError, rank_round
from farklecam.service.live_tables import live_cameras
from farklecam.service.tournament_store import TournamentStore

__all__ = ["CSV_COLUMNS", "standings_csv", "table_link", "tournament_view"]

#: Columns of :func:`standings_csv`.
CSV_COLUMNS = ("round", "table", "rank", "player", "score", "winner", "advances", "game")


def table_link(game_id: str) -> str:
    """The table's camera page: the page opens the game named in its address's fragment."""
    return f"/#game={game_id}"


def tournament_view(store: TournamentStore, name: str) -> dict[str, Any]:
    """The tournament as JSON-ready data (see the module docstring).

    Raises:
        TournamentNotFoundError: no tournament has this name.
    """
    tournament = store.get(name)
    plan = tournament.plan if len(tournament.players) >= MIN_PLAYERS else ()
    tables = store.tables(name)
    cameras = live_cameras(store.games.store.db, [t.game_id for t in tables])
    rounds: list[dict[str, Any]] = []
    results: list[TableResult] | None = None
    for index in range(len(tournament.seatings)):
        games = [store.games.get(t.game_id) for t in tables if t.round == index]
        ids = [t.game_id for t in tables if t.round == index]
        over = all(g.is_over for g in games)
        scored = [TableResult(g.players, tuple(g.scores[p] for p in g.players), g.winners) for g in games]
        results = scored if over else None  # only a finished round says who goes on
        standings = rank_round(plan[index], scored, tournament.players) if over else ()
        going = {s.player for s in standings if s.advances}
        rounds.append(
            {
                "name": plan[index].name,
                "rules": plan[index].rules,
                "complete": over,
                "tables": [
                    {
                        "table": t + 1,
                        "game": game_id,
                        "link": table_link(game_id),
                        "players": list(game.players),
                        "scores": [game.scores[p] for p in game.players],
                        "rules": game.rules.name,
                        "phase": str(game.phase),
                        "current": game.current_player,
                        "winners": list(game.winners),
                        "advance": [p for p in game.players if p in going],
                        "camera": cameras[game_id].to_dict() if game_id in cameras else None,
                    }
                    for t, (game_id, game) in enumerate(zip(ids, games, strict=True))
                ],
                "standings": [s.to_dict() for s in standings],
                "advance": [s.player for s in standings if s.advances],
            }
        )
    return {
        "name": tournament.name,
        "seed": tournament.seed,
        "players": list(tournament.players),
        "max_players": MAX_PLAYERS,
        "min_players": MIN_PLAYERS,
        "started": tournament.started,
        "plan": [p.to_dict() for p in plan],
        "rounds": rounds,
        "next_round": _next_round(tournament, results),
        "champion": _champion(tournament, rounds),
    }


def _next_round(tournament: Tournament, results: list[TableResult] | None) -> dict[str, Any] | None:
    """The next round's name and seating once it can be known (seeding is reproducible), else None."""
    try:
        after = tournament.start_next(results)
    except TournamentError:  # too few players, a round still playing, or the final played
        return None
    return {"name": after.plan[len(after.seatings) - 1].name, "seating": [list(t) for t in after.seatings[-1]]}


def _champion(tournament: Tournament, rounds: list[dict[str, Any]]) -> str | None:
    if not rounds or len(rounds) < len(tournament.plan) or not rounds[-1]["complete"]:
        return None
    advance: list[str] = rounds[-1]["advance"]
    return advance[0] if advance else None


def standings_csv(view: dict[str, Any]) -> str:
    """The view as CSV: a row per player and round (rank and advances blank while the round plays)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for round_ in view["rounds"]:
        ranks = {s["player"]: s for s in round_["standings"]}
        for table in round_["tables"]:
            for player, score in zip(table["players"], table["scores"], strict=True):
                line = ranks.get(player)
                writer.writerow(
                    [
                        round_["name"],
                        table["table"],
                        "" if line is None else line["rank"],
                        player,
                        score,
                        "yes" if player in table["winners"] else "",
                        "" if line is None else ("yes" if line["advances"] else "no"),
                        table["game"],
                    ]
                )
    return out.getvalue()
