"""Which server a table's camera streams to: kept in the shared database, on both engines, and shown to organisers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from farklecam.service.db.changes import Change
from farklecam.service.db.engine import open_database
from farklecam.service.db.target import DatabaseTarget
from farklecam.service.live_tables import STALE_SECONDS, TOUCH_SECONDS, LiveTables
from farklecam.service.settings import Settings
from tests.service.test_api_ws import BrightnessReader, frame

FORTY = [f"P{k:02d}" for k in range(1, 41)]


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def db(target: DatabaseTarget) -> Iterator[Any]:
    database = open_database(target)
    yield database
    database.close()


def test_a_stream_claims_its_table_refreshes_it_and_gives_it_back(db: Any) -> None:
    clock, heard = Clock(), []
    unsubscribe = db.subscribe(heard.append)
    one, two = LiveTables(db, "app1:8000", clock), LiveTables(db, "app2:8000", clock)
    one.claim("g1")
    one.claim("g2")
    assert {k: v.server for k, v in two.where(["g1", "g2", "g3"]).items()} == {"g1": "app1:8000", "g2": "app1:8000"}
    two.claim("g2")  # the camera page moved to the other server: it takes the table over
    clock.t += TOUCH_SECONDS
    one.touch("g2")  # the old stream's refresh no longer names the table
    assert one.where(["g2"])["g2"].server == "app2:8000" and one.where(["g2"])["g2"].seen == 1_000.0
    one.release("g2")  # nor does its close
    assert two.where(["g2"])["g2"].server == "app2:8000"
    clock.t += STALE_SECONDS - 1
    one.touch("g1")  # frames keep arriving at g1; nothing has come to g2 for the stale time
    clock.t += 2
    assert set(one.where(["g1", "g2"])) == {"g1"}  # a server that stopped refreshing has no camera there
    one.release("g1")
    assert one.where(["g1"]) == {}
    unsubscribe()
    streams = [c for c in heard if c is not None and c.kind == "stream"]
    assert streams[:3] == [Change("stream", "g1"), Change("stream", "g2"), Change("stream", "g2")]


def test_a_tournament_table_says_which_server_its_camera_streams_to(tmp_path: Path) -> None:
    from farklecam.service.app import create_app
    from farklecam.service.deps import ReaderSlot, get_reader_slot
    from tests.service.conftest import TestClient

    app = create_app(Settings(db_path=tmp_path / "games.sqlite3", server_name="hall-a"))
    slot = ReaderSlot(BrightnessReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        assert client.post("/api/tournaments", json={"name": "cup", "seed": 8}).status_code == 201
        assert client.post("/api/tournaments/cup/players", json={"players": FORTY}).status_code == 200
        view = client.post("/api/tournaments/cup/start").json()
        tables = view["rounds"][0]["tables"]
        assert all(t["camera"] is None for t in tables)
        game = tables[3]["game"]
        with client.websocket_connect(f"/ws/table/{game}") as ws:
            ws.send_bytes(frame(2))
            assert ws.receive_json()["type"] == "frame"
            shown = client.get("/api/tournaments/cup").json()["rounds"][0]["tables"]
            assert [t["camera"]["server"] if t["camera"] else None for t in shown] == [None] * 3 + ["hall-a"] + [
                None
            ] * (len(shown) - 4)
        assert client.get("/api/tournaments/cup").json()["rounds"][0]["tables"][3]["camera"] is None
