"""Games through the real app and a real SQLite file: create, play, 409s, history, restart mid-game."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.service.app import create_app
from farklecam.service.settings import Settings

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

#: Ann banks 650 (5,5 then 3,3,3,5 then 1,1), Bob farkles, Ann rolls again.
TURNS = [
    {"text": "roll 5,5,2,3,4,6"},
    {"type": "keep", "faces": [5, 5]},
    {"type": "roll", "faces": [3, 3, 3, 5]},
    {"type": "keep", "faces": [3, 3, 3, 5]},
    {"type": "roll", "faces": [1, 1, 6, 2, 6, 4]},
    {"type": "keep", "faces": [1, 1]},
    {"type": "bank"},
    {"type": "roll", "faces": [2, 2, 3, 4, 6, 6]},
    {"text": "roll 1,2,3,4,6,6"},
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite3"


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(db_path=db))) as c:
        yield c


def new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    body = {"players": ["Ann", "Bob"], "first_player": "Ann", **body}
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def play(client: TestClient, game_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for action in actions:
        response = client.post(f"/api/games/{game_id}/actions", json=action)
        assert response.status_code == 200, (action, response.json())
        data = response.json()
    return data


def scores(game: dict[str, Any]) -> dict[str, int]:
    return {p["name"]: p["score"] for p in game["state"]["players"]}


def test_create_game_starts_with_the_first_player(client: TestClient) -> None:
    game = new_game(client, preset="house")
    assert game["players"] == ["Ann", "Bob"]
    assert game["rules"] == get_rules("house").to_dict()
    assert game["events"] == 0
    state = game["state"]
    assert (state["phase"], state["current"], state["dice_to_throw"]) == ("awaiting_roll", "Ann", 6)
    assert state["legal"]["kinds"] == ["roll"]


def test_create_game_with_a_roll_off(client: TestClient) -> None:
    game = new_game(client, first_player=None)
    assert game["state"]["phase"] == "roll_off"
    game = play(client, game["id"], [{"type": "rolloff", "player": "Ann", "face": 2}, {"text": "rolloff Bob 6"}])
    assert (game["state"]["phase"], game["state"]["current"]) == ("awaiting_roll", "Bob")


def test_a_turn_banks_and_passes_play(client: TestClient) -> None:
    game = new_game(client)
    game = play(client, game["id"], TURNS)
    assert scores(game) == {"Ann": 650, "Bob": 0}
    state = game["state"]
    assert (state["current"], state["phase"], state["roll"]) == ("Ann", "awaiting_keep", [1, 2, 3, 4, 6, 6])
    assert [t["end"] for t in state["turns"]] == ["banked", "farkled"]
    assert state["legal"]["keeps"][0]["keep"] == [1]
    reference = Game(get_rules("boxed"), ["Ann", "Bob"], first_player="Ann")
    for action in TURNS:
        reference.apply(action["text"] if "text" in action else _text(action))
    assert state["description"] == reference.state.describe()


def _text(action: dict[str, Any]) -> str:
    faces = ",".join(map(str, action.get("faces", [])))
    return f"{action['type']} {faces}".strip()


@pytest.mark.parametrize(
    ("actions", "bad", "detail"),
    [
        ([], {"type": "bank"}, "Allowed now: roll 6 dice"),
        ([], {"type": "roll", "faces": [1, 2, 3]}, "6"),
        ([{"text": "roll 5,5,2,3,4,6"}], {"type": "keep", "faces": [2]}, "cannot keep"),
        ([{"text": "roll 5,5,2,3,4,6"}, {"text": "keep 5"}], {"type": "bank"}, "minimum to get on the board is 500"),
        ([], {"type": "undo"}, "nothing to undo"),
        ([], {"type": "farkle"}, "no scoreless roll"),
    ],
)
def test_illegal_actions_are_409_with_the_engines_message(
    client: TestClient, actions: list[dict[str, Any]], bad: dict[str, Any], detail: str
) -> None:
    game = new_game(client)
    before = play(client, game["id"], actions) if actions else game
    response = client.post(f"/api/games/{game['id']}/actions", json=bad)
    assert response.status_code == 409, response.json()
    assert detail in response.json()["detail"]
    after = client.get(f"/api/games/{game['id']}").json()
    assert after == before  # nothing changed, nothing was logged


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "keep"},
        {"type": "keep", "faces": [7]},
        {"type": "bank", "faces": [1]},
        {"type": "jump"},
        {"text": "jump 3"},
        {"text": "keep 1", "faces": [1]},
        {},
        {"type": "rolloff", "player": "Ann"},
    ],
)
def test_malformed_actions_are_422(client: TestClient, bad: dict[str, Any]) -> None:
    game = new_game(client)
    response = client.post(f"/api/games/{game['id']}/actions", json=bad)
    assert response.status_code == 422, response.json()
    assert response.json()["detail"]


def test_game_over_is_409(client: TestClient) -> None:
    game = new_game(client, options={"target": 500})
    game = play(client, game["id"], [{"text": "roll 1,1,1,1,5,2"}, {"text": "keep 1,1,1,1,5"}, {"type": "bank"}])
    game = play(client, game["id"], [{"text": "roll 2,2,3,4,6,6"}])  # Bob's last turn farkles
    assert game["state"]["phase"] == "game_over" and game["state"]["winners"] == ["Ann"]
    response = client.post(f"/api/games/{game['id']}/actions", json={"text": "roll 1,1,1,1,1,1"})
    assert response.status_code == 409
    assert "game is over" in response.json()["detail"]


def test_bad_game_setups_are_422(client: TestClient) -> None:
    for body in (
        {"players": ["Ann"]},
        {"players": ["Ann", "Ann"]},
        {"players": ["Ann", "Bob"], "first_player": "Cy"},
        {"players": ["Ann", "Bob"], "preset": "chess"},
        {"players": ["Ann", " "]},
        {"players": ["x" * 41, "Bob"]},
    ):
        response = client.post("/api/games", json=body)
        assert response.status_code == 422, (body, response.json())
        assert response.json()["detail"]


def test_unknown_games_are_404_and_bad_ids_422(client: TestClient) -> None:
    for method, path in (("GET", ""), ("GET", "/events"), ("GET", "/advice"), ("POST", "/actions")):
        response = client.request(method, f"/api/games/0123456789ab{path}", json={"type": "bank"})
        assert response.status_code == 404, path
        assert response.json()["detail"] == "no game with id '0123456789ab'"
    assert client.get("/api/games/bad%20id!").status_code == 422


def test_undo_is_logged_and_history_lists_everything(client: TestClient) -> None:
    game = new_game(client)
    play(client, game["id"], [{"text": "roll 5,5,2,3,4,6"}, {"text": "keep 5,5"}, {"type": "undo"}, {"text": "keep 5"}])
    events = client.get(f"/api/games/{game['id']}/events").json()
    assert events["count"] == 4
    assert [e["text"] for e in events["data"]] == ["roll 2,3,4,5,5,6", "keep 5,5", "undo", "keep 5"]
    assert [e["seq"] for e in events["data"]] == [1, 2, 3, 4]
    assert all(isinstance(e["at"], float) for e in events["data"])
    state = client.get(f"/api/games/{game['id']}").json()["state"]
    assert (state["turn_total"], state["dice_to_throw"]) == (50, 5)


def test_game_advice_uses_the_game_position(client: TestClient) -> None:
    advisor = pytest.importorskip("farklecam.scoring.advisor", reason="farklecam.scoring.advisor is not installed yet")
    game = new_game(client)
    assert client.get(f"/api/games/{game['id']}/advice").status_code == 409  # nothing rolled yet
    play(client, game["id"], [{"text": "roll 5,5,2,3,4,6"}, {"text": "keep 5,5"}, {"text": "roll 1,5,3,3"}])
    response = client.get(f"/api/games/{game['id']}/advice")
    assert response.status_code == 200
    expected = advisor.advise((1, 3, 3, 5), get_rules("boxed"), turn_total=100, on_board=False)
    data = response.json()
    win = data.pop("win")  # advice by the chance to win from the game's scores (available once solved)
    assert data.pop("passed") is None  # no pass on offer (boxed rules pass no dice)
    assert data == expected.to_dict()
    assert win["scores"] == [0, 0] if win["available"] else "solve --players 2" in win["why"]


def test_list_games_newest_first(client: TestClient) -> None:
    first = new_game(client)
    second = new_game(client, players=["Cy", "Di", "Ed"], first_player="Di", preset="zilch")
    play(client, first["id"], [{"text": "roll 1,2,3,4,6,6"}])
    listed = client.get("/api/games").json()
    assert listed["count"] == 2
    assert [g["id"] for g in listed["data"]] == [first["id"], second["id"]]
    assert listed["data"][0]["events"] == 1 and listed["data"][1]["rules"] == "zilch"
    assert client.get("/api/games?limit=1&offset=1").json()["data"][0]["id"] == second["id"]
    assert client.get("/api/games?limit=0").status_code == 422


def test_restart_mid_game_restores_everything(db: Path) -> None:
    with TestClient(create_app(Settings(db_path=db))) as client:
        game = new_game(client)
        play(client, game["id"], TURNS[:7])  # Ann banked 650
        play(client, game["id"], [{"text": "roll 5,2,2,3,4,6"}, {"text": "keep 5"}])  # Bob mid-turn
        before = client.get(f"/api/games/{game['id']}").json()
        history = client.get(f"/api/games/{game['id']}/events").json()
    # The app, its connection and its cache are gone; a new app replays the file.
    with TestClient(create_app(Settings(db_path=db))) as client:
        assert client.get(f"/api/games/{game['id']}").json() == before
        assert client.get(f"/api/games/{game['id']}/events").json() == history
        assert scores(before) == {"Ann": 650, "Bob": 0}
        after = play(client, game["id"], [{"text": "roll 1,1,1,1,2"}, {"text": "keep 1,1,1,1"}, {"type": "bank"}])
        assert scores(after) == {"Ann": 650, "Bob": 1050}
        assert after["state"]["current"] == "Ann"


# ----------------------------------------------------------------------------- concurrent tables
def test_a_stale_expected_events_is_409_and_changes_nothing(client: TestClient) -> None:
    game = new_game(client)
    gid = game["id"]
    played = play(client, gid, [{"text": "roll 1 2 3 4 6 6"}, {"text": "keep 1", "expected_events": 1}])
    assert played["events"] == 2  # the reply describes this action's state
    response = client.post(f"/api/games/{gid}/actions", json={"type": "undo", "expected_events": 1})
    assert response.status_code == 409, response.text
    assert "has 2 events, this action expected 1" in response.json()["detail"]
    assert client.get(f"/api/games/{gid}").json()["events"] == 2


@pytest.mark.parametrize("value", [-1, 10**7, "2", 1.5])
def test_a_malformed_expected_events_is_422(client: TestClient, value: Any) -> None:
    gid = new_game(client)["id"]
    response = client.post(f"/api/games/{gid}/actions", json={"type": "undo", "expected_events": value})
    assert response.status_code == 422, response.text


def test_two_devices_pressing_undo_at_once_undo_once(client: TestClient) -> None:
    """Both send the count they saw: exactly one undo applies, the other is a 409, each reply is its own."""
    gid = new_game(client)["id"]
    seen = play(client, gid, [{"text": "roll 1 2 3 4 6 6"}, {"text": "keep 1"}])["events"]
    barrier = threading.Barrier(2)
    answers: list[Any] = []

    def press() -> None:
        barrier.wait()
        answers.append(client.post(f"/api/games/{gid}/actions", json={"type": "undo", "expected_events": seen}))

    for _ in range(10):
        threads = [threading.Thread(target=press) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(a.status_code for a in answers) == [200, 409]
        (ok,) = [a.json() for a in answers if a.status_code == 200]
        assert ok["events"] == seen + 1 and ok["state"]["phase"] == "awaiting_keep"
        answers.clear()
        seen = play(client, gid, [{"text": "keep 1"}])["events"]  # put the keep back for the next round


def test_the_rules_change_as_a_structured_action(client: TestClient) -> None:
    game = new_game(client, preset="house")
    changed = play(client, game["id"], [{"type": "rules", "preset": "progressive"}])
    assert changed["rules"]["name"] == "progressive" and changed["events"] == 1
    unknown = client.post(f"/api/games/{game['id']}/actions", json={"type": "rules", "preset": "zilch2"})
    assert unknown.status_code == 422 and "unknown rule preset 'zilch2'" in unknown.text
    mixed = client.post(f"/api/games/{game['id']}/actions", json={"text": "rules house", "preset": "house"})
    assert mixed.status_code == 422 and "stands alone" in mixed.text


def test_game_advice_with_a_pass_on_offer_says_take_it_or_start_fresh(client: TestClient) -> None:
    from farklecam.scoring.pass_advice import advise_pass

    game = new_game(client, preset="progressive")
    play(client, game["id"], [{"text": "roll 1,1,1,2,3,4"}, {"text": "keep 1,1,1"}, {"text": "bank"}])
    response = client.get(f"/api/games/{game['id']}/advice")
    assert response.status_code == 200
    passed = response.json()["passed"]
    expected = advise_pass(get_rules("progressive"), 1000, 3, scores=[0, 1000], streaks=[0, 0])
    assert expected.win is not None
    assert (passed["total"], passed["dice"], passed["take"]) == (1000, 3, expected.take)
    assert passed["win"]["available"] and passed["win"]["take_probability"] == pytest.approx(expected.win.take_win)
    play(client, game["id"], [{"text": "passed-roll 2,3,4"}])  # Bob took it and farkled: Ann to throw, no pass
    assert client.get(f"/api/games/{game['id']}/advice").status_code == 409


def test_a_game_with_a_head_start_keeps_it_and_fair_is_the_solved_compensation(client: TestClient) -> None:
    from farklecam.scoring.winprob import solve_win

    given = new_game(client, preset="house", head_start={"Bob": 300})
    assert given["head_start"] == {"Bob": 300}
    assert [(p["score"], p["on_board"]) for p in given["state"]["players"]] == [(0, False), (300, True)]
    assert client.get(f"/api/games/{given['id']}").json()["head_start"] == {"Bob": 300}
    fair = new_game(client, preset="house", head_start="fair")
    points = solve_win(get_rules("house")).compensation()
    assert fair["head_start"] == ({"Bob": points} if points else {}) and points > 0


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"players": ["Ann", "Bob", "Cy"], "first_player": "Ann", "head_start": "fair"}, 409, "two players"),
        ({"players": ["Ann", "Bob"], "head_start": "fair"}, 409, "first player"),
        ({"players": ["Ann", "Bob"], "head_start": {"Cy": 100}}, 422, "not one of"),
        ({"players": ["Ann", "Bob"], "head_start": {"Bob": 120}}, 422, "multiple of 50"),
        ({"players": ["Ann", "Bob"], "head_start": "generous"}, 422, ""),
    ],
)
def test_a_head_start_the_game_cannot_hold_is_a_clear_4xx(
    client: TestClient, body: dict[str, Any], status: int, message: str
) -> None:
    response = client.post("/api/games", json=body)
    assert response.status_code == status, response.text
    assert message in response.text


def test_a_two_player_game_says_each_players_chance_to_win_after_every_action(client: TestClient) -> None:
    from farklecam.scoring.winprob import chance_now

    game = new_game(client, preset="house")
    house = get_rules("house")
    seen = []
    for text in ("roll 1,1,1,5,2,3", "keep 1,1,1,5", "bank", "roll 2,2,3,4,6,6"):
        state = play(client, game["id"], [{"text": text}])["state"]
        chances = state["chances"]
        assert chances is not None and sum(chances) == pytest.approx(1.0)
        seen.append(chances)
    # Ann banked 1050 and Bob farkled: Ann to throw six dice from nothing, 1050 against 0.
    assert seen[-1][0] == pytest.approx(chance_now(house, [1050, 0]))
    assert seen[1][0] == pytest.approx(chance_now(house, [0, 0], turn_total=1050, dice=2, kept=True))
    assert state["chances_approximate"] is False


def test_a_table_of_three_or_four_says_each_players_chance_to_win_labelled_approximate(client: TestClient) -> None:
    from farklecam.scoring.winprob import advise_win, combine_opponents, solve_win

    house = get_rules("house")
    game = new_game(client, players=["Ann", "Bob", "Cy"], preset="house")
    state = game["state"]
    assert state["chances_approximate"] is True
    assert sum(state["chances"]) == pytest.approx(1.0) and state["chances"][0] > state["chances"][2]  # the first throws
    for text in ("roll 1,1,1,5,2,3", "keep 1,1,1,5", "bank", "roll 2,2,3,4,6,6", "roll 5,5,5,2,3,4"):
        state = play(client, game["id"], [{"text": text}])["state"]
        chances = state["chances"]
        assert chances is not None and sum(chances) == pytest.approx(1.0) and min(chances) > 0
    # Ann banked 1050, Bob farkled, Cy threw 5,5,5 and waits for a keep: Cy's own chance is the advice's
    # combination of his chances against Ann and Bob alone, before the three are scaled to add up to one.
    cy = combine_opponents([advise_win((5, 5, 5, 2, 3, 4), house, [0, s]).win for s in (1050, 0)])
    ann = combine_opponents(
        [1.0 - advise_win((5, 5, 5, 2, 3, 4), house, [0, 1050]).win, solve_win(house).start_chance(1050, 0)]
    )
    bob = combine_opponents(
        [1.0 - advise_win((5, 5, 5, 2, 3, 4), house, [0, 0]).win, 1.0 - solve_win(house).start_chance(1050, 0)]
    )
    total = ann + bob + cy
    assert state["chances"] == pytest.approx([ann / total, bob / total, cy / total])
    assert state["chances"][0] > max(state["chances"][1:])  # 1050 ahead
    four = new_game(client, players=["Ann", "Bob", "Cy", "Dee"], preset="house")
    assert four["state"]["chances_approximate"] is True and sum(four["state"]["chances"]) == pytest.approx(1.0)
