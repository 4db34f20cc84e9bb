"""Kill a real uvicorn server with SIGKILL mid-game, restart it on the same file: nothing acknowledged is lost."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]

REPO = Path(__file__).resolve().parents[2]
#: A turn that always banks 1000, so a long game never ends (target raised below).
TURN = ["roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(db: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A real ``uvicorn --factory farklecam.service.app:create_app`` process on a free loopback port."""
    port = free_port()
    env = {**os.environ, "FARKLECAM_DB_PATH": str(db)}
    cmd = [sys.executable, "-m", "uvicorn", "farklecam.service.app:create_app", "--factory"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("server did not start within 90 s")
            time.sleep(0.2)
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()


def act(client: httpx.Client, game_id: str, text: str) -> dict[str, Any]:
    response = client.post(f"/api/games/{game_id}/actions", json={"text": text})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_sigkill_mid_game_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    script = TURN * 200
    reference = Game(get_rules("boxed").with_options({"target": 1_000_000}), ["Ann", "Bob"], first_player="Ann")

    # 1. Play a few turns, stop mid-turn, kill -9.
    with server(db) as (proc, base), httpx.Client(base_url=base, timeout=30) as client:
        body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"target": 1_000_000}}
        game_id = client.post("/api/games", json=body).json()["id"]
        for text in script[:8]:
            last = act(client, game_id, text)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert {p["name"]: p["score"] for p in last["state"]["players"]} == {"Ann": 1000, "Bob": 1000}

    # 2. Restart: the state is the one last acknowledged. Then kill it again while actions stream in.
    acked: list[dict[str, Any]] = []
    with server(db) as (proc, base), httpx.Client(base_url=base, timeout=30) as client:
        assert client.get(f"/api/games/{game_id}").json() == last
        kill_after = random.Random(7).randint(5, 25)
        killed = threading.Event()

        def stream() -> None:
            for text in script[8:]:
                try:
                    acked.append(act(client, game_id, text))
                except (httpx.TransportError, AssertionError):
                    return
                if len(acked) == kill_after:
                    killed.set()  # the next request is already on its way when the kill lands

        sender = threading.Thread(target=stream)
        sender.start()
        assert killed.wait(timeout=120)
        proc.send_signal(signal.SIGKILL)
        sender.join(timeout=60)
    assert len(acked) >= kill_after

    # 3. Restart once more: every acknowledged action is there (plus perhaps the one in flight), nothing else.
    with server(db) as (_, base), httpx.Client(base_url=base, timeout=30) as client:
        state = client.get(f"/api/games/{game_id}").json()
        events = client.get(f"/api/games/{game_id}/events").json()["data"]
    done = 8 + len(acked)
    assert len(events) in (done, done + 1)
    assert [e["text"] for e in events] == [str(reference.apply(t).action) for t in script[: len(events)]]
    assert state["state"]["description"] == reference.state.describe()
    banked = {p["name"]: p["score"] for p in acked[-1]["state"]["players"]}
    restored = {p["name"]: p["score"] for p in state["state"]["players"]}
    assert all(restored[name] >= score for name, score in banked.items())
