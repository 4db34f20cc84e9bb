"""Player names enter the service as printable text: controls and text-direction overrides are refused with 422."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.service.app import create_app
from farklecam.service.names import BIDI_CONTROLS, check_player_name
from farklecam.service.settings import Settings

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(db_path=tmp_path / "games.sqlite3"))) as c:
        yield c


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Ann\x00", "U+0000"),
        ("\u202eboB", "U+202E"),
        ("An\nn", "U+000A"),
        ("Ann\x1b[31m", "U+001B"),
        ("Bo\u2066b", "U+2066"),
        ("An\u2028n", "U+2028"),
    ],
)
def test_a_game_with_an_unprintable_name_is_refused(client: TestClient, name: str, why: str) -> None:
    response = client.post("/api/games", json={"players": ["Cy", name]})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert why in detail and "player names" in detail
    assert client.get("/api/games").json()["count"] == 0


def test_the_first_player_and_a_roll_off_name_are_checked_too(client: TestClient) -> None:
    refused = client.post("/api/games", json={"players": ["Ann", "Bob"], "first_player": "Ann\u202e"})
    assert refused.status_code == 422 and "U+202E" in refused.json()["detail"]
    game = client.post("/api/games", json={"players": ["Ann", "Bob"]}).json()
    action = client.post(f"/api/games/{game['id']}/actions", json={"type": "rolloff", "player": "\x00Ann", "face": 4})
    assert action.status_code == 422 and "U+0000" in action.json()["detail"]


def test_names_in_any_script_and_emoji_sequences_are_kept_as_sent(client: TestClient) -> None:
    names = ["José", "Zoë-Anne", "Ŝerĝo", "محمد\u200cرضا", "👩\u200d💻 Kim", "李雷"]
    response = client.post("/api/games", json={"players": names})
    assert response.status_code == 201, response.text
    assert response.json()["players"] == names


REFUSED = st.sampled_from([*sorted(BIDI_CONTROLS), "\x00", "\x7f", "\x85", "\u2029", "\t"])


@given(st.text(max_size=20), REFUSED, st.text(max_size=20))
def test_any_name_holding_a_refused_character_is_refused_at_its_first_one(before: str, bad: str, after: str) -> None:
    name = before + bad + after
    with pytest.raises(ValueError, match=r"character (\d+)") as caught:
        check_player_name(name)
    position = int(caught.value.args[0].split("character ")[1].split(" ")[0])
    assert position <= len(before) + 1
    assert f"U+{ord(name[position - 1]):04X}" in str(caught.value)


PRINTABLE = st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters="".join(BIDI_CONTROLS))


@given(st.text(alphabet=PRINTABLE, max_size=40))
def test_printable_names_pass_unchanged(name: str) -> None:
    assert check_player_name(name) == name
