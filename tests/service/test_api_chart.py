"""``GET /api/chart.png`` and ``/api/chart``: the bank line as a picture and as numbers."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring import winprob
from farklecam.scoring.presets import get_rules
from farklecam.service.app import create_app
from farklecam.service.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path / "cache"))
    winprob.clear_memory_cache()
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    with TestClient(app) as test_client:
        yield test_client


def test_a_preset_chart_is_a_png(client: TestClient) -> None:
    response = client.get("/api/chart.png", params={"preset": "house", "score": 3000, "step": 100})
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    picture = cv2.imdecode(np.frombuffer(response.content, dtype=np.uint8), cv2.IMREAD_COLOR)
    assert picture is not None and picture.shape == (600, 900, 3)


def test_rule_changes_go_as_set_key_value(client: TestClient) -> None:
    winprob.solve_win(get_rules("boxed").with_options({"target": 2000, "opening_minimum": 1000}))
    changes = ["target=2000", "opening_minimum=1000"]
    query = {"preset": "boxed", "score": 0, "gaps": "-500,1000", "step": 500, "set": changes}
    data = client.get("/api/chart", params=query).json()
    assert (data["rules"], data["target"], data["bank_minimum"]) == ("boxed (customised)", 2000, 1000)
    assert data["gaps"] == [-500, 0, 500, 1000] and data["stages"][0] == "out_of_play"
    assert all(t is None or t >= 1000 for line in data["lines"] for t in line["bank_from"])
    assert client.get("/api/chart.png", params=query).headers["content-type"] == "image/png"


def test_the_servers_preset_and_half_the_target_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path / "cache"))
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3", rules="zilch"))
    with TestClient(app) as client:
        data = client.get("/api/chart", params={"step": 2500}).json()
    assert (data["rules"], data["score"], data["gaps"]) == ("zilch", 5000, [-5000, -2500, 0, 2500, 5000])


def test_unsolved_rules_are_a_503_that_says_so(client: TestClient) -> None:
    response = client.get("/api/chart.png", params={"preset": "boxed", "set": "target=3000"})
    assert response.status_code == 503
    assert response.headers["retry-after"]
    body = response.json()
    assert body["error"] == "WinTableNotReady" and "farklecam solve --players 2" in body["detail"]
    winprob.solve_win(get_rules("boxed").with_options({"target": 3000}))
    assert client.get("/api/chart.png", params={"preset": "boxed", "set": "target=3000"}).status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        {"score": 3001},
        {"score": -50},
        {"preset": "house", "score": 10_000},
        {"preset": "nope"},
        {"set": "three_ones=abc"},
        {"set": "no_such_option=1"},
        {"gaps": "a,b"},
        {"gaps": "5000,-5000"},
        {"gaps": "-100000,100000"},
        {"step": 0},
        {"step": 75},
        {"scale": "cubic"},
    ],
)
def test_bad_input_is_a_4xx_with_a_message(client: TestClient, query: dict[str, object]) -> None:
    response = client.get("/api/chart.png", params=query)
    assert 400 <= response.status_code < 500
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["detail"]
