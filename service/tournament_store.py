"""Tournaments in the database: sign-ups and seatings beside the games each table plays.

A tournament is kept the way :mod:`farklecam.service.storage` keeps a game: never as a
snapshot, only as what it is rebuilt from. The ``tournaments`` table holds the
name and the seed, ``tournament_players`` the sign-up list in order, and
``tournament_tables`` which stored game each round's table plays (the game's row
holds its seating). Results are read off those games, whose event logs are
already durable, so standings after a restart are what they were before it.

The three tables live in the games' database (:mod:`farklecam.service.db.schema`),
are append-only (triggers refuse ``UPDATE`` and ``DELETE``), and every change is
one transaction: a sign-up request is stored whole or not at all, and a round's
tables are recorded together once their games exist. Each change reads what it
builds on inside its transaction, serialised on the tournament across every process
sharing the database, so two servers cannot both sign up player 12 or both seat a
round. A kill between creating a round's games and recording them leaves only
unreferenced games; starting the round again seats it the same way (the seed is
kept) with new games. Every change is published
(:class:`~farklecam.service.db.changes.Change`) for the pages that follow it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from farklecam.scoring.game import Game
from farklecam.scoring.tournament import TableResult, Tournament, TournamentError, check_name, table_rules
from farklecam.service.db.changes import Change
from farklecam.service.db.engine import Database, Queries, Rows
from farklecam.service.db.target import DatabaseTarget
from farklecam.service.errors import GameNotFoundError
from farklecam.service.storage import Games, GameStore

__all__ = ["TableGame", "TournamentNotFoundError", "TournamentStore", "open_store"]


class TournamentNotFoundError(GameNotFoundError):
    """No tournament has this name (404)."""


@dataclass(frozen=True, slots=True)
class TableGame:
    """One round's table: where it sits in the tournament and the game it plays."""

    round: int
    table: int
    game_id: str


class TournamentStore:
    """Tournaments in the games' database; tables are games created through ``games``.

    Args:
        games: the service's games (their store's database also holds the tournaments).
        owns_games: :meth:`close` closes the games' store too (the CLI's store owns it; the service's does not).
    """

    def __init__(self, games: Games, *, owns_games: bool = False) -> None:
        self.games, self._owns_games = games, owns_games
        self.db: Database = games.store.db
        self.location = self.db.location

    def close(self) -> None:
        """Close the games' store if this store owns it (the service closes its own)."""
        if self._owns_games:
            self.games.close()
            self.games.store.close()

    # ------------------------------------------------------------------ reading
    def names(self) -> list[str]:
        """Every tournament, newest first."""
        return [r[0] for r in self.db.query("SELECT name FROM tournaments ORDER BY created DESC, name")]

    def tables(self, name: str) -> list[TableGame]:
        """Every table seated so far, by round and table."""
        return _tables(self.db.query(_TABLES_SQL, (name,)))

    def get(self, name: str) -> Tournament:
        """The tournament as its sign-ups and the seatings of its stored games.

        Raises:
            TournamentNotFoundError: no tournament has this name.
        """
        return self._get(self.db, name)

    def _get(self, tx: Queries, name: str) -> Tournament:
        rows = tx.query("SELECT seed FROM tournaments WHERE name = ?", (name,))
        if not rows:
            raise TournamentNotFoundError(f"no tournament named {name!r}")
        players = tuple(
            r[0] for r in tx.query("SELECT name FROM tournament_players WHERE tournament = ? ORDER BY seq", (name,))
        )
        seatings: list[list[tuple[str, ...]]] = []
        for table in _tables(tx.query(_TABLES_SQL, (name,))):
            if table.round == len(seatings):
                seatings.append([])
            seatings[table.round].append(self.games.store.row(table.game_id).players)
        return Tournament(name, int(rows[0][0]), players, tuple(tuple(s) for s in seatings))

    def results(self, name: str, round_index: int) -> list[TableResult] | None:
        """The round's table results, or ``None`` while any of its games is still being played."""
        results = []
        for table in self.tables(name):
            if table.round != round_index:
                continue
            game = self.games.get(table.game_id)
            if not game.is_over:
                return None
            results.append(TableResult(game.players, tuple(game.scores[p] for p in game.players), game.winners))
        return results

    # ------------------------------------------------------------------ writing
    def create(self, name: str, seed: int | None = None) -> Tournament:
        """A new tournament; without ``seed`` one is drawn (and kept: seating stays reproducible).

        Raises:
            InvalidTournamentError: a malformed name or seed.
            TournamentError: the name is taken, in any case ("Cup" when "cup" exists).
        """
        tournament = Tournament(check_name(name, "tournament name"), secrets.randbelow(2**31) if seed is None else seed)
        with self.db.transaction() as tx:
            tx.serialize("tournament names")
            taken = tx.query("SELECT name FROM tournaments WHERE lower(name) = lower(?)", (name,))
            if taken:  # "Cup" beside "cup" would be two tournaments that people call by one name
                raise TournamentError(
                    f"a tournament named {taken[0][0]!r} already exists (names are compared ignoring case)"
                )
            tx.execute(
                "INSERT INTO tournaments (name, seed, created) VALUES (?, ?, ?)", (name, tournament.seed, time.time())
            )
            tx.publish(Change("tournament", name))
        return tournament

    def signup(self, name: str, players: Sequence[str]) -> Tournament:
        """Sign players up, all of them or (when one is refused) none.

        Raises:
            TournamentNotFoundError: no such tournament.
            TournamentError, InvalidTournamentError: see :meth:`farklecam.scoring.tournament.Tournament.signup`.
        """
        with self.db.transaction() as tx:
            tx.serialize(f"tournament {name}")
            before = self._get(tx, name)
            after = before.signup(players)
            for seq, player in enumerate(after.players[len(before.players) :], len(before.players) + 1):
                tx.execute(
                    "INSERT INTO tournament_players (tournament, seq, name) VALUES (?, ?, ?)", (name, seq, player)
                )
            tx.publish(Change("tournament", name))
        return after

    def start(self, name: str) -> Tournament:
        """Seat the next round (round 1 closes the sign-up) and create a game for each of its tables.

        Raises:
            TournamentNotFoundError: no such tournament.
            TournamentError: too few players, a table of the current round still playing, the final is over,
                or another server seated this round meanwhile.
        """
        tournament = self.get(name)
        current = len(tournament.seatings) - 1
        results = self.results(name, current) if tournament.started else None
        if tournament.started and results is None:
            raise TournamentError(
                f"{tournament.plan[current].name} of {name!r} is still being played: every table must finish first"
            )
        after = tournament.start_next(results)
        index = len(after.seatings) - 1
        plan = after.plan[index]
        ids = [
            self.games.create(Game(table_rules(plan.rules), seating, clock=time.time))
            for seating in after.seatings[index]
        ]
        with self.db.transaction() as tx:
            tx.serialize(f"tournament {name}")
            seated = tx.query(
                "SELECT COUNT(*) FROM tournament_tables WHERE tournament = ? AND round = ?", (name, index)
            )
            if seated[0][0]:  # its games stay unreferenced, as after a kill before this transaction
                raise TournamentError(f"{plan.name} of {name!r} was seated meanwhile (by another server)")
            for table, game_id in enumerate(ids):
                tx.execute(
                    "INSERT INTO tournament_tables (tournament, round, table_no, game_id) VALUES (?, ?, ?, ?)",
                    (name, index, table, game_id),
                )
            tx.publish(Change("tournament", name))
        return after

    def __enter__(self) -> TournamentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_TABLES_SQL = "SELECT round, table_no, game_id FROM tournament_tables WHERE tournament = ? ORDER BY round, table_no"


def _tables(rows: Rows) -> list[TableGame]:
    return [TableGame(int(r), int(t), str(g)) for r, t, g in rows]


def open_store(where: DatabaseTarget | str | Path) -> TournamentStore:
    """A store over the games' database ``where`` names (the CLI's way in; the service shares its ``Games``).

    Raises:
        StorageError: the database cannot be opened or reached.
        ValueError: ``where`` is a URL this code cannot use.
    """
    return TournamentStore(Games(GameStore(where)), owns_games=True)
