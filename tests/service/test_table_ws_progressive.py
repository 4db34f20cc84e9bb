"""The table WebSocket's answers carry the progressive pass advice while a pass is on offer."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.service.app import create_app
from farklecam.service.deps import ReaderSlot, get_reader_slot
from farklecam.service.settings import Settings
from farklecam.vision.reading import Reading

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient


class TwoDice:
    """Sees a 2 and a 3 in every frame: never a throw this game wants, so only the advice changes."""

    tray = None

    def with_tray(self, corners: list[list[float]]) -> TwoDice:
        return self

    def read(self, frame: np.ndarray) -> Reading:
        return Reading(
            xyxy=[[5, 5, 20, 20], [25, 5, 40, 20]],
            confidence=[0.9, 0.9],
            face=[2, 3],
            face_confidence=[0.9, 0.9],
            status=["ok", "ok"],
            image_size=(frame.shape[1], frame.shape[0]),
        )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    slot = ReaderSlot(TwoDice)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as c:
        yield c


def test_a_pass_on_offer_brings_its_advice_and_a_throw_ends_it(client: TestClient) -> None:
    body = {"players": ["Ann", "Bob"], "first_player": "Ann", "preset": "progressive"}
    game = client.post("/api/games", json=body).json()
    actions = f"/api/games/{game['id']}/actions"
    for text in ["roll 1,1,1,2,3,4", "keep 1,1,1", "bank"]:
        assert client.post(actions, json={"text": text}).status_code == 200
    ok, jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 90, np.uint8))
    assert ok
    with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
        ws.send_bytes(jpeg.tobytes())
        answer = ws.receive_json()
        advice = answer["pass_advice"]
        assert (advice["dice"], advice["total"]) == (3, 1000) and isinstance(advice["take"], bool)
        win = advice["win"]  # Bob (0) to move against Ann's 1000: the bundled table answers by the chance to win
        assert win["available"] and advice["take"] == win["take"] and "chance to win" in advice["text"]
        assert client.post(actions, json={"text": "passed-roll 5,2,3"}).status_code == 200
        ws.send_bytes(jpeg.tobytes())
        assert ws.receive_json()["pass_advice"] is None
