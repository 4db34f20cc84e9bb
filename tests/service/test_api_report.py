"""One report: the same picture gives the same report through ``read --json``, ``POST /api/read`` and the WebSocket."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.service.app import create_app
from farklecam.service.cli import main
from farklecam.service.schemas import ReportPublic
from farklecam.service.settings import Settings
from farklecam.vision.reader import CLASSIFIER_FILE, DETECTOR_FILE

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "examples" / "tray_ok.jpg"
pytestmark = pytest.mark.skipif(
    not ((ROOT / "models" / DETECTOR_FILE).exists() and (ROOT / "models" / CLASSIFIER_FILE).exists()),
    reason="the committed models are not in this checkout",
)
FIELDS = tuple(ReportPublic.model_fields)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(db_path=tmp_path / "games.sqlite3"))) as c:
        yield c


def report_of(data: dict[str, Any]) -> dict[str, Any]:
    """The report's fields of an answer, validated by the one schema."""
    return ReportPublic.model_validate({k: data[k] for k in FIELDS}).model_dump(mode="json")


def test_the_same_picture_gives_the_same_report_everywhere(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["read", str(PICTURE), "--json"]) == 0
    cli = report_of(json.loads(capsys.readouterr().out))
    files = {"file": (PICTURE.name, PICTURE.read_bytes(), "image/jpeg")}
    response = client.post("/api/read", files=files)
    assert response.status_code == 200, response.text
    api = report_of(response.json())
    with client.websocket_connect("/ws/table/-") as ws:
        frames = []
        for _ in range(4):  # the same still picture: the settle layer shows its reading
            ws.send_bytes(PICTURE.read_bytes())
            frames.append(ws.receive_json())
    shown = [f for f in frames if f["reading"] is not None]
    assert shown, frames
    stream = report_of(shown[-1])
    assert cli["reading"]["faces"] and cli["advice"] is not None and cli["rules"] == "boxed"  # worth comparing
    assert cli == api == stream
