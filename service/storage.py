"""Games on disk: SQLite holds each game's setup and its append-only event log.

A game is never stored as a snapshot of its state. The ``games`` table holds
what :class:`~farklecam.scoring.game.Game` is built from (players, rules, first player),
and the ``events`` table holds every accepted action in order; a game is
reloaded by replaying its events, the way python-chess keeps a move stack
rather than board dumps. So the database cannot hold a state the rules would
not reach, and a rule fix changes old games the same way it changes new ones.

Durability: the database runs in WAL mode with ``synchronous=FULL`` and every
accepted action is committed in its own transaction before the service
answers, so killing the server at any moment loses at most the action whose
answer was never sent. Triggers refuse ``UPDATE`` and ``DELETE`` on events.

:class:`GameStore` is the SQLite layer; :class:`Games` adds a per-game lock and
an in-memory cache of replayed games, and is what the routes use.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from farklecam.errors import FarkleError, StorageError
from farklecam.scoring.actions import Action, action_from_dict
from farklecam.scoring.events import Event
from farklecam.scoring.game import FORMAT, Game
from farklecam.service.errors import GameNotFoundError
from farklecam.service.sqlite_file import SqliteFile

__all__ = ["SCHEMA_VERSION", "GameRow", "GameStore", "Games", "new_game_id"]

#: ``PRAGMA user_version`` of the schema below.
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id           TEXT PRIMARY KEY,
    players      TEXT NOT NULL,              -- JSON list of names, seating order
    rules        TEXT NOT NULL,              -- JSON Rules.to_dict()
    first_player TEXT,
    auto_farkle  INTEGER NOT NULL DEFAULT 1,
    created      REAL NOT NULL,
    updated      REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    game_id TEXT NOT NULL REFERENCES games(id),
    seq     INTEGER NOT NULL,                -- 1, 2, 3... per game
    action  TEXT NOT NULL,                   -- JSON Action.to_dict()
    at      REAL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
"""


def new_game_id() -> str:
    """A short random id (12 hex digits: collisions are not a concern for one table's games)."""
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True, slots=True)
class GameRow:
    """A game as listed: its setup and how far it went, without replaying it."""

    id: str
    players: tuple[str, ...]
    rules: dict[str, Any]
    first_player: str | None
    auto_farkle: bool
    created: float
    updated: float
    events: int


class GameStore:
    """The SQLite file: open (creating the schema), write games and events, read them back.

    One connection, shared by the service's worker threads under a lock (SQLite
    serialises writers anyway; one connection keeps WAL checkpoints simple).

    Args:
        path: the database file (its folder is created); ``":memory:"`` for a throwaway store.

    Raises:
        StorageError: the file cannot be created, opened, or is not a farklecam database.
    """

    def __init__(self, path: str | Path) -> None:
        self._file = SqliteFile(path, "game database")
        self.path = self._file.path
        try:
            version = self._file.db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StorageError(f"{self.path}: database schema version {version} is newer than this farklecam")
            self._file.db.executescript(_SCHEMA)
            self._file.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the game database {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the connection (committed data is already on disk)."""
        self._file.close()

    def check(self) -> None:
        """Make sure the database file is still the one opened (see :meth:`SqliteFile.check`).

        Raises:
            StorageError: it was deleted or replaced while the server ran.
        """
        self._file.check()

    def __enter__(self) -> GameStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def add_game(self, game_id: str, game: Game, created: float | None = None) -> None:
        """Store a new game's setup and any events it already has, in one transaction."""
        now = time.time() if created is None else created
        data = game.to_dict()
        with self._file.transaction() as db:
            db.execute(
                "INSERT INTO games (id, players, rules, first_player, auto_farkle, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, json.dumps(data["players"]), json.dumps(data["rules"]), data["first_player"],
                 int(data["auto_farkle"]), now, now),
            )  # fmt: skip
            for event in game.events:
                self._insert_event(db, game_id, event)

    def append(self, game_id: str, *events: Event) -> None:
        """Commit accepted events in one transaction (normally one: on disk before the caller answers)."""
        if not events:
            return
        with self._file.transaction() as db:
            for event in events:
                self._insert_event(db, game_id, event)
            db.execute("UPDATE games SET updated = ? WHERE id = ?", (events[-1].at or time.time(), game_id))

    @staticmethod
    def _insert_event(db: sqlite3.Connection, game_id: str, event: Event) -> None:
        db.execute(
            "INSERT INTO events (game_id, seq, action, at) VALUES (?, ?, ?, ?)",
            (game_id, event.seq, json.dumps(event.action.to_dict()), event.at),
        )

    # ------------------------------------------------------------------ reading
    def row(self, game_id: str) -> GameRow:
        """One game's setup and event count.

        Raises:
            GameNotFoundError: no game has this id.
        """
        rows = self._file.query(_ROW_SQL + " WHERE g.id = ?", (game_id,))
        if not rows:
            raise GameNotFoundError(f"no game with id {game_id!r}")
        return _game_row(rows[0])

    def rows(self, limit: int = 100, offset: int = 0) -> list[GameRow]:
        """Games, most recently played first."""
        rows = self._file.query(_ROW_SQL + " ORDER BY g.updated DESC, g.id LIMIT ? OFFSET ?", (limit, offset))
        return [_game_row(r) for r in rows]

    def count(self) -> int:
        """Number of games stored."""
        return int(self._file.query("SELECT COUNT(*) FROM games")[0][0])

    def events(self, game_id: str) -> list[Event]:
        """A game's event log, oldest first (an unknown id gives an empty list)."""
        rows = self._file.query("SELECT seq, action, at FROM events WHERE game_id = ? ORDER BY seq", (game_id,))
        return [Event(int(seq), _action(text), at) for seq, text, at in rows]

    def load(self, game_id: str) -> Game:
        """Rebuild a game by replaying its events.

        Raises:
            GameNotFoundError: no game has this id.
            StorageError: the stored log no longer replays (a corrupt row, or rules changed under it).
        """
        row = self.row(game_id)
        data = {
            "format": FORMAT,
            "players": list(row.players),
            "rules": row.rules,
            "first_player": row.first_player,
            "auto_farkle": row.auto_farkle,
            "events": [e.to_dict() for e in self.events(game_id)],
        }
        try:
            return Game.from_dict(data, clock=time.time)
        except (FarkleError, ValueError, KeyError, TypeError) as exc:
            raise StorageError(f"game {game_id!r} cannot be replayed from the database: {exc}") from exc


_ROW_SQL = (
    "SELECT g.id, g.players, g.rules, g.first_player, g.auto_farkle, g.created, g.updated,"
    " (SELECT COUNT(*) FROM events e WHERE e.game_id = g.id) FROM games g"
)


def _game_row(r: tuple[Any, ...]) -> GameRow:
    return GameRow(r[0], tuple(json.loads(r[1])), json.loads(r[2]), r[3], bool(r[4]), r[5], r[6], int(r[7]))


def _action(text: str) -> Action:
    return action_from_dict(json.loads(text))


class Games:
    """The games the service plays: replayed once from the store, then kept in memory.

    Every change to a game happens under its lock (:meth:`lock`) and is followed
    by :meth:`persist`, which commits the events the store does not have yet
    before the caller answers. :meth:`apply` does both for one action; the table
    WebSocket holds the lock while its :class:`~farklecam.service.table.TableSession` may
    apply a camera throw and persists through the same method. If a commit fails
    the cached game is dropped, so the next request replays what is really on disk.

    One process owns a database file: the count of stored events is kept in memory.

    Args:
        store: the SQLite store.
        max_cached: games kept replayed in memory (least recently used are dropped).
    """

    def __init__(self, store: GameStore, max_cached: int = 64) -> None:
        self.store = store
        self.max_cached = max_cached
        self._cache: dict[str, Game] = {}
        self._stored: dict[str, int] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def lock(self, game_id: str) -> threading.RLock:
        """The game's lock (re-entrant): hold it while changing the game and persisting it."""
        with self._guard:
            return self._locks.setdefault(game_id, threading.RLock())

    def _remember(self, game_id: str, game: Game) -> None:
        with self._guard:
            self._cache.pop(game_id, None)
            self._cache[game_id] = game
            self._stored[game_id] = len(game.events)
            while len(self._cache) > self.max_cached:
                dropped = next(iter(self._cache))
                self._cache.pop(dropped)
                self._stored.pop(dropped, None)

    def _forget(self, game_id: str) -> None:
        with self._guard:
            self._cache.pop(game_id, None)
            self._stored.pop(game_id, None)

    def create(self, game: Game) -> str:
        """Store a new game; returns its id."""
        game_id = new_game_id()
        self.store.add_game(game_id, game)
        self._remember(game_id, game)
        return game_id

    def get(self, game_id: str) -> Game:
        """The game, replayed from the store if it is not in memory.

        Raises:
            GameNotFoundError: no game has this id.
            StorageError: the database file was deleted or replaced: a game in memory is not shown as kept.
        """
        self.store.check()
        with self._guard:
            cached = self._cache.get(game_id)
        if cached is not None:
            return cached
        with self.lock(game_id):
            with self._guard:
                cached = self._cache.get(game_id)
            if cached is not None:
                return cached
            try:
                game = self.store.load(game_id)
            except GameNotFoundError:
                with self._guard:
                    self._locks.pop(game_id, None)  # no lock kept for ids that name nothing
                raise
            self._remember(game_id, game)
            return game

    def persist(self, game_id: str, game: Game) -> None:
        """Commit the game's events that are not stored yet (call under :meth:`lock`).

        Raises:
            StorageError: the commit failed; the cached game is dropped (it is ahead of the disk).
        """
        with self._guard:
            stored = self._stored.get(game_id, 0) if self._cache.get(game_id) is game else None
        if stored is None:
            raise StorageError(f"game {game_id!r} changed under this table; it is reloaded from the database")
        try:
            self.store.append(game_id, *game.events[stored:])
        except BaseException:
            self._forget(game_id)
            raise
        with self._guard:
            self._stored[game_id] = len(game.events)

    def apply(self, game_id: str, action: Action) -> tuple[Game, Event]:
        """Apply one action and commit it before returning.

        Raises:
            GameNotFoundError: no game has this id.
            IllegalActionError, GameOverError: the rules refuse it (nothing is stored).
            StorageError: the commit failed (the action is not in force).
        """
        with self.lock(game_id):
            game = self.get(game_id)
            event = game.apply(action)
            self.persist(game_id, game)
            return game, event
