"""The SQLite store: games replay identically, the log is append-only, failures are StorageErrors."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from farklecam.errors import IllegalActionError, StorageError
from farklecam.scoring.actions import Bank, Keep, Roll, parse_action
from farklecam.scoring.events import Event
from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.service.errors import GameNotFoundError
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
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"games", "events"} <= tables


@pytest.mark.parametrize("preset", ["boxed", "house", "zilch", "progressive"])
def test_a_game_replays_identically(store: GameStore, preset: str) -> None:
    game = played(ANN_BANKS_650[:2], preset)
    store.add_game("g1", game)
    for text in ANN_BANKS_650[2:]:
        store.append("g1", game.apply(text))
    game.apply("undo")
    store.append("g1", game.events[-1])
    loaded = store.load("g1")
    assert loaded == game  # rules, players, state and every event (with its time stamp)
    assert loaded.rules == get_rules(preset)
    assert store.row("g1").events == len(game.events) == 8
    assert store.events("g1") == list(game.events)


def test_custom_rules_survive_the_round_trip(store: GameStore) -> None:
    rules = get_rules("house").with_options({"target": 2000, "kind_scoring": "doubling", "piggyback": True})
    game = Game(rules, ["Ann", "Bob"], first_player="Ann")
    store.add_game("g", game)
    assert store.load("g").rules == rules


def test_the_event_log_is_append_only(store: GameStore) -> None:
    store.add_game("g", played(ANN_BANKS_650[:3]))
    db = sqlite3.connect(store.path, isolation_level=None)  # autocommit: hold no lock after a refusal
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute('UPDATE events SET action = \'{"type": "bank"}\' WHERE seq = 1')
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("DELETE FROM events")
    db.close()
    with pytest.raises(StorageError, match="UNIQUE constraint"):  # a second event 3 cannot be written
        store.append("g", Event(3, played(ANN_BANKS_650[:3]).events[2].action, None))


def test_unknown_games_and_rows(store: GameStore) -> None:
    with pytest.raises(GameNotFoundError, match="no game with id 'nope'"):
        store.load("nope")
    assert store.events("nope") == []
    assert store.count() == 0 and store.rows() == []


def test_a_log_that_no_longer_replays_is_a_storage_error(store: GameStore) -> None:
    store.add_game("g", played(ANN_BANKS_650[:2]))
    db = sqlite3.connect(store.path)
    db.execute("DROP TRIGGER events_no_update")
    db.execute('UPDATE events SET action = \'{"type": "bank"}\' WHERE seq = 2')
    db.commit()
    with pytest.raises(StorageError, match="cannot be replayed"):
        store.load("g")


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


def test_games_apply_commits_before_returning(store: GameStore) -> None:
    games = Games(store)
    game_id = games.create(played([]))
    for text in ANN_BANKS_650:
        games.apply(game_id, parse_action(text))
        assert GameStore(store.path).row(game_id).events == len(games.get(game_id).events)  # another connection sees it
    assert GameStore(store.path).load(game_id).scores["Bob"] == 650


def test_an_illegal_action_stores_nothing(store: GameStore) -> None:
    games = Games(store)
    game_id = games.create(played(ANN_BANKS_650[:2]))
    with pytest.raises(IllegalActionError):
        games.apply(game_id, Bank())
    assert store.row(game_id).events == 2


def test_a_failed_commit_drops_the_cached_game(store: GameStore) -> None:
    games = Games(store)
    game_id = games.create(played(ANN_BANKS_650[:1]))
    db = sqlite3.connect(store.path)
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
