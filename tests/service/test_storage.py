"""The SQLite engine's own duties: WAL, files from before numbered migrations, failures as StorageErrors.

What every engine keeps (replay, undo, append-only records, migrations, racing writers) is
tested on both engines in ``test_store_contract.py``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from farklecam.errors import IllegalActionError, StorageError
from farklecam.scoring.actions import Keep, Roll
from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.service.storage import SCHEMA_VERSION, Games, GameStore

ANN_BANKS_650 = ["roll 5,5,2,3,4,6", "keep 5,5", "roll 3,3,3,5", "keep 3,3,3,5", "roll 1,1,6,2,6,4", "keep 1,1", "bank"]


def clock() -> float:
    clock.t += 1.5  # type: ignore[attr-defined]
    return clock.t  # type: ignore[attr-defined]


clock.t = 1_000.0  # type: ignore[attr-defined]


def played(actions: list[str], preset: str = "boxed") -> Game:
    game = Game(get_rules(preset), ["Ann", "Bob", "Cy"], first_player="Bob", clock=clock)
    for action in actions:
        game.apply(action)
    return game


@pytest.fixture
def store(tmp_path: Path) -> GameStore:
    with GameStore(tmp_path / "sub" / "games.sqlite3") as s:
        yield s


def test_store_opens_in_wal_mode_with_the_schema(store: GameStore) -> None:
    db = sqlite3.connect(store.location)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"games", "events"} <= tables


def test_a_log_that_no_longer_replays_is_a_storage_error(store: GameStore) -> None:
    store.add_game("g", played(ANN_BANKS_650[:2]))
    db = sqlite3.connect(store.location)
    db.execute("DROP TRIGGER events_no_update")
    db.execute('UPDATE events SET action = \'{"type": "bank"}\' WHERE seq = 2')
    db.commit()
    with pytest.raises(StorageError, match="cannot be replayed"):
        store.load("g")


#: The tables as files written before migrations were numbered hold them (``PRAGMA user_version`` 1).
LEGACY_SCHEMA = """
CREATE TABLE games (id TEXT PRIMARY KEY, players TEXT NOT NULL, rules TEXT NOT NULL, first_player TEXT,
    auto_farkle INTEGER NOT NULL DEFAULT 1, created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE events (game_id TEXT NOT NULL REFERENCES games(id), seq INTEGER NOT NULL, action TEXT NOT NULL,
    at REAL, PRIMARY KEY (game_id, seq)) WITHOUT ROWID;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
PRAGMA user_version = 1;
"""


def test_a_file_from_before_numbered_migrations_is_migrated_and_keeps_its_games(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    game = played(ANN_BANKS_650)
    data = game.to_dict()
    legacy = sqlite3.connect(path)
    legacy.executescript(LEGACY_SCHEMA)
    legacy.execute(
        "INSERT INTO games VALUES ('g', ?, ?, 'Bob', 1, 1.0, 2.0)",
        (json.dumps(data["players"]), json.dumps(data["rules"])),
    )
    for event in game.events:
        legacy.execute(
            "INSERT INTO events VALUES ('g', ?, ?, ?)", (event.seq, json.dumps(event.action.to_dict()), event.at)
        )
    legacy.commit()
    legacy.close()
    with GameStore(path) as store:
        assert store.load("g") == game
        versions = store.db.query("SELECT version FROM schema_version ORDER BY version")
        assert versions == [(v,) for v in range(2, SCHEMA_VERSION + 1)]  # version 1 was there already
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION  # older code refuses it now
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"tournaments", "tournament_players", "tournament_tables", "schema_version"} <= tables
    db.close()


def test_a_file_that_is_not_a_database_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError, match="cannot open the game database"):
        GameStore(path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StorageError, match="newer than this farklecam"):
        GameStore(path)


def test_a_failed_commit_drops_the_cached_game(store: GameStore) -> None:
    games = Games(store)
    game_id = games.create(played(ANN_BANKS_650[:1]))
    db = sqlite3.connect(store.location)
    db.execute("CREATE TRIGGER no_more BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    db.commit()
    with pytest.raises(StorageError, match="disk full"):
        games.apply(game_id, Keep((5, 5)))
    db.execute("DROP TRIGGER no_more")
    db.commit()
    assert len(games.get(game_id).events) == 1  # replayed from disk: the failed keep is not in force


def test_concurrent_actions_on_one_game_are_serialised(store: GameStore) -> None:
    games = Games(store)
    game_id = games.create(played([]))
    results: list[str] = []

    def throw() -> None:
        try:
            games.apply(game_id, Roll((1, 2, 3, 4, 6, 6)))
            results.append("ok")
        except IllegalActionError:
            results.append("illegal")

    threads = [threading.Thread(target=throw) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["illegal"] * 7 + ["ok"]
    assert store.row(game_id).events == 1


def test_the_cache_is_bounded_and_reloads(store: GameStore) -> None:
    games = Games(store, max_cached=2)
    ids = [games.create(played(ANN_BANKS_650[:k])) for k in range(4)]
    for k, game_id in enumerate(ids):
        assert len(games.get(game_id).events) == k
    assert len(games._cache) == 2
