"""Malformed requests of every shape get a 4xx with a message, never a 500 (hypothesis fuzzing)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring.presets import PRESETS
from farklecam.scoring.rules import option_names
from farklecam.service.app import create_app
from farklecam.service.settings import Settings

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
    """Fine, or a client error with a message, within two seconds: never a server error."""
    assert response.status_code < 500, (response.status_code, response.text)
    assert response.elapsed.total_seconds() < 2.0, (response.request.url, response.elapsed)
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


# ----------------------------------------------------------------------------- every route of the OpenAPI schema
def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    """Every (method, path, operation) the app documents: a new route is fuzzed without touching this file."""
    spec = create_app(Settings(db_path=Path("unused.sqlite3"))).openapi()
    return [(method.upper(), path, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


OPERATIONS = _operations()
_SCHEMAS: dict[str, Any] = create_app(Settings(db_path=Path("unused.sqlite3"))).openapi()["components"]["schemas"]


def _properties(op: dict[str, Any]) -> dict[str, Any]:
    """The body's top-level properties (JSON or form), resolved through ``$ref``."""
    content = op.get("requestBody", {}).get("content", {})
    for media in content.values():
        schema = media.get("schema", {})
        ref = schema.get("$ref", "")
        schema = _SCHEMAS.get(ref.rsplit("/", 1)[-1], schema) if ref else schema
        return dict(schema.get("properties", {}))
    return {}


def _value_for(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values near what a property expects (its type, its bounds and past them) and plain junk."""
    kinds = {prop.get("type")} | {p.get("type") for p in prop.get("anyOf", [])}
    near: st.SearchStrategy[Any] = json_values
    if "integer" in kinds:
        low, high = prop.get("minimum", -(10**6)), prop.get("maximum", 10**6)
        near = st.integers(low - 2, high + 2) | st.sampled_from([2**63, -(2**63), 10**20])
    elif "array" in kinds:
        near = st.lists(st.integers(-1, 8), max_size=10)
    elif "object" in kinds:
        near = options
    elif "string" in kinds:
        near = st.text(max_size=50) | st.sampled_from(["boxed", "house", "keep 1", "roll 1 2 3 4 5 6", "undo"])
    return near | json_values


@st.composite
def _request(draw: st.DrawFn, op: dict[str, Any], path: str, game_id: str) -> dict[str, Any]:
    """Path, query and body for one operation: mostly plausible, sometimes junk."""
    url = path
    for param in op.get("parameters", []):
        if param["in"] == "path":
            value = draw(st.sampled_from([game_id, "boxed-cup", "nope"]) | st.text(min_size=1, max_size=70))
            url = url.replace("{" + param["name"] + "}", quote(value, safe=""))
    query = {
        p["name"]: str(draw(st.integers(-(2**64), 2**64) | st.text(max_size=10)))
        for p in op.get("parameters", [])
        if p["in"] == "query" and draw(st.booleans())
    }
    props = _properties(op)
    body: Any = {name: draw(_value_for(prop)) for name, prop in props.items() if draw(st.booleans())}
    if draw(st.integers(0, 9)) == 0:
        body = draw(json_values)
    return {"url": url, "params": query, "body": body}


@pytest.mark.parametrize(("method", "path", "op"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_documented_route_answers_without_a_5xx(
    client: TestClient, game_id: str, method: str, path: str, op: dict[str, Any]
) -> None:
    multipart = "multipart/form-data" in op.get("requestBody", {}).get("content", {})

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(request=_request(op, path, game_id), picture=st.binary(max_size=64))
    def fuzz(request: dict[str, Any], picture: bytes) -> None:
        kwargs: dict[str, Any] = {"params": request["params"]}
        if method == "POST" and multipart:
            fields = request["body"] if isinstance(request["body"], dict) else {}
            kwargs["data"] = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in fields.items()}
            kwargs["files"] = {"file": ("x.jpg", picture, "image/jpeg")}
        elif method == "POST":
            kwargs["json"] = request["body"]
        response = client.request(method, request["url"], **kwargs)
        assert response.status_code < 500, (method, request, response.status_code, response.text[:300])

    fuzz()


def test_every_route_is_fuzzed() -> None:
    """The schema lists the routes the app serves: the games, readings and rules at least."""
    paths = {p for _, p, _ in OPERATIONS}
    assert {"/api/score", "/api/advise", "/api/read", "/api/games", "/api/games/{game_id}/actions"} <= paths


@FUZZ
@given(message=st.binary(max_size=100) | st.text(max_size=100) | json_values.map(json.dumps))
def test_websocket_messages_fuzz(client: TestClient, game_id: str, message: Any) -> None:
    """Any text or binary message on a table's socket is answered (an error at worst); the socket stays open."""
    with client.websocket_connect(f"/ws/table/{game_id}") as ws:
        if isinstance(message, bytes):
            ws.send_bytes(message)
        else:
            ws.send_text(message)
        answer = ws.receive_json()
        assert answer["type"] in ("error", "pong", "tray", "straight_down", "message", "frame"), answer
        ws.send_text('{"type": "ping"}')
        assert ws.receive_json() == {"type": "pong"}


# ----------------------------------------------------------------------------- text no route may trip over
#: Any character at all, lone surrogates (JSON's escapes give them) and digits that are not ASCII among them.
any_text = st.text(st.characters(exclude_categories=()), max_size=12) | st.sampled_from(
    ["\ud800", "Ann\n", "cup\n", "\u00b9", "\u0661", "1,2,3,4,5,\u00b9", "\u202e", "\x00"]
)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)


def _post_ascii(client: TestClient, path: str, body: Any) -> Any:
    """POST ``body`` as JSON escaped to ASCII, the way a client sends a lone surrogate."""
    return client.post(path, content=json.dumps(body).encode("ascii"), headers={"Content-Type": "application/json"})


@pytest.fixture(scope="module")
def tournament(client: TestClient) -> str:
    assert client.post("/api/tournaments", json={"name": "fuzz"}).status_code == 201
    return "fuzz"


@FUZZ
@given(text=any_text, value=any_json)
def test_any_text_in_any_field_fuzz(client: TestClient, game_id: str, tournament: str, text: str, value: Any) -> None:
    """Every JSON route, with any text where a name, preset, option, face or action goes: a 4xx at worst."""
    for path, body in (
        ("/api/score", {"dice": [1, 5, text], "preset": text, "options": {text: value}}),
        ("/api/advise", {"dice": [1, 5], "options": {"three_ones": text}, "turn_total": value}),
        ("/api/games", {"players": [text, "Bob"], "first_player": text}),
        ("/api/games", {"players": ["Ann", "Bob"], "preset": text, "options": {text: value}}),
        (f"/api/games/{game_id}/actions", {"text": f"roll 1,2,3,4,5,{text}"}),
        (f"/api/games/{game_id}/actions", {"text": f'rolloff "{text}" 5'}),
        (f"/api/games/{game_id}/actions", {"type": text, "faces": value}),
        ("/api/tournaments", {"name": text}),
        (f"/api/tournaments/{tournament}/players", {"players": [text, "Bob"]}),
        (f"/api/tournaments/{tournament}/final/rules", {"preset": text}),
    ):
        check(_post_ascii(client, path, body))
