"""Several servers, one league: two ``uvicorn`` processes on one PostgreSQL database share games and tournaments.

A round seated on one server is seen on the other, a game created on one is played on the
other, and the first server's ``/ws/changes`` socket pushes each change committed on either
(PostgreSQL's ``NOTIFY``); the first server then shows the game as the second left it. Without
a test server (``FARKLECAM_TEST_POSTGRES``) the PostgreSQL tests skip, saying so. On SQLite the
socket pushes this server's own changes. A listening connection the server drops is said
(``None``: forget what you hold) and listened on again.
"""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.exceptions import StarletteDeprecationWarning
from websockets.sync.client import connect

from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.service.app import create_app
from farklecam.service.db.changes import Change
from farklecam.service.db.target import PostgresTarget
from farklecam.service.routes.changes import _offer
from farklecam.service.settings import Settings
from farklecam.service.storage import GameStore
from tests.service.databases import postgres_schema
from tests.service.servers import server

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

TURN = ["roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank"]


@pytest.fixture
def two_servers() -> Iterator[tuple[str, str]]:
    with postgres_schema() as url, ExitStack() as stack:
        first = stack.enter_context(server(PostgresTarget(url)))[1]
        second = stack.enter_context(server(PostgresTarget(url)))[1]
        yield first, second


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    data: dict[str, Any] = response.json()
    return data


@pytest.mark.slow
def test_servers_on_one_database_share_tournaments_and_games_and_push_each_change(
    two_servers: tuple[str, str],
) -> None:
    first, second = two_servers
    ws_url = first.replace("http://", "ws://") + "/ws/changes"
    body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"target": 1_000_000}}
    with (
        httpx.Client(base_url=first, timeout=30) as one,
        httpx.Client(base_url=second, timeout=30) as two,
        connect(ws_url, open_timeout=10, additional_headers={"Origin": first}) as changes,
    ):
        _ok(one.post("/api/tournaments", json={"name": "league", "seed": 4}))
        _ok(two.post("/api/tournaments/league/players", json={"players": ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]}))
        seated = _ok(one.post("/api/tournaments/league/start"))
        assert _ok(two.get("/api/tournaments/league")) == seated  # the second server sees the first's seating
        pushed = [json.loads(changes.recv(timeout=10)) for _ in range(5)]  # create, sign-up, 2 games, seating
        tables = [t["game"] for t in seated["rounds"][0]["tables"]]
        wanted = [("tournament", "league", 0)] * 2 + [("game", g, 0) for g in tables] + [("tournament", "league", 0)]
        assert [(c["kind"], c["key"], c["events"]) for c in pushed] == wanted

        game_id = _ok(one.post("/api/games", json=body))["id"]  # cached by the first server
        assert json.loads(changes.recv(timeout=10)) == {"type": "change", "kind": "game", "key": game_id, "events": 0}
        started = time.monotonic()
        for n, text in enumerate(TURN):  # played on the second server
            _ok(two.post(f"/api/games/{game_id}/actions", json={"text": text, "expected_events": n}))
        pushed = [json.loads(changes.recv(timeout=10)) for _ in TURN]
        heard_within = time.monotonic() - started
        assert pushed == [{"type": "change", "kind": "game", "key": game_id, "events": n} for n in (1, 2, 3)]
        assert heard_within < 5
        shown = _ok(one.get(f"/api/games/{game_id}"))  # the first server forgot its copy before pushing: replayed
        assert shown == _ok(two.get(f"/api/games/{game_id}")) and shown["events"] == 3
        # the first server acts on the game the second moved on, as if it had played it itself
        _ok(one.post(f"/api/games/{game_id}/actions", json={"text": TURN[0], "expected_events": 3}))
        deadline = time.monotonic() + 5  # the second server hears of it within milliseconds
        while _ok(two.get(f"/api/games/{game_id}"))["events"] != 4:
            assert time.monotonic() < deadline
            time.sleep(0.01)


def test_the_changes_socket_pushes_this_servers_changes_on_sqlite(tmp_path: Path) -> None:
    body = {"players": ["Ann", "Bob"], "first_player": "Ann"}
    with TestClient(create_app(Settings(db=tmp_path / "g.sqlite3"))) as client:
        with client.websocket_connect("/ws/changes") as changes:
            game_id = _ok(client.post("/api/games", json=body))["id"]
            _ok(client.post(f"/api/games/{game_id}/actions", json={"text": TURN[0]}))
            _ok(client.post("/api/tournaments", json={"name": "cup", "seed": 1}))
            got = [changes.receive_json() for _ in range(3)]
        assert got == [
            {"type": "change", "kind": "game", "key": game_id, "events": 0},
            {"type": "change", "kind": "game", "key": game_id, "events": 1},
            {"type": "change", "kind": "tournament", "key": "cup", "events": 0},
        ]


def test_a_page_that_reads_too_slowly_is_told_to_resync() -> None:
    queue: asyncio.Queue[Change | None] = asyncio.Queue(maxsize=2)
    for n in range(3):
        _offer(queue, Change("game", "g", n))
    assert queue.qsize() == 1 and queue.get_nowait() is None


def test_a_lost_change_feed_says_so_and_listens_again() -> None:
    import psycopg

    with postgres_schema() as url, GameStore(PostgresTarget(url)) as store:
        heard: list[Change | None] = []
        store.db.subscribe(heard.append)
        with psycopg.connect(url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'farklecam' AND query LIKE 'LISTEN %%' AND pid <> pg_backend_pid()"
            ).fetchall()
        assert killed
        game = Game(get_rules("boxed"), ["Ann", "Bob"], first_player="Ann")
        deadline = time.monotonic() + 10
        while Change("game", "after", 0) not in heard:  # stored until the listener is back and hears it
            assert time.monotonic() < deadline, heard
            if heard.count(None) == 2 and store.count() == 0:  # one when lost, one when listening again
                store.add_game("after", game)
            time.sleep(0.05)
        assert heard.index(None) < heard.index(Change("game", "after", 0))
