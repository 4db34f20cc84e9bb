"""Malformed requests of every shape get a 4xx with a message, never a 500 (hypothesis fuzzing)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.exceptions import StarletteDeprecationWarning

from scoring.presets import PRESETS
from scoring.rules import option_names
from service.app import create_app
from service.settings import Settings

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
faces = st.lists(st.integers(-2, 9), max_size=9) | json_values
presets = st.sampled_from([*PRESETS, "BAR", "nope", ""]) | json_values
options = st.dictionaries(st.sampled_from(option_names()) | st.text(max_size=8), json_values, max_size=4) | json_values
names = st.lists(st.text(max_size=6), max_size=4) | json_values


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = tmp_path_factory.mktemp("fuzz") / "games.sqlite3"
    with TestClient(create_app(Settings(db_path=db)), raise_server_exceptions=False, base_url="http://localhost") as c:
        yield c


@pytest.fixture(scope="module")
def game_id(client: TestClient) -> str:
    response = client.post("/api/games", json={"players": ["Ann", "Bob"], "first_player": "Ann"})
    return str(response.json()["id"])


def check(response: Any) -> None:
    """Fine, or a client error with a message: never a server error."""
    assert response.status_code < 500, (response.status_code, response.text)
    if response.status_code >= 400:
        detail = response.json()["detail"]
        assert isinstance(detail, str) and detail


@FUZZ
@given(body=st.fixed_dictionaries({"dice": faces}, optional={"preset": presets, "options": options}) | json_values)
def test_score_fuzz(client: TestClient, body: Any) -> None:
    check(client.post("/api/score", json=body))


@FUZZ
@given(
    body=st.fixed_dictionaries(
        {"dice": faces},
        optional={"preset": presets, "options": options, "turn_total": json_values | st.integers(-100, 20000),
                  "on_board": json_values, "farkle_streak": json_values | st.integers(-1, 12)},
    )
)  # fmt: skip
def test_advise_fuzz(client: TestClient, body: Any) -> None:
    check(client.post("/api/advise", json=body))


@FUZZ
@given(
    body=st.fixed_dictionaries(
        {"players": names}, optional={"preset": presets, "options": options, "first_player": json_values}
    )
    | json_values
)
def test_create_game_fuzz(client: TestClient, body: Any) -> None:
    check(client.post("/api/games", json=body))


kinds = st.sampled_from(["rolloff", "roll", "passed-roll", "keep", "bank", "farkle", "undo", "jump"]) | json_values


@FUZZ
@given(
    body=st.fixed_dictionaries(
        {}, optional={"type": kinds, "faces": faces, "player": json_values, "face": json_values, "text": json_values}
    )
    | st.fixed_dictionaries({"text": st.text(max_size=30)})
)
def test_action_fuzz(client: TestClient, game_id: str, body: Any) -> None:
    check(client.post(f"/api/games/{game_id}/actions", json=body))


@FUZZ
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_raw_bodies_fuzz(client: TestClient, game_id: str, raw: bytes) -> None:
    headers = {"Content-Type": "application/json"}
    for path in ("/api/score", "/api/advise", "/api/games", f"/api/games/{game_id}/actions"):
        check(client.post(path, content=raw, headers=headers))
    check(client.post("/api/read", content=raw, headers={"Content-Type": "multipart/form-data; boundary=xyz"}))


@FUZZ
@given(segment=st.text(min_size=1, max_size=80), query=st.text(max_size=20))
def test_paths_and_queries_fuzz(client: TestClient, segment: str, query: str) -> None:
    from urllib.parse import quote

    seg = quote(segment, safe="")
    for path in (f"/api/games/{seg}", f"/api/games/{seg}/events", f"/api/games/{seg}/advice"):
        response = client.get(path)
        assert response.status_code < 500, (path, response.text)
    check(client.get(f"/api/games?limit={quote(query)}&offset={quote(query)}"))


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("POST", "/api/score", {"content": b"{", "headers": {"Content-Type": "application/json"}}),
        ("POST", "/api/score", {"content": b"Infinity", "headers": {"Content-Type": "application/json"}}),
        ("POST", "/api/games", {"content": b'{"players": NaN}', "headers": {"Content-Type": "application/json"}}),
        ("POST", "/api/score", {"content": b'{"dice": [1]}', "headers": {"Content-Type": "text/plain"}}),
        ("POST", "/api/score", {"content": json.dumps({"dice": [1] * 10_000}).encode()}),
        ("POST", "/api/score", {"json": {"dice": [1], "options": {str(i): 1 for i in range(100)}}}),
        ("POST", "/api/games", {"json": {"players": ["a"] * 1000}}),
        ("POST", "/api/read", {"files": {"file": ("x", b"", "image/jpeg")}}),
        ("POST", "/api/read", {"files": {"other": ("x", b"\xff\xd8\xff", "image/jpeg")}}),
        ("POST", "/api/read", {"data": {"file": "not a file"}}),
        ("POST", "/api/read", {"content": b"--xyz\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n",
                               "headers": {"Content-Type": "multipart/form-data; boundary=xyz"}}),
        ("PUT", "/api/score", {"json": {"dice": [1]}}),
        ("GET", "/api/score", {}),
        ("POST", "/api/score", {"headers": {"Content-Length": "abc"}}),
    ],
)  # fmt: skip
def test_malformed_requests(client: TestClient, method: str, path: str, kwargs: dict[str, Any]) -> None:
    response = client.request(method, path, **kwargs)
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    assert response.json()["detail"]
