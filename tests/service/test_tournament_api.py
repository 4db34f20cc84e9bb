"""Tournaments through the real app and a real SQLite file: sign-up, rounds, CSV, the final's switch, restarts."""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring.simulate import RandomDice
from farklecam.scoring.tournament_sim import advisor_action
from farklecam.service.app import create_app
from farklecam.service.settings import Settings
from farklecam.service.tournament_store import TournamentStore

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

FORTY = [f"P{i:02d}" for i in range(1, 41)]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite3"


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(db_path=db))) as c:
        yield c


def _ok(response: Any, code: int = 200) -> dict[str, Any]:
    assert response.status_code == code, response.text
    data: dict[str, Any] = response.json()
    return data


def _finish_round(client: TestClient, name: str, seed: int) -> None:
    """Every table still playing is played out by the advisor (stored as the table page's actions would be)."""
    store: TournamentStore = client.app.state.tournaments  # type: ignore[attr-defined]
    dice = RandomDice(seed)
    for table in store.tables(name):
        with store.games.lock(table.game_id):
            game = store.games.get(table.game_id)
            while not game.is_over:
                game.apply(advisor_action(game, dice))
            store.games.persist(table.game_id, game)


def test_sign_up_start_and_follow_forty_players(client: TestClient, db: Path) -> None:
    view = _ok(client.post("/api/tournaments", json={"name": "cup", "seed": 8}), 201)
    assert view["players"] == [] and not view["started"]
    view = _ok(client.post("/api/tournaments/cup/players", json={"players": FORTY}))
    assert view["plan"][0]["goes_on"] == 32
    refused = client.post("/api/tournaments/cup/players", json={"players": ["Zed"]})
    assert refused.status_code == 409 and "at most 40 players" in refused.json()["detail"]
    view = _ok(client.post("/api/tournaments/cup/start"))
    tables = view["rounds"][0]["tables"]
    assert len(tables) == 10 and all(len(t["players"]) == 4 for t in tables)
    assert all(t["link"] == f"/#game={t['game']}" and t["rules"] == "house" for t in tables)
    game = _ok(client.get(f"/api/games/{tables[0]['game']}"))
    assert game["players"] == tables[0]["players"] and game["state"]["phase"] == "roll_off"
    busy = client.post("/api/tournaments/cup/start")
    assert busy.status_code == 409 and "still being played" in busy.json()["detail"]
    exported = client.get("/api/tournaments/cup/standings.csv")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    assert len(list(csv.DictReader(io.StringIO(exported.text)))) == 40
    with TestClient(create_app(Settings(db_path=db))) as again:
        assert _ok(again.get("/api/tournaments/cup")) == _ok(client.get("/api/tournaments/cup"))


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "message"),
    [
        ("post", "/api/tournaments", {"name": "two words"}, 422, "tournament name"),
        ("post", "/api/tournaments", {"name": "cup", "seed": -1}, 422, "seed"),
        ("get", "/api/tournaments/nope", None, 404, "no tournament named 'nope'"),
        ("post", "/api/tournaments/cup/players", {"players": ["Ann", "Ann"]}, 409, "already signed up"),
        ("post", "/api/tournaments/cup/start", None, 409, "at least 6 players"),
        ("post", "/api/tournaments/cup/final/rules", {}, 409, "not being played yet"),
    ],
)
def test_bad_requests_get_a_clear_4xx(
    client: TestClient, method: str, path: str, body: dict[str, Any] | None, code: int, message: str
) -> None:
    _ok(client.post("/api/tournaments", json={"name": "cup", "seed": 1}), 201)
    response = getattr(client, method)(path, **({} if body is None else {"json": body}))
    assert response.status_code == code and message in response.json()["detail"], response.text


def test_rounds_follow_each_other_and_the_final_turns_progressive(client: TestClient, db: Path) -> None:
    _ok(client.post("/api/tournaments", json={"name": "small", "seed": 4}), 201)
    _ok(client.post("/api/tournaments/small/players", json={"players": ["A1", "B2", "C3", "D4", "E5", "F6"]}))
    _ok(client.post("/api/tournaments/small/start"))
    for seed in range(2):
        _finish_round(client, "small", seed)
        view = _ok(client.get("/api/tournaments/small"))
        assert view["next_round"]["seating"]
        assert sorted(p for t in view["next_round"]["seating"] for p in t) == sorted(view["rounds"][-1]["advance"])
        view = _ok(client.post("/api/tournaments/small/start"))
    assert [r["name"] for r in view["rounds"]] == ["Round 1", "Round 2", "Final"]
    final = view["rounds"][-1]["tables"][0]
    first = final["players"][0]
    actions = f"/api/games/{final['game']}/actions"
    _ok(client.post(actions, json={"type": "rolloff", "player": first, "face": 6}))
    _ok(client.post(actions, json={"type": "rolloff", "player": final["players"][1], "face": 2}))
    view = _ok(client.post("/api/tournaments/small/final/rules", json={"preset": "progressive"}))
    assert view["rounds"][-1]["tables"][0]["rules"] == "progressive"
    events = _ok(client.get(f"/api/games/{final['game']}/events"))["data"]
    assert events[-1]["action"] == {"type": "rules", "preset": "progressive"}
    with TestClient(create_app(Settings(db_path=db))) as again:
        assert _ok(again.get(f"/api/games/{final['game']}"))["rules"]["piggyback"] is True
        mid = _ok(again.post(f"/api/games/{final['game']}/actions", json={"text": "roll 1,2,3,4,6,6"}))
        assert mid["state"]["phase"] == "awaiting_keep"
        refused = again.post("/api/tournaments/small/final/rules", json={"preset": "house"})
        assert refused.status_code == 409 and "start of a turn" in refused.json()["detail"]


def test_the_organiser_page_is_served(client: TestClient) -> None:
    page = client.get("/organiser.html")
    assert page.status_code == 200 and "organiser.js" in page.text
    script = client.get("/organiser.js")
    assert script.status_code == 200 and "/api/tournaments" in script.text
    ids = set(re.findall(r'id="([\w-]+)"', page.text))
    assert set(re.findall(r'\$\("([\w-]+)"\)', script.text)) <= ids  # every element the script uses is there
