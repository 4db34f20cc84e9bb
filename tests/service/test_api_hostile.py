"""Each hostile request is a 4xx with a short message, answered within a second or two; never a 5xx."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import struct
import threading
import time
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.service.app import create_app
from farklecam.service.deps import ReaderSlot, get_reader_slot
from farklecam.service.errors import EXCERPT
from farklecam.service.settings import Settings
from tests.service.test_api import FakeReader, jpeg

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

JUNK = bytes(range(256)) * 40  # not UTF-8, not JSON, not a picture


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    slot = ReaderSlot(FakeReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def refused(client: TestClient, method: str, path: str, status: int = 422, **kwargs: Any) -> str:
    """Send a request; assert it is refused with ``status`` within a second and a short message; the message."""
    started = time.perf_counter()
    response = client.request(method, path, **kwargs)
    elapsed = time.perf_counter() - started
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert elapsed < 1.0, elapsed
    assert len(response.content) < 4000  # no body is echoed back whole
    detail = response.json()["detail"]
    assert isinstance(detail, str) and detail
    return detail


def new_game(client: TestClient) -> str:
    response = client.post("/api/games", json={"players": ["Ann", "Bob"], "first_player": "Ann"})
    assert response.status_code == 201
    return str(response.json()["id"])


@pytest.mark.parametrize("content_type", ["application/octet-stream", "text/plain", "image/png", "application/json"])
def test_a_binary_body_on_any_post_route_is_a_422_with_a_short_excerpt(client: TestClient, content_type: str) -> None:
    game = new_game(client)
    for path in ("/api/score", "/api/advise", "/api/games", f"/api/games/{game}/actions"):
        refused(client, "POST", path, content=JUNK, headers={"Content-Type": content_type})
    response = client.post("/api/score", content=JUNK, headers={"Content-Type": content_type})
    for error in response.json().get("errors", []):
        assert error["input"] is None or len(error["input"]) <= EXCERPT


def test_a_binary_body_on_the_read_route_is_refused(client: TestClient) -> None:
    refused(client, "POST", "/api/read", content=JUNK, headers={"Content-Type": "application/octet-stream"})


@pytest.mark.parametrize("option", ["three_ones", "opening_minimum", "turn_minimum", "straight"])
@pytest.mark.parametrize("value", [10**20, 10_000_000])
def test_a_huge_option_is_refused_with_its_range_everywhere(client: TestClient, option: str, value: int) -> None:
    options = {option: value}
    detail = refused(client, "POST", "/api/advise", json={"dice": [1, 1, 1, 2, 3, 4], "options": options})
    assert f"'{option}' must be a multiple of 50 in 0.." in detail
    refused(client, "POST", "/api/score", json={"dice": [1, 1, 1, 2, 3, 4], "options": options})
    files = {"file": ("t.jpg", jpeg(), "image/jpeg")}
    assert "in 0.." in refused(client, "POST", "/api/read", files=files, data={"options": f'{{"{option}": {value}}}'})
    before = client.get("/api/games").json()["count"]
    refused(client, "POST", "/api/games", json={"players": ["Ann", "Bob"], "options": options})
    assert client.get("/api/games").json()["count"] == before  # no game was created with it


@pytest.mark.parametrize("route", ["/api/advise", "/api/score", "/api/games"])
def test_a_float_option_written_1e20_is_a_422(client: TestClient, route: str) -> None:
    """JSON's ``1e20`` is a float: refused as not an integer, before any rules are built."""
    body = b'{"dice": [1, 1, 1, 2, 3, 4], "players": ["Ann", "Bob"], "options": {"three_ones": 1e20}}'
    if route != "/api/games":
        body = body.replace(b'"players": ["Ann", "Bob"], ', b"")
    else:
        body = body.replace(b'"dice": [1, 1, 1, 2, 3, 4], ', b"")
    detail = refused(client, "POST", route, content=body, headers={"Content-Type": "application/json"})
    assert "three_ones" in detail


def test_a_huge_offset_is_a_422(client: TestClient) -> None:
    detail = refused(client, "GET", f"/api/games?offset={2**63}")
    assert "offset" in detail and "1000000" in detail
    refused(client, "GET", "/api/games?limit=100000")


def test_a_turn_total_off_the_50s_is_refused_alike_by_read_and_advise(client: TestClient) -> None:
    advise = refused(client, "POST", "/api/advise", json={"dice": [1, 5], "turn_total": 75})
    files = {"file": ("t.jpg", jpeg(), "image/jpeg")}
    read = refused(client, "POST", "/api/read", files=files, data={"turn_total": "75"})
    assert advise.split(":", 1)[1] == read.split(":", 1)[1] == " Input should be a multiple of 50"
    assert client.post("/api/read", files=files, data={"turn_total": "100"}).json()["advice"] is not None


# ----------------------------------------------------------------------------- the hostile list, every POST route
#: Text no field should trip over: lone surrogates (JSON's escapes give them), digits that are not ASCII,
#: names that end in a newline, direction overrides, NUL, a byte-order mark, and plain long or odd text.
HOSTILE_TEXT = [
    "\ud800", "\udfff", "Ann\ud800", "\ud83d", "Ann\n", "cup\n", "Ann\r\n", " Ann", "\u202eAnn", "A\x00nn", "\ufeffAnn",
    "\u00b9", "\u0661", "\u2167", "\U0001d7d9", "\uff11", "A" * 5000, "%s%n%x", "' OR 1=1 --", "../../etc/passwd",
    "\U0001f3b2", "",
]  # fmt: skip


def _json(body: Any) -> dict[str, Any]:
    """Request arguments for a JSON body, escaped to ASCII so that lone surrogates travel as JSON escapes."""
    return {"content": json.dumps(body).encode("ascii"), "headers": {"Content-Type": "application/json"}}


def hostile_requests(game: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, request arguments) for every POST route, each hostile text in each of its text fields."""
    found: list[tuple[str, str, dict[str, Any]]] = []
    for text in HOSTILE_TEXT:
        for route in ("/api/score", "/api/advise"):
            for body in (
                {"dice": [1, 5], "preset": text},
                {"dice": [1, 5], "options": {text: 1}},
                {"dice": [1, 5], "options": {"three_ones": text}},
                {"dice": [text]},
                {"dice": [1, 5], "turn_total": text},
            ):
                found.append(("POST", route, _json(body)))
        for body in (
            {"players": [text, "Bob"]},
            {"players": ["Ann", "Bob"], "first_player": text},
            {"players": ["Ann", "Bob"], "preset": text},
            {"players": ["Ann", "Bob"], "options": {text: 1}},
        ):
            found.append(("POST", "/api/games", _json(body)))
        for action in (
            f"roll 1,2,3,4,5,{text}", f"keep {text}", f'rolloff "{text}" 5', f"rolloff {text} 5", f"rules {text}", text,
        ):  # fmt: skip
            found.append(("POST", f"/api/games/{game}/actions", _json({"text": action})))
        found.append(("POST", f"/api/games/{game}/actions", _json({"type": text})))
        found.append(("POST", f"/api/games/{game}/actions", _json({"type": "rolloff", "player": text, "face": 5})))
        found.append(("POST", "/api/tournaments", _json({"name": text})))
        found.append(("POST", "/api/tournaments/cup/players", _json({"players": [text]})))
        found.append(("POST", "/api/tournaments/cup/players", _json({"players": ["Ann", text]})))
        found.append(("POST", "/api/tournaments/cup/final/rules", _json({"preset": text})))
        found.append(("POST", "/api/tournaments/cup/start", _json({"x": text})))
        for field, value in (
            ("preset", text), ("options", json.dumps({text: 1})), ("options", json.dumps({"three_ones": text})),
            ("tray", json.dumps([[text, 1]] * 4)), ("camera", json.dumps(text)), ("turn_total", json.dumps(text)),
        ):  # fmt: skip
            ascii_value = value.encode("ascii", "backslashreplace").decode("ascii")  # a form field is text as sent
            found.append(("POST", "/api/read", {"files": {"file": ("t.jpg", jpeg(), "image/jpeg")},
                                                "data": {field: ascii_value}}))  # fmt: skip
    deep = "[" * 50_000
    for route in ("/api/score", "/api/advise", "/api/games", f"/api/games/{game}/actions", "/api/tournaments"):
        found.append(("POST", route, {"content": deep.encode(), "headers": {"Content-Type": "application/json"}}))
        found.append(("POST", route, {"content": b'{"a": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3001}))
    for field in ("options", "tray"):
        found.append(("POST", "/api/read", {"files": {"file": ("t.jpg", jpeg(), "image/jpeg")},
                                            "data": {field: "[" * 390}}))  # fmt: skip
    found.append(("POST", "/api/read", {"files": {"file": ("t.jpg", jpeg(), "image/jpeg")},
                                        "data": {"options": "[" * 3990}}))  # fmt: skip
    return found


def test_every_hostile_request_is_a_4xx_within_two_seconds(client: TestClient) -> None:
    """Hundreds of hostile requests over the POST routes: no 5xx, none slower than 2 s, every refusal explained."""
    game = new_game(client)
    assert client.post("/api/tournaments", json={"name": "cup"}).status_code == 201
    requests = hostile_requests(game)
    assert len(requests) > 600
    failures = []
    for method, path, kwargs in requests:
        started = time.perf_counter()
        response = client.request(method, path, **kwargs)
        elapsed = time.perf_counter() - started
        ok = response.status_code < 500 and elapsed < 2.0
        if ok and response.status_code >= 400:
            detail = response.json().get("detail")
            ok = isinstance(detail, str) and bool(detail) and len(response.content) < 4000
        if not ok:
            failures.append((path, str(kwargs)[:120], response.status_code, round(elapsed, 2), response.text[:200]))
    assert not failures, failures[:10]


def test_a_lone_surrogate_anywhere_is_a_422_that_echoes_it_printably(client: TestClient) -> None:
    """JSON may spell half a character; the 422 names the field and shows U+FFFD instead of failing to encode."""
    detail = refused(client, "POST", "/api/games", **_json({"players": ["\ud800", "Bob"]}))
    assert detail.startswith("body.players.0")
    response = client.post("/api/score", **_json({"dice": [1, 5], "options": {"\udfff": 1}}))
    assert response.status_code == 422 and "\ufffd" in response.text
    game = new_game(client)
    refused(client, "POST", f"/api/games/{game}/actions", **_json({"text": 'rolloff "\ud800" 5'}))
    files = {"file": ("t.jpg", jpeg(), "image/jpeg")}
    refused(client, "POST", "/api/read", files=files, data={"options": '{"\\ud800": 1}'})


@pytest.mark.parametrize("digit", ["\u00b9", "\u0661", "\uff11", "\U0001d7d9", "\u2460"])
def test_dice_are_ascii_digits_only(client: TestClient, digit: str) -> None:
    """``"¹".isdigit()`` holds but ``int("¹")`` fails; ``int("١")`` is 1: an action's faces are ASCII digits."""
    game = new_game(client)
    detail = refused(client, "POST", f"/api/games/{game}/actions", **_json({"text": f"roll 1,2,3,4,5,{digit}"}))
    assert "faces 1-6" in detail
    assert client.get(f"/api/games/{game}/events").json()["count"] == 0


# ----------------------------------------------------------------------------- names
@pytest.mark.parametrize("name", ["cup\n", "cup\r\n", "cup\n\n", "\ncup", "cup "])
def test_a_tournament_name_with_a_newline_is_refused(client: TestClient, name: str) -> None:
    assert "must be 1-64 letters" in refused(client, "POST", "/api/tournaments", json={"name": name})
    assert client.get("/api/tournaments").json()["data"] == []


def test_a_player_name_with_a_newline_is_refused_and_the_tournament_can_start(client: TestClient) -> None:
    assert client.post("/api/tournaments", json={"name": "cup"}).status_code == 201
    refused(client, "POST", "/api/tournaments/cup/players", json={"players": ["Ann\n"]})
    players = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"]
    assert client.post("/api/tournaments/cup/players", json={"players": players}).status_code == 200
    assert client.post("/api/tournaments/cup/start").status_code == 200


def test_names_are_compared_ignoring_case(client: TestClient) -> None:
    """People call "Ann" and "ann" by one name, and "Cup" and "cup": neither is a second of its kind."""
    assert client.post("/api/tournaments", json={"name": "cup"}).status_code == 201
    detail = refused(client, "POST", "/api/tournaments", status=409, json={"name": "Cup"})
    assert "'cup' already exists" in detail
    assert client.get("/api/tournaments").json()["data"] == ["cup"]
    detail = refused(client, "POST", "/api/tournaments/cup/players", status=409, json={"players": ["Ann", "ann"]})
    assert "'ann' is already signed up" in detail
    assert client.post("/api/tournaments/cup/players", json={"players": ["Ann"]}).status_code == 200
    refused(client, "POST", "/api/tournaments/cup/players", status=409, json={"players": ["ANN"]})
    assert client.get("/api/tournaments/cup").json()["players"] == ["Ann"]


# ----------------------------------------------------------------------------- the database file
def test_a_database_deleted_under_the_server_is_a_503_never_a_silent_2xx(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    with TestClient(create_app(Settings(db_path=db))) as client:
        game = new_game(client)
        db.unlink()
        for method, path, body in (
            ("GET", f"/api/games/{game}", None),  # a game still in memory is not shown as kept either
            ("POST", f"/api/games/{game}/actions", {"text": "roll 1,5,2,3,4,6"}),
            ("POST", "/api/games", {"players": ["Ann", "Bob"]}),
            ("GET", "/api/games", None),
            ("GET", "/api/health", None),
            ("POST", "/api/tournaments", {"name": "cup"}),
        ):
            detail = refused(client, method, path, status=503, json=body)
            assert "was deleted or moved away while the server was running" in detail and str(db) in detail


def test_a_database_replaced_under_the_server_is_a_503_until_it_is_put_back(tmp_path: Path) -> None:
    db, away, other = tmp_path / "games.sqlite3", tmp_path / "away.sqlite3", tmp_path / "other.sqlite3"
    with TestClient(create_app(Settings(db_path=db))) as client:
        game = new_game(client)
        db.rename(away)
        with sqlite3.connect(other) as connection:
            connection.execute("CREATE TABLE t (x)")
        os.replace(other, db)
        detail = refused(client, "POST", f"/api/games/{game}/actions", status=503, json={"text": "roll 1,5,2,3,4,6"})
        assert "was replaced by another file" in detail
        refused(client, "GET", "/api/health", status=503)
        os.replace(away, db)  # the file this server opened is back: it keeps games again
        assert client.post(f"/api/games/{game}/actions", json={"text": "roll 1,5,2,3,4,6"}).status_code == 200
    with TestClient(create_app(Settings(db_path=db))) as client:
        assert client.get(f"/api/games/{game}/events").json()["count"] == 1


# ----------------------------------------------------------------------------- pictures and their memory
def png_header(width: int, height: int) -> bytes:
    """A PNG's signature and header claiming ``width`` x ``height`` (no pixel data follows)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def test_a_picture_past_the_pixel_limit_is_refused_from_its_header(client: TestClient) -> None:
    """A few bytes that claim 48 megapixels: 413 before anything is allocated, the reader never asked."""
    files = {"file": ("huge.png", png_header(8000, 6000), "image/png")}
    detail = refused(client, "POST", "/api/read", status=413, files=files)
    assert "8000x6000" in detail and "the limit is 40" in detail


def test_a_picture_past_the_servers_pixel_budget_is_a_413(tmp_path: Path) -> None:
    app = create_app(Settings(db_path=tmp_path / "g.sqlite3", read_pixel_budget=1_000_000))
    reader = FakeReader()
    slot = ReaderSlot(lambda: reader, pixel_budget=1_000_000)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        files = {"file": ("big.jpg", jpeg(1200, 1000), "image/jpeg")}
        detail = refused(client, "POST", "/api/read", status=413, files=files)
        assert "at most 1.0 megapixels at a time" in detail and "1.2" in detail
        assert reader.calls == 0
        assert client.post("/api/read", files={"file": ("ok.jpg", jpeg(1000, 1000), "image/jpeg")}).status_code == 200
        assert slot.budget.free == 1_000_000  # every read gave its pixels back


class BlockingReader(FakeReader):
    """Holds each read until :attr:`release` is set, so a test can fill the line."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def read(self, frame: Any) -> Any:
        self.entered.set()
        assert self.release.wait(10)
        return super().read(frame)


def test_uploads_past_the_line_are_told_to_come_back(tmp_path: Path) -> None:
    """With the line full, the next upload is a 429 with Retry-After at once, not a wait or a 5xx."""
    app = create_app(Settings(db_path=tmp_path / "g.sqlite3"))
    reader = BlockingReader()
    slot = ReaderSlot(lambda: reader, read_line=1)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    files = {"file": ("t.jpg", jpeg(), "image/jpeg")}
    with TestClient(app) as client:
        first: dict[str, int] = {}
        thread = threading.Thread(target=lambda: first.update(code=client.post("/api/read", files=files).status_code))
        thread.start()
        try:
            assert reader.entered.wait(10)
            started = time.perf_counter()
            response = client.post("/api/read", files=files)
            assert response.status_code == 429 and response.headers["Retry-After"] == "5"
            assert "send this one again" in response.json()["detail"] and time.perf_counter() - started < 1
            assert client.post("/api/score", json={"dice": [1, 5]}).status_code == 200  # the rest answers meanwhile
        finally:
            reader.release.set()
            thread.join(10)
        assert first["code"] == 200
        assert client.post("/api/read", files=files).status_code == 200


# ----------------------------------------------------------------------------- the table's WebSocket
def test_a_nested_websocket_message_is_one_log_line_and_the_stream_goes_on(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    game = new_game(client)
    with caplog.at_level(logging.INFO, logger="farklecam.service"), client.websocket_connect(f"/ws/table/{game}") as ws:
        for _ in range(3):
            ws.send_text("[" * 100_000)
            answer = ws.receive_json()
            assert answer["type"] == "error" and "JSON" in answer["detail"]
        ws.send_text('{"type": "\ud800"}')
        assert ws.receive_json()["type"] == "error"
        ws.send_text('{"type": "ping"}')
        assert ws.receive_json() == {"type": "pong"}
    records = [r for r in caplog.records if r.name == "farklecam.service" and "nested" in r.getMessage()]
    assert len(records) == 3 and not any(r.exc_info for r in records)
    assert "\n" not in "".join(r.getMessage() for r in records)


def test_a_frame_past_the_pixel_limit_is_an_error_on_the_stream(client: TestClient) -> None:
    with client.websocket_connect("/ws/table/-") as ws:
        ws.send_bytes(png_header(8000, 6000))
        answer = ws.receive_json()
        assert answer["type"] == "error" and answer["error"] == "PictureTooLargeError"
        ws.send_text('{"type": "ping"}')
        assert ws.receive_json() == {"type": "pong"}
