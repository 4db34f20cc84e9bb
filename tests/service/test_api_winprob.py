"""Advice by the chance to win through the API: ``scores`` on /api/advise adds a ``win`` block."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

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
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3", max_upload_bytes=64 * 1024))
    with TestClient(app) as test_client:
        yield test_client


def test_last_turn_advice_needs_no_table(client: TestClient) -> None:
    body = {"dice": [5, 5, 5, 2, 3, 4], "scores": [3500, 12_000], "preset": "boxed"}
    response = client.post("/api/advise", json=body)
    assert response.status_code == 200
    data = response.json()
    assert data["action"] == "bank"  # the points advice is unchanged (additive API)
    win = data["win"]
    assert win["available"] and win["last_turn"] and win["action"] == "roll"
    theirs = win["points_advice"]
    assert (theirs["keep"], theirs["action"]) == ([5, 5, 5], "bank")
    assert theirs["win_probability"] == 0.0  # banking 4,000 against 12,000 in the last turn loses
    assert theirs["cost"] == win["win_probability"] > 0


def test_unsolved_rules_say_how_to_solve_them(client: TestClient) -> None:
    body = {"dice": [1, 2, 3, 3, 4, 6], "scores": [500, 700], "preset": "boxed", "options": {"target": 5000}}
    data = client.post("/api/advise", json=body).json()
    assert data["win"]["available"] is False
    assert "farklecam solve --players 2" in data["win"]["why"]


def test_a_preset_answers_with_the_chance_to_win_from_the_start(client: TestClient) -> None:
    body = {"dice": [1, 2, 3, 3, 4, 6], "scores": [500, 700], "preset": "zilch", "streaks": [2, 0]}
    win = client.post("/api/advise", json=body).json()["win"]  # its table ships solved
    assert win["available"] and 0.0 < win["win_probability"] < 1.0


def test_solved_rules_answer_with_the_chance_to_win(client: TestClient) -> None:
    options = {"target": 500, "last_round": False, "opening_minimum": 0}
    rules = get_rules("busche-neller").with_options(options)
    winprob.solve_win(rules)
    body = {"dice": [1, 2, 3, 3, 4, 6], "scores": [400, 0], "preset": "busche-neller", "options": options}
    win = client.post("/api/advise", json=body).json()["win"]
    assert win["available"] and (win["keep"], win["action"]) == ([1], "bank")  # 400 + 100 reaches the target
    assert win["win_probability"] == 1.0


@pytest.mark.parametrize("scores", [[500], [525, 100], [10_000, 0]])
def test_bad_scores_are_a_4xx(client: TestClient, scores: list[int]) -> None:
    response = client.post("/api/advise", json={"dice": [5, 5, 5, 2, 3, 4], "scores": scores})
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]


def test_streaks_weigh_the_penalty_and_a_wrong_count_is_a_4xx(client: TestClient) -> None:
    options = {"target": 1000, "last_round": False, "farkle_penalty": 500}
    winprob.solve_win(get_rules("busche-neller").with_options(options))
    body = {"dice": [2, 3, 4, 6, 2, 3], "scores": [600, 400], "preset": "busche-neller", "options": options}
    calm = client.post("/api/advise", json={**body, "streaks": [0, 0]}).json()["win"]
    fined = client.post("/api/advise", json={**body, "streaks": [2, 0]}).json()["win"]
    assert calm["available"] and fined["win_probability"] < calm["win_probability"]
    by_default = client.post("/api/advise", json={**body, "farkle_streak": 2}).json()["win"]  # the mover's streak
    assert by_default["win_probability"] == fined["win_probability"]
    for streaks, message in [([2], "a farkle streak for each"), ([3, 0], "farkle streak")]:
        response = client.post("/api/advise", json={**body, "streaks": streaks})
        assert 400 <= response.status_code < 500 and message in response.json()["detail"]


def test_a_missed_single_die_is_thrown_again(client: TestClient) -> None:
    body = {"dice": [3], "scores": [2000, 3000], "preset": "elizabethan", "turn_total": 1000}
    data = client.post("/api/advise", json=body).json()
    assert data["throw_again"] and data["win"]["throw_again"] and not data["win"]["farkle"]
    last = client.post("/api/advise", json={**body, "throws_left": 1}).json()
    assert last["farkle"] and last["win"]["farkle"]
    assert last["win"]["win_probability"] < data["win"]["win_probability"]


@pytest.mark.parametrize(("extra", "status"), [({"throws_left": 9}, 422), ({"dice": [3, 4], "throws_left": 2}, 409)])
def test_throws_left_out_of_place_is_a_client_error(client: TestClient, extra: dict[str, object], status: int) -> None:
    body = {"dice": [3], "scores": [2000, 3000], "preset": "elizabethan", **extra}
    response = client.post("/api/advise", json=body)
    assert response.status_code == status
    assert "throws_left" in str(response.json()["detail"])


def test_the_schema_documents_the_explained_advice(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    advice = schemas["AdvicePublic"]["properties"]
    assert {"farkle_probability", "alternatives", "win"} <= set(advice)
    assert "farkle_probability" in schemas["KeepAdvicePublic"]["required"]
    win = schemas["WinAdvicePublic"]["properties"]
    assert {"bank_probability", "roll_probability", "farkle_probability", "points_advice", "approximation"} <= set(win)
    assert {"win_probability", "cost"} <= set(schemas["PointsPlayPublic"]["properties"])
    assert "farkle_probability" in schemas["WinOptionPublic"]["required"]


def test_advise_explains_each_keep(client: TestClient) -> None:
    body = {"dice": [5, 5, 5, 2, 3, 4], "scores": [3500, 12_000], "preset": "boxed"}
    data = client.post("/api/advise", json=body).json()
    assert 0 < data["farkle_probability"] < 1 and all("farkle_probability" in a for a in data["alternatives"])
    win = data["win"]
    assert win["points_advice"]["cost"] == pytest.approx(
        win["win_probability"] - win["points_advice"]["win_probability"]
    )
    assert [a["keep"] for a in win["alternatives"]] and all(a["farkle_probability"] > 0 for a in win["alternatives"])


def test_advise_takes_a_passed_field(client: TestClient) -> None:
    from farklecam.scoring.pass_win import advise_pass_win

    body = {"preset": "progressive", "passed": {"total": 1600, "dice": 2}, "scores": [3000, 4000]}
    response = client.post("/api/advise", json=body)
    assert response.status_code == 200
    data = response.json()
    assert set(data) == {"passed"}  # no roll: only the pass's advice
    passed = data["passed"]
    assert (passed["total"], passed["dice"]) == (1600, 2) and 0 < passed["farkle_probability"] < 1
    win = passed["win"]  # the preset's table ships solved: the answer is there at once
    found = advise_pass_win(get_rules("progressive"), (3000, 4000), 1600, 2)
    assert win["available"] and win["take"] == found.take
    assert win["take_probability"] == pytest.approx(found.take_win)
    assert "win" not in client.post("/api/advise", json={**body, "scores": None}).json()["passed"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"preset": "progressive", "passed": {"total": 1600, "dice": 2}, "dice": [1, 5]}, 422),
        ({"preset": "progressive"}, 422),
        ({"preset": "progressive", "passed": {"total": 1625, "dice": 2}}, 422),
        ({"preset": "progressive", "passed": {"total": 1600, "dice": 2}, "turn_total": 300}, 422),
        ({"preset": "house", "passed": {"total": 1600, "dice": 2}}, 409),
    ],
)
def test_a_pass_the_rules_cannot_offer_is_a_client_error(
    client: TestClient, body: dict[str, object], status: int
) -> None:
    response = client.post("/api/advise", json=body)
    assert response.status_code == status
    assert response.json()["detail"]


def test_the_schema_documents_the_pass_advice(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert "passed" in schemas["AdviceIn"]["properties"] and "passed" in schemas["AdvicePublic"]["properties"]
    assert {"take_probability", "fresh_probability", "points_cost"} <= set(schemas["PassWinPublic"]["properties"])
