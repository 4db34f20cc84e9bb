"""Kill a real uvicorn server with SIGKILL while four clients play, three times: nothing acknowledged is lost.

It runs on both engines: an SQLite file, and a PostgreSQL server (where ``FARKLECAM_TEST_POSTGRES``
names one). Each kill lands while every client has an action on its way; after each restart every
game holds each action its client was answered for, at most the one that was in flight besides,
and the events replay the script in order.
"""

from __future__ import annotations

import random
import signal
import sys
import threading
import time
from typing import Any

import httpx
import pytest

from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.service.db.target import DatabaseTarget
from tests.service.servers import server

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]

#: A turn that always banks 1000, so a long game never ends (target raised below).
TURN = ["roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank"]
SCRIPT = TURN * 200
CLIENTS = 4
KILLS = 3


def act(client: httpx.Client, game_id: str, text: str, expected: int) -> dict[str, Any]:
    response = client.post(f"/api/games/{game_id}/actions", json={"text": text, "expected_events": expected})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def play(base: str, game_id: str, start: int, acked: list[int], rolling: threading.Event) -> None:
    """Send the script's actions from event ``start`` on; note each acknowledged event count until the kill."""
    with httpx.Client(base_url=base, timeout=30) as client:
        for n in range(start, len(SCRIPT)):
            try:
                answer = act(client, game_id, SCRIPT[n], n)
            except (httpx.TransportError, AssertionError):
                return
            acked.append(answer["events"])
            rolling.set()


def check(client: httpx.Client, game_id: str, acked: int) -> int:
    """Every acknowledged action is stored (plus perhaps the one in flight), in the script's order."""
    state = client.get(f"/api/games/{game_id}").json()
    events = client.get(f"/api/games/{game_id}/events").json()["data"]
    assert len(events) in (acked, acked + 1), (game_id, len(events), acked)
    reference = Game(get_rules("boxed").with_options({"target": 1_000_000}), ["Ann", "Bob"], first_player="Ann")
    assert [e["text"] for e in events] == [str(reference.apply(t).action) for t in SCRIPT[: len(events)]]
    assert state["state"]["description"] == reference.state.describe()
    return len(events)


def test_sigkill_under_four_clients_loses_nothing_acknowledged(target: DatabaseTarget) -> None:
    chooser = random.Random(7)
    body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"target": 1_000_000}}
    acked: dict[str, list[int]] = {}
    for _kill in range(KILLS):
        with server(target) as (proc, base), httpx.Client(base_url=base, timeout=30) as client:
            if not acked:
                acked = {client.post("/api/games", json=body).json()["id"]: [0] for _ in range(CLIENTS)}
            stored = {game_id: check(client, game_id, max(seen)) for game_id, seen in acked.items()}
            rolling = [threading.Event() for _ in acked]
            players = [
                threading.Thread(target=play, args=(base, game_id, stored[game_id], acked[game_id], ready))
                for game_id, ready in zip(acked, rolling, strict=True)
            ]
            for player in players:
                player.start()
            for ready in rolling:
                assert ready.wait(timeout=120)  # every client has been answered: each has its next action out
            time.sleep(chooser.uniform(0.05, 0.4))
            proc.send_signal(signal.SIGKILL)
            for player in players:
                player.join(timeout=60)
    with server(target) as (_, base), httpx.Client(base_url=base, timeout=30) as client:
        for game_id, seen in acked.items():
            assert max(seen) > 3 * KILLS
            check(client, game_id, max(seen))
