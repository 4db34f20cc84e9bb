"""The app under a real uvicorn server, as ``farklecam serve`` runs it: whom it believes and how long it waits."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from fastapi import HTTPException
from starlette.types import Message, Receive, Scope, Send

from farklecam.service.app import create_app
from farklecam.service.commands.serve_verb import SERVE
from farklecam.service.errors import BodySizeLimit
from farklecam.service.serving import HeadTimeoutProtocol, server_options
from farklecam.service.settings import Settings
from tests.service.test_api_settings import serve_args

CODE = "table42code"


class QuickHeadTimeout(HeadTimeoutProtocol):
    """The head deadline, short enough for a test."""

    head_timeout = 0.5


@contextmanager
def serving(settings: Settings, **overrides: Any) -> Iterator[str]:
    """A real server with ``server_options(settings)`` on a free loopback port; yields its base URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    options = {**server_options(settings), "port": port, **overrides}
    config = uvicorn.Config(create_app(settings), log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()


def wrong_codes(base: str, tries: int) -> list[int]:
    """Statuses of ``tries`` calls with a wrong table code, each claiming another address in X-Forwarded-For."""
    with httpx.Client(base_url=base) as client:
        headers = [{"X-Table-Code": "wrong1code", "X-Forwarded-For": f"10.0.0.{i}"} for i in range(tries)]
        return [client.get("/api/games", headers=h).status_code for h in headers]


def test_forwarded_addresses_are_not_believed_by_default(tmp_path: Path) -> None:
    """A client that rotates X-Forwarded-For is still one address: its wrong codes are bounded (429)."""
    settings = Settings(db_path=tmp_path / "g.sqlite3", table_code=CODE)
    assert server_options(settings)["proxy_headers"] is False
    with serving(settings) as base:
        statuses = wrong_codes(base, 12)
    assert statuses[:10] == [401] * 10 and statuses[10:] == [429, 429]


def test_a_trusted_proxys_forwarded_addresses_are_believed_with_proxy_headers(tmp_path: Path) -> None:
    """Behind a proxy on this machine (``--proxy-headers``) each forwarded address is a client of its own."""
    settings = Settings(db_path=tmp_path / "g.sqlite3", table_code=CODE, proxy_headers=True)
    with serving(settings) as base:
        assert wrong_codes(base, 12) == [401] * 12


def read_all(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends until it closes the connection (or ``seconds`` pass)."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except TimeoutError:
        pass
    return data


@pytest.mark.parametrize(
    "head",
    [
        b"",  # connects and says nothing
        b"GET /api/health HTTP/1.1\r\nHost: localhost\r\n",  # a head that never ends
        b"GET /ws/table/- HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n",  # a handshake
    ],
)
def test_a_request_head_that_does_not_arrive_in_time_is_a_408_and_closed(tmp_path: Path, head: bytes) -> None:
    with serving(Settings(db_path=tmp_path / "g.sqlite3"), http=QuickHeadTimeout) as base:
        port = int(base.rsplit(":", 1)[1])
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head)
            answer = read_all(sock, 5)
        assert answer.startswith(b"HTTP/1.1 408 ") and b"did not arrive in time" in answer
        assert time.monotonic() - started < 3


def test_a_head_dribbled_a_byte_at_a_time_is_cut_off(tmp_path: Path) -> None:
    with serving(Settings(db_path=tmp_path / "g.sqlite3"), http=QuickHeadTimeout) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            started = time.monotonic()
            closed = False
            for byte in b"GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    closed = True
                    break
                time.sleep(0.05)
            answer = read_all(sock, 2)
        assert closed or answer.startswith(b"HTTP/1.1 408 ")
        assert time.monotonic() - started < 4


def test_requests_in_time_are_answered_and_a_slow_body_is_not_cut_by_the_head_deadline(tmp_path: Path) -> None:
    """The deadline is the head's: a kept-alive connection's later requests and a body that takes a while pass."""

    def slow_body() -> Iterator[bytes]:
        for part in (b'{"players": ', b'["Ann", ', b'"Bob"]}'):
            time.sleep(0.4)
            yield part

    settings = Settings(db_path=tmp_path / "g.sqlite3")
    with serving(settings, http=QuickHeadTimeout) as base, httpx.Client(base_url=base) as client:
        for _ in range(3):
            assert client.get("/api/health").status_code == 200
            time.sleep(0.3)
        response = client.post("/api/games", content=slow_body(), headers={"Content-Type": "application/json"})
        assert response.status_code == 201


def test_serve_options_bound_websocket_messages_near_the_frame_limit(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "g.sqlite3", max_frame_bytes=1024 * 1024)
    options = server_options(settings)
    assert options["ws_max_size"] < 2 * 1024 * 1024 and options["http"] is HeadTimeoutProtocol


def test_serve_believes_forwarded_headers_only_with_proxy_headers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``farklecam serve`` hands uvicorn the head deadline and turns its forwarded-header trust off unless asked."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.delenv("FARKLECAM_PROXY_HEADERS", raising=False)
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"))) == 0
    assert seen["proxy_headers"] is False and seen["http"] is HeadTimeoutProtocol
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"), "--proxy-headers")) == 0
    assert seen["proxy_headers"] is True and seen["app"].state.settings.proxy_headers is True


def test_a_body_that_stops_arriving_is_a_408() -> None:
    """A client that sends a head and then goes quiet does not hold its request open."""

    async def reads_its_body(scope: Scope, receive: Receive, send: Send) -> None:
        while (await receive()).get("more_body"):
            pass

    async def quiet_after_a_chunk() -> Message:
        if not sent:
            sent.append(True)
            return {"type": "http.request", "body": b"{", "more_body": True}
        await anyio.sleep(60)
        raise AssertionError("not reached")

    sent: list[bool] = []
    guard = BodySizeLimit(reads_its_body, limit_for=lambda path: 1024, idle_timeout=0.2)
    scope: Scope = {"type": "http", "path": "/api/games", "headers": []}

    async def run() -> None:
        with pytest.raises(HTTPException) as raised:
            await guard(scope, quiet_after_a_chunk, lambda message: anyio.sleep(0))
        assert raised.value.status_code == 408 and "stopped arriving" in raised.value.detail

    anyio.run(run)
