"""Each hostile request of issue 32 is a 4xx with a short message, answered within a second."""

from __future__ import annotations

import time
import warnings
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
