"""The storage contract every engine keeps: the same tests on an SQLite file and on a PostgreSQL server.

Games are created, listed and replayed identically, undo is an event like any other, the
records only grow, the schema is migrated once and a newer one refused, tournaments keep
their sign-ups and seatings, the pictures of camera-scored throws are kept, listed, fetched
and deleted (never the log) within their bounds, and writers on two connections (threads,
then processes) racing on one game lose no acknowledged action and store none twice.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from farklecam.errors import IllegalActionError, StorageError
from farklecam.scoring.actions import Bank, parse_action
from farklecam.scoring.events import Event
from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.scoring.tournament import TournamentError
from farklecam.service.db.changes import Change
from farklecam.service.db.engine import ConflictError, open_database
from farklecam.service.db.schema import MIGRATIONS, SCHEMA_VERSION
from farklecam.service.db.target import DatabaseTarget
from farklecam.service.errors import GameNotFoundError, PictureNotFoundError, StaleGameError
from farklecam.service.picture_store import ThrowPictures
from farklecam.service.storage import Games, GameStore
from farklecam.service.throw_picture import MAX_PICTURE_BYTES, ThrowPicture, make_picture
from farklecam.service.tournament_store import TournamentNotFoundError, TournamentStore, open_store
from farklecam.vision.reading import Reading

ANN_BANKS_650 = ["roll 5,5,2,3,4,6", "keep 5,5", "roll 3,3,3,5", "keep 3,3,3,5", "roll 1,1,6,2,6,4", "keep 1,1", "bank"]
#: A turn that always banks 1000: repeated, a game that never ends under a target of a million.
TURN = ["roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank"]


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        self.t += 1.5
        return self.t


def played(actions: list[str], preset: str = "boxed") -> Game:
    game = Game(get_rules(preset), ["Ann", "Bob", "Cy"], first_player="Bob", clock=Clock())
    for action in actions:
        game.apply(action)
    return game


def endless() -> Game:
    return Game(get_rules("boxed").with_options({"target": 1_000_000}), ["Ann", "Bob"], first_player="Ann")


@pytest.fixture
def store(target: DatabaseTarget) -> Iterator[GameStore]:
    with GameStore(target) as opened:
        yield opened


# ---------------------------------------------------------------------------- games
def test_games_are_created_listed_and_found(store: GameStore) -> None:
    assert store.count() == 0 and store.rows() == []
    store.add_game("old", played(ANN_BANKS_650[:2]), created=10.0)
    store.add_game("new", played([]), created=20.0)
    assert store.count() == 2
    assert [r.id for r in store.rows()] == ["new", "old"]  # most recently played first
    assert [r.id for r in store.rows(limit=1, offset=1)] == ["old"]
    row = store.row("old")
    assert (row.players, row.first_player, row.auto_farkle, row.created, row.events) == (
        ("Ann", "Bob", "Cy"), "Bob", True, 10.0, 2
    )  # fmt: skip
    assert row.rules == get_rules("boxed").to_dict()
    with pytest.raises(ConflictError):
        store.add_game("old", played([]))


@pytest.mark.parametrize("preset", ["boxed", "house", "zilch", "progressive"])
def test_a_game_replays_identically_with_its_undo(store: GameStore, preset: str) -> None:
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
    assert store.rows()[0].updated == game.events[-1].at


def test_custom_rules_survive_the_round_trip(store: GameStore) -> None:
    rules = get_rules("house").with_options({"target": 2000, "kind_scoring": "doubling", "piggyback": True})
    store.add_game("g", Game(rules, ["Ann", "Bob"], first_player="Ann"))
    assert store.load("g").rules == rules


def test_a_head_start_survives_the_round_trip(store: GameStore) -> None:
    game = Game(get_rules("house"), ["Ann", "Bob"], first_player="Ann", head_start={"Bob": 200})
    store.add_game("g", game)
    for text in ANN_BANKS_650:
        game.apply(text)
        store.append("g", game.events[-1])
    loaded = store.load("g")
    assert loaded == game and loaded.head_start == {"Bob": 200} and store.row("g").head_start == {"Bob": 200}
    assert loaded.scores == {"Ann": 650, "Bob": 200}
    store.add_game("plain", played([]))
    assert store.row("plain").head_start == {} and "head_start" not in store.load("plain").to_dict()


def test_unknown_games(store: GameStore) -> None:
    with pytest.raises(GameNotFoundError, match="no game with id 'nope'"):
        store.load("nope")
    assert store.events("nope") == []


def test_records_only_grow(store: GameStore) -> None:
    game = played(ANN_BANKS_650[:3])
    store.add_game("g", game)
    TournamentStore(Games(store)).create("cup", seed=1)
    for statement in (
        'UPDATE events SET action = \'{"type": "bank"}\' WHERE seq = 1',
        "DELETE FROM events",
        "UPDATE tournaments SET seed = 2",
        "DELETE FROM tournaments",
    ):
        with pytest.raises(StorageError, match="append-only"), store.db.transaction() as tx:
            tx.execute(statement)
    with pytest.raises(ConflictError):  # a second event 3 cannot be written
        store.append("g", Event(3, game.events[2].action, None))
    assert store.load("g") == game


# ---------------------------------------------------------------------------- schema
def test_the_schema_is_migrated_once_and_a_newer_one_refused(target: DatabaseTarget) -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))
    for _ in range(2):  # opening again applies nothing
        database = open_database(target)
        rows = database.query("SELECT version, name FROM schema_version ORDER BY version")
        assert rows == [(m.version, m.name) for m in MIGRATIONS]
        database.close()
    database = open_database(target)
    with database.transaction() as tx:
        tx.execute("INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)", (99, "from later", 0.0))
    database.close()
    with pytest.raises(StorageError, match=r"schema is at version 99, newer than this farklecam"):
        GameStore(target)


# ---------------------------------------------------------------------------- Games
def test_games_apply_commits_before_returning(store: GameStore, target: DatabaseTarget) -> None:
    games = Games(store)
    game_id = games.create(played([]))
    with GameStore(target) as other:  # another connection
        for text in ANN_BANKS_650:
            games.apply(game_id, parse_action(text))
            assert other.row(game_id).events == len(games.get(game_id).events)
        assert other.load(game_id).scores["Bob"] == 650
    games.close()


def test_an_illegal_action_stores_nothing(store: GameStore) -> None:
    games = Games(store)
    game_id = games.create(played(ANN_BANKS_650[:2]))
    with pytest.raises(IllegalActionError):
        games.apply(game_id, Bank())
    assert store.row(game_id).events == 2
    games.close()


def test_a_game_moved_on_elsewhere_is_replayed_before_acting(target: DatabaseTarget) -> None:
    with GameStore(target) as one, GameStore(target) as two:
        here, there = Games(one), Games(two)
        game_id = here.create(endless())
        there.apply(game_id, parse_action(TURN[0]))  # "there" caches the game, then another process moves it on
        here.apply(game_id, parse_action(TURN[1]))
        game, event = there.apply(game_id, parse_action(TURN[2]))  # replayed with the keep, then banked
        assert event.seq == 3 and game.scores["Ann"] == 1000
        with pytest.raises(StaleGameError, match="moved on"):
            here.apply(game_id, parse_action(TURN[0]), expected_events=2)
        assert [str(e.action) for e in one.events(game_id)] == [str(parse_action(t)) for t in TURN]
        here.close()
        there.close()


# ---------------------------------------------------------------------------- changes
def test_each_commit_is_told_to_the_subscribers(store: GameStore) -> None:
    heard: list[Change | None] = []
    unsubscribe = store.db.subscribe(heard.append)
    game = played(ANN_BANKS_650[:1])
    store.add_game("g", game)
    store.append("g", game.apply(ANN_BANKS_650[1]))
    with pytest.raises(ConflictError):  # a rolled-back transaction tells no one
        store.append("g", game.events[-1])
    TournamentStore(Games(store)).create("cup", seed=1)
    deadline = time.monotonic() + 5
    while len(heard) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    unsubscribe()
    wanted = [Change("game", "g", 1), Change("game", "g", 2), Change("tournament", "cup")]
    assert [c for c in heard if c is not None] == wanted


# ---------------------------------------------------------------------------- tournaments
def test_tournaments_keep_sign_ups_and_seatings(target: DatabaseTarget) -> None:
    with open_store(target) as store:
        store.create("cup", seed=9)
        with pytest.raises(TournamentError, match="already exists"):
            store.create("CUP")
        with pytest.raises(TournamentNotFoundError):
            store.get("nope")
        store.signup("cup", [f"P{i:02d}" for i in range(1, 21)])
        with pytest.raises(TournamentError, match="already signed up"):
            store.signup("cup", ["P21", "P03"])
        store.signup("cup", [f"P{i:02d}" for i in range(21, 41)])
        store.start("cup")
        before = store.get("cup")
    with open_store(target) as store:
        after = store.get("cup")
        assert after == before and len(after.players) == 40 and len(after.seatings[0]) == 10
        assert store.names() == ["cup"] and len(store.tables("cup")) == 10
        with pytest.raises(TournamentError, match="still being played"):
            store.start("cup")


# ---------------------------------------------------------------------------- throw pictures
def throw_picture(seed: int) -> ThrowPicture:
    """A 1280 x 720 frame of noise (the hardest to compress) read as two dice, one leaning."""
    frame = np.random.default_rng(seed).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    reading = Reading(
        xyxy=[[100, 100, 140, 140], [600, 300, 644, 344]],
        confidence=[0.9, 0.8],
        face=[5, 0],
        face_confidence=[0.97, 0.6],
        status=["ok", "cocked"],
        image_size=(1280, 720),
        tray=[[0, 0], [1280, 0], [1280, 720], [0, 720]],
        tray_state="marked",
    )
    return make_picture(frame, reading).with_told(["die #2 is a 3"])


def test_throw_pictures_are_kept_listed_fetched_and_deleted_never_the_log(
    store: GameStore, target: DatabaseTarget
) -> None:
    game = played(ANN_BANKS_650[:3])  # events 1 and 3 are throws
    store.add_game("g", game)
    store.add_game("other", played(ANN_BANKS_650[:1]))
    pictures = ThrowPictures(store.db)
    first, second = throw_picture(1), throw_picture(2)
    assert (first.width, first.height) == (640, 360) and len(first.jpeg) <= MAX_PICTURE_BYTES
    pictures.keep("g", 1, first, at=50.0)
    pictures.keep("g", 3, second, at=60.0)
    pictures.keep("other", 1, first, at=70.0)
    rows = pictures.rows("g")
    assert [(r.seq, r.bytes, r.width, r.height, r.taken, r.deleted) for r in rows] == [
        (1, len(first.jpeg), 640, 360, 50.0, None), (3, len(second.jpeg), 640, 360, 60.0, None)
    ]  # fmt: skip
    assert rows[0].reading == first.reading and rows[0].told == ("die #2 is a 3",)
    assert rows[0].reading is not None and rows[0].reading["dice"][1]["box"] == [300.0, 150.0, 322.0, 172.0]
    assert pictures.jpeg("g", 3) == (second.jpeg, second.reading)
    with pytest.raises(PictureNotFoundError, match="keeps no picture of event 2"):  # a keep: no throw, no picture
        pictures.jpeg("g", 2)
    with pytest.raises(ConflictError):  # one picture per throw
        pictures.keep("g", 1, second)
    with pytest.raises(StorageError):  # a picture belongs to a stored event
        pictures.keep("g", 9, first)
    assert pictures.total_bytes() == 2 * len(first.jpeg) + len(second.jpeg)

    assert pictures.delete("g", at=80.0) == (2, len(first.jpeg) + len(second.jpeg))
    assert pictures.delete("g") == (0, 0)  # nothing left to delete
    assert [(r.seq, r.deleted, r.reading, r.told) for r in pictures.rows("g")] == [
        (1, 80.0, None, ()),
        (3, 80.0, None, ()),
    ]
    with pytest.raises(PictureNotFoundError, match="was deleted on"):
        pictures.jpeg("g", 1)
    assert store.load("g") == game  # the log is untouched
    assert pictures.jpeg("other", 1)[0] == first.jpeg  # another game's pictures stay
    with GameStore(target) as reopened:  # kept across a restart
        assert ThrowPictures(reopened.db).jpeg("other", 1)[0] == first.jpeg
        assert [r.deleted for r in ThrowPictures(reopened.db).rows("g")] == [80.0, 80.0]


def test_throw_pictures_are_bounded(store: GameStore) -> None:
    game = played(ANN_BANKS_650)
    store.add_game("g", game)
    pictures = ThrowPictures(store.db, most=2)
    picture = throw_picture(3)
    with pytest.raises(ValueError, match=f"at most {MAX_PICTURE_BYTES} bytes"):
        pictures.keep("g", 1, ThrowPicture(b"\xff" * (MAX_PICTURE_BYTES + 1), 640, 360, picture.reading))
    with pytest.raises(ValueError, match="reading takes at most"):
        pictures.keep("g", 1, ThrowPicture(picture.jpeg, 640, 360, {"dice": ["x" * 70_000]}))
    for seq in (1, 3):
        pictures.keep("g", seq, picture)
    pictures.delete("g")  # deleted pictures keep their rows, and count
    with pytest.raises(ValueError, match="the most a game keeps"):
        pictures.keep("g", 5, picture)
    assert [r.seq for r in pictures.rows("g")] == [1, 3]


# ---------------------------------------------------------------------------- writers racing
def _race(games: Games, game_id: str, upto: int, acked: list[int]) -> None:
    """Play the endless game's script as far as ``upto`` events, each action meant for the count last seen."""
    while True:
        seen = len(games.get(game_id).events)
        if seen >= upto:
            return
        try:
            _, event = games.apply(game_id, parse_action((TURN * upto)[seen]), expected_events=seen)
        except (StaleGameError, ConflictError, IllegalActionError):
            continue  # the other writer came first: look again
        acked.append(event.seq)


def _check_race(store: GameStore, game_id: str, acked: list[int], upto: int) -> None:
    stored = store.events(game_id)
    assert sorted(acked) == [e.seq for e in stored] == list(range(1, upto + 1))  # each acknowledged once, none lost
    assert [str(e.action) for e in stored] == [str(parse_action(t)) for t in (TURN * upto)[:upto]]


def test_two_connections_racing_on_one_game_lose_nothing(target: DatabaseTarget) -> None:
    upto = 60
    with GameStore(target) as one, GameStore(target) as two:
        game_id = Games(one).create(endless())
        acked: list[int] = []
        writers = [threading.Thread(target=_race, args=(Games(s), game_id, upto, acked)) for s in (one, two)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=120)
        _check_race(one, game_id, acked, upto)


def _race_in_a_process(target: DatabaseTarget, game_id: str, upto: int, queue: multiprocessing.Queue[int]) -> None:
    acked: list[int] = []
    with GameStore(target) as store:
        games = Games(store)
        _race(games, game_id, upto, acked)
        games.close()
    for seq in acked:
        queue.put(seq)
    queue.put(0)


def test_two_processes_racing_on_one_game_lose_nothing(target: DatabaseTarget) -> None:
    upto = 60
    spawn = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[int] = spawn.Queue()
    with GameStore(target) as store:
        game_id = Games(store).create(endless())
        workers = [spawn.Process(target=_race_in_a_process, args=(target, game_id, upto, queue)) for _ in range(2)]
        for worker in workers:
            worker.start()
        acked: list[int] = []
        done = 0
        while done < len(workers):
            seq = queue.get(timeout=120)
            done += seq == 0
            if seq:
                acked.append(seq)
        for worker in workers:
            worker.join(timeout=30)
            assert worker.exitcode == 0
        _check_race(store, game_id, acked, upto)
