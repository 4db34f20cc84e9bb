"""A game created with options that change its preset's play is labelled "PRESET (customised)", in every answer."""

from __future__ import annotations

import warnings
from pathlib import Path

from starlette.exceptions import StarletteDeprecationWarning

from farklecam.service.app import create_app
from farklecam.service.settings import Settings

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient


def test_a_customised_game_is_labelled_as_such_and_keeps_the_label_after_a_restart(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "games.sqlite3")
    players = {"players": ["Ann", "Bob"], "first_player": "Ann"}
    with TestClient(create_app(settings)) as client:
        custom = client.post("/api/games", json={**players, "preset": "house", "options": {"three_ones": 2000}})
        same = client.post("/api/games", json={**players, "preset": "house", "options": {"three_ones": 1000}})
        plain = client.post("/api/games", json={**players, "preset": "house"})
        assert [r.status_code for r in (custom, same, plain)] == [201, 201, 201]
        assert custom.json()["rules"]["name"] == "house (customised)"
        assert custom.json()["rules"]["three_ones"] == 2000
        # Options that only repeat the preset's values change nothing: the preset's own name.
        assert same.json()["rules"]["name"] == plain.json()["rules"]["name"] == "house"
    with TestClient(create_app(settings)) as client:
        listed = {g["id"]: g["rules"] for g in client.get("/api/games").json()["data"]}
        assert listed[custom.json()["id"]] == "house (customised)"
        assert listed[plain.json()["id"]] == "house"
        reopened = client.get(f"/api/games/{custom.json()['id']}").json()
        assert (reopened["rules"]["name"], reopened["rules"]["three_ones"]) == ("house (customised)", 2000)
