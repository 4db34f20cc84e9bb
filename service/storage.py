"""Games kept in a database: each game's setup and its append-only event log.

A game is never stored as a snapshot of its state. The ``games`` table holds
what :class:`~farklecam.scoring.game.Game` is built from (players, rules, first player),
and the ``events`` table holds every accepted action in order; a game is
reloaded by replaying its events, the way python-chess keeps a move stack
rather than board dumps. So the database cannot hold a state the rules would
not reach, and a rule fix changes old games the same way it changes new ones.

The database is an SQLite file (the embedded default) or a PostgreSQL server that
several server processes share (:mod:`farklecam.service.db`); the SQL is the same.
Durability: every accepted action is committed in its own transaction before the
service answers (SQLite in WAL mode with ``synchronous=FULL``), so killing the server
at any moment loses at most the action whose answer was never sent. Triggers refuse
``UPDATE`` and ``DELETE`` on events.

Event ``n`` of a game is the row keyed (game, n), so two writers can never both store
an event ``n``: the second gets a :class:`~farklecam.service.db.engine.ConflictError`,
replays what the first stored and tries again (:meth:`Games.apply`). Each commit
publishes the game's new event count (:class:`~farklecam.service.db.changes.Change`),
and every process's :class:`Games` forgets a cached game another process moved on.

:class:`GameStore` is the SQL layer; :class:`Games` adds a per-game lock and
an in-memory cache of replayed games, and is what the routes use.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farklecam.errors import FarkleError, GameOverError, IllegalActionError, StorageError
from farklecam.scoring.actions import Action, action_from_dict
from farklecam.scoring.events import Event
from farklecam.scoring.game import FORMAT, Game
from farklecam.service.db.changes import Change
from farklecam.service.db.engine import ConflictError, Database, Transaction, open_database
from farklecam.service.db.schema import SCHEMA_VERSION
from farklecam.service.db.target import DatabaseTarget, PostgresTarget, SqliteTarget, parse_target
from farklecam.service.errors import GameNotFoundError, StaleGameError

__all__ = ["SCHEMA_VERSION", "GameRow", "GameStore", "Games", "new_game_id"]

#: Tries :meth:`Games.apply` makes when another process keeps storing the game's next event first.
ATTEMPTS = 3


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
    head_start: dict[str, int] = field(default_factory=dict)


class GameStore:
    """The games' tables: open (migrating the schema), write games and events, read them back.

    Args:
        where: an open database, or what names one (an SQLite file's path, a ``postgresql://`` URL);
            a database this store opened is closed by :meth:`close`, one it was given is not.

    Raises:
        StorageError: the database cannot be opened or reached, is not a farklecam database, or is newer than this code.
        ValueError: ``where`` is a URL this code cannot use.
    """

    def __init__(self, where: Database | DatabaseTarget | str | Path) -> None:
        if isinstance(where, str | Path):
            where = parse_target(where)
        self.db: Database
        if isinstance(where, SqliteTarget | PostgresTarget):
            self.db, self._owns = open_database(where), True
        else:
            self.db, self._owns = where, False
        self.location = self.db.location

    def close(self) -> None:
        """Close the database if this store opened it (committed data is already kept)."""
        if self._owns:
            self.db.close()

    def check(self) -> None:
        """Make sure the database can still keep anything (an SQLite file deleted while open cannot).

        Raises:
            StorageError: it was deleted or replaced while the server ran.
        """
        self.db.check()

    def __enter__(self) -> GameStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def add_game(self, game_id: str, game: Game, created: float | None = None) -> None:
        """Store a new game's setup and any events it already has, in one transaction.

        Raises:
            ConflictError: a game with this id exists.
            StorageError: the commit failed.
        """
        now = time.time() if created is None else created
        data = game.to_dict()
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO games (id, players, rules, first_player, auto_farkle, created, updated, head_start)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (game_id, json.dumps(data["players"]), json.dumps(data["rules"]), data["first_player"],
                 int(data["auto_farkle"]), now, now, json.dumps(game.head_start) if game.head_start else None),
            )  # fmt: skip
            for event in game.events:
                self._insert_event(tx, game_id, event)
            tx.publish(Change("game", game_id, len(game.events)))

    def append(self, game_id: str, *events: Event) -> None:
        """Commit accepted events in one transaction (normally one: kept before the caller answers).

        Raises:
            ConflictError: another writer stored an event with one of these numbers first (nothing is stored).
            StorageError: the commit failed.
        """
        if not events:
            return
        with self.db.transaction() as tx:
            for event in events:
                self._insert_event(tx, game_id, event)
            tx.execute("UPDATE games SET updated = ? WHERE id = ?", (events[-1].at or time.time(), game_id))
            tx.publish(Change("game", game_id, events[-1].seq))

    @staticmethod
    def _insert_event(tx: Transaction, game_id: str, event: Event) -> None:
        tx.execute(
            "INSERT INTO events (game_id, seq, action, at) VALUES (?, ?, ?, ?)",
            (game_id, event.seq, json.dumps(event.action.to_dict()), event.at),
        )

    # ------------------------------------------------------------------ reading
    def row(self, game_id: str) -> GameRow:
        """One game's setup and event count.

        Raises:
            GameNotFoundError: no game has this id.
        """
        rows = self.db.query(_ROW_SQL + " WHERE g.id = ?", (game_id,))
        if not rows:
            raise GameNotFoundError(f"no game with id {game_id!r}")
        return _game_row(rows[0])

    def rows(self, limit: int = 100, offset: int = 0) -> list[GameRow]:
        """Games, most recently played first."""
        rows = self.db.query(_ROW_SQL + " ORDER BY g.updated DESC, g.id LIMIT ? OFFSET ?", (limit, offset))
        return [_game_row(r) for r in rows]

    def count(self) -> int:
        """Number of games stored."""
        return int(self.db.query("SELECT COUNT(*) FROM games")[0][0])

    def event_count(self, game_id: str) -> int:
        """How many events the game has stored (0 for an unknown id)."""
        return int(self.db.query("SELECT COUNT(*) FROM events WHERE game_id = ?", (game_id,))[0][0])

    def events(self, game_id: str) -> list[Event]:
        """A game's event log, oldest first (an unknown id gives an empty list)."""
        rows = self.db.query("SELECT seq, action, at FROM events WHERE game_id = ? ORDER BY seq", (game_id,))
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
            "head_start": row.head_start,
            "events": [e.to_dict() for e in self.events(game_id)],
        }
        try:
            return Game.from_dict(data, clock=time.time)
        except (FarkleError, ValueError, KeyError, TypeError) as exc:
            raise StorageError(f"game {game_id!r} cannot be replayed from the database: {exc}") from exc


_ROW_SQL = (
    "SELECT g.id, g.players, g.rules, g.first_player, g.auto_farkle, g.created, g.updated,"
    " (SELECT COUNT(*) FROM events e WHERE e.game_id = g.id), g.head_start FROM games g"
)


def _game_row(r: tuple[Any, ...]) -> GameRow:
    head_start = json.loads(r[8]) if r[8] else {}
    return GameRow(r[0], tuple(json.loads(r[1])), json.loads(r[2]), r[3], bool(r[4]), r[5], r[6], int(r[7]), head_start)


def _action(text: str) -> Action:
    return action_from_dict(json.loads(text))


class Games:
    """The games the service plays: replayed once from the store, then kept in memory.

    Every change to a game happens under its lock (:meth:`lock`) and is followed
    by :meth:`persist`, which commits the events the store does not have yet
    before the caller answers. :meth:`apply` does both for one action; the table
    WebSocket holds the lock while its :class:`~farklecam.service.table.TableSession` may
    apply a camera throw and persists through the same method. If a commit fails
    the cached game is dropped, so the next request replays what is really stored.

    Other processes may share the database (PostgreSQL): the lock is this process's only,
    and the store's key on (game, event number) is what keeps two processes from both
    storing an event ``n``. A cached game is forgotten when the database says another
    process moved it on (:meth:`_heard`), and :meth:`apply` replays and tries again when
    its commit finds the event taken.

    Args:
        store: the games' store.
        max_cached: games kept replayed in memory (least recently used are dropped).
    """

    def __init__(self, store: GameStore, max_cached: int = 64) -> None:
        self.store = store
        self.max_cached = max_cached
        self._cache: dict[str, Game] = {}
        self._stored: dict[str, int] = {}
        self._locks: dict[str, threading.RLock] = {}
        #: The highest event count heard for recently changed games: a game replayed while its change was
        #: on its way is not cached behind it.
        self._heard_events: OrderedDict[str, int] = OrderedDict()
        self._guard = threading.Lock()
        self._unsubscribe = store.db.subscribe(self._heard)

    def close(self) -> None:
        """Stop following the database's changes (the store is closed by its owner)."""
        self._unsubscribe()

    def _heard(self, change: Change | None) -> None:
        """Forget a cached game another process moved on; everything, where changes may have been missed."""
        with self._guard:
            if change is None:
                self._cache.clear()
                self._stored.clear()
                self._heard_events.clear()
                return
            if change.kind != "game":
                return
            self._heard_events[change.key] = max(change.events, self._heard_events.pop(change.key, 0))
            while len(self._heard_events) > 4 * self.max_cached:
                self._heard_events.popitem(last=False)
            cached = self._cache.get(change.key)
            if cached is not None and len(cached.events) < change.events:
                self._cache.pop(change.key)
                self._stored.pop(change.key, None)

    def lock(self, game_id: str) -> threading.RLock:
        """The game's lock (re-entrant): hold it while changing the game and persisting it."""
        with self._guard:
            return self._locks.setdefault(game_id, threading.RLock())

    def _remember(self, game_id: str, game: Game) -> None:
        with self._guard:
            self._cache.pop(game_id, None)
            if self._heard_events.get(game_id, 0) > len(game.events):
                return  # replayed before another process's commit that was heard meanwhile: not worth keeping
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
            ConflictError: another writer moved the game on first (its next event is taken, or this
                object is no longer the cached game); the cached game is dropped.
            StorageError: the commit failed; the cached game is dropped (it is ahead of the database).
        """
        with self._guard:
            stored = self._stored.get(game_id, 0) if self._cache.get(game_id) is game else None
        if stored is None:  # reloaded meanwhile, or forgotten because another process moved it on
            raise ConflictError(f"game {game_id!r} changed under this table; it is reloaded from the database")
        try:
            self.store.append(game_id, *game.events[stored:])
        except BaseException:
            self._forget(game_id)
            raise
        with self._guard:
            self._stored[game_id] = len(game.events)

    def apply(self, game_id: str, action: Action, *, expected_events: int | None = None) -> tuple[Game, Event]:
        """Apply one action and commit it before returning.

        Where another process stored the game's next event first, the game is replayed with
        it and the action tried again (it may now be illegal), up to :data:`ATTEMPTS` times.
        So is a refusal (an illegal action, a stale ``expected_events``) by a cached game that
        the database shows to be behind: the refusal must come from the game as it is.

        Args:
            game_id: the game.
            action: what to do.
            expected_events: the event count the client last saw; None skips the check.

        Raises:
            GameNotFoundError: no game has this id.
            StaleGameError: ``expected_events`` is not the game's event count (another action came first).
            IllegalActionError, GameOverError: the rules refuse it (nothing is stored).
            StorageError: the commit failed (the action is not in force).
        """
        with self.lock(game_id):
            tries_left = ATTEMPTS
            while True:
                game = self.get(game_id)
                try:
                    if expected_events is not None and expected_events != len(game.events):
                        raise StaleGameError(
                            f"the game has moved on: it has {len(game.events)} events, this action expected "
                            f"{expected_events} (another device acted first); now: {game.state.describe()}"
                        )
                    event = game.apply(action)
                except (StaleGameError, IllegalActionError, GameOverError):
                    if tries_left > 1 and self._behind(game_id, game):
                        tries_left -= 1
                        continue  # refused by a game another process had moved on: ask the game as it is
                    raise
                try:
                    self.persist(game_id, game)
                except ConflictError:
                    tries_left -= 1
                    if not tries_left:
                        raise
                    continue  # persist dropped the game: the next get replays what the other process stored
                return game, event

    def _behind(self, game_id: str, game: Game) -> bool:
        """Whether the database holds more of the game than ``game`` (then it is forgotten, to be replayed)."""
        if self.store.event_count(game_id) == len(game.events):
            return False
        self._forget(game_id)
        return True
