"""The REST API through the real app (lifespan, SQLite file, error handlers), route by route."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring.presets import PRESETS, get_rules
from farklecam.service.app import create_app
from farklecam.service.deps import ReaderSlot, get_reader_slot
from farklecam.service.settings import Settings
from farklecam.service.usecases.scoring import score_roll
from farklecam.vision.reading import Reading
from farklecam.vision.tray.outline import TrayOutline

ROOT = Path(__file__).resolve().parents[2]

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient


class FakeReader:
    """Reads the same three dice in any frame (a 1, a 5 and a cocked die); counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.trays: list[TrayOutline] = []
        self.memories: list[object] = []

    def with_vertical_memory(self, memory: object) -> FakeReader:
        """As :meth:`farklecam.vision.reader.DiceReader.with_vertical_memory`: here, the camera's memory is recorded."""
        self.memories.append(memory)
        return self

    def with_tray(self, corners: list[list[float]]) -> FakeReader:
        """As :meth:`farklecam.vision.reader.DiceReader.with_tray`: the corners checked and kept (here: recorded)."""
        self.trays.append(TrayOutline.from_corners(corners))
        return self

    def read(self, frame: np.ndarray) -> Reading:
        self.calls += 1
        return Reading(
            xyxy=[[10, 10, 40, 40], [50, 10, 80, 40], [90, 10, 120, 40]],
            confidence=[0.9, 0.9, 0.8],
            face=[1, 5, 0],
            face_confidence=[0.95, 0.9, 0.7],
            status=["ok", "ok", "cocked"],
            image_size=(frame.shape[1], frame.shape[0]),
        )


def jpeg(width: int = 64, height: int = 48) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((height, width, 3), 128, np.uint8))
    assert ok
    return buf.tobytes()


@pytest.fixture
def app_and_client(tmp_path: Path) -> Iterator[tuple[Any, TestClient]]:
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3", max_upload_bytes=64 * 1024))
    with TestClient(app) as client:
        yield app, client


@pytest.fixture
def client(app_and_client: tuple[Any, TestClient]) -> TestClient:
    return app_and_client[1]


@pytest.fixture
def fake_reader(app_and_client: tuple[Any, TestClient]) -> FakeReader:
    app, _ = app_and_client
    reader = FakeReader()
    slot = ReaderSlot(lambda: reader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    return reader


# ----------------------------------------------------------------------------- health, rules
def test_health_reports_database_and_lazy_reader(client: TestClient, tmp_path: Path) -> None:
    data = client.get("/api/health").json()
    assert data["status"] == "ok"
    assert data["database"] == str(tmp_path / "games.sqlite3")
    assert data["reader_loaded"] is False  # nothing read a picture: no model was loaded
    assert data["games"] == 0


def test_rules_lists_presets_options_and_defaults(client: TestClient) -> None:
    data = client.get("/api/rules").json()
    assert [p["name"] for p in data["presets"]] == list(PRESETS)
    assert data["default_preset"] == "boxed"
    assert data["defaults"] == get_rules("boxed").to_dict()
    options = {o["name"]: o for o in data["options"]}
    three = options["three_ones"]
    assert (three["type"], three["default"], three["min"], three["max"], three["step"]) == ("int", 300, 0, 2000, 50)
    assert three["allowed"] == "a multiple of 50 in 0..2000"
    assert three["description"].startswith("Three 1s") and "Three 1s score 1,000" in three["source"]
    assert all(o["description"] and o["source"] for o in data["options"])
    assert options["piggyback"]["type"] == "bool"
    assert options["kind_scoring"]["type"] == "choice" and "doubling" in options["kind_scoring"]["choices"]
    assert "name" not in options


# ----------------------------------------------------------------------------- score and advise
@pytest.mark.parametrize(
    ("body", "rules"),
    [
        ({"dice": [1, 1, 1, 5, 3, 4]}, get_rules("boxed")),
        ({"dice": [2, 2, 3, 4, 6, 6]}, get_rules("boxed")),
        ({"dice": [1, 1, 1], "preset": "house"}, get_rules("house")),
        ({"dice": [1, 1, 1], "options": {"three_ones": 1000}}, get_rules("boxed").with_options({"three_ones": 1000})),
        ({"dice": [5, 5, 5, 5], "preset": "zilch", "options": {"kind_scoring": "adding"}},
         get_rules("zilch").with_options({"kind_scoring": "adding"})),
    ],
)  # fmt: skip
def test_score_matches_the_cli_scorer(client: TestClient, body: dict[str, Any], rules: Any) -> None:
    response = client.post("/api/score", json=body)
    assert response.status_code == 200
    assert response.json() == score_roll(tuple(body["dice"]), rules)


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({"dice": [1, 7]}, 422, "dice faces must be 1-6, got 7"),
        ({"dice": [1, 1, 1, 1, 1, 1, 1]}, 422, "at most 6 dice"),
        ({"dice": [1], "preset": "nope"}, 422, "unknown rule preset 'nope'"),
        ({"dice": [1], "options": {"three_onez": 5}}, 422, "unknown rule option 'three_onez'"),
        ({"dice": [1], "options": {"three_ones": 333}}, 422, "multiple of 50"),
        ({"dice": []}, 422, "body.dice"),
        ({"dice": ["1"]}, 422, "body.dice.0"),
        ({"dice": [1], "colour": "red"}, 422, "body.colour"),
        ({}, 422, "body.dice: Field required"),
    ],
)
def test_score_rejects_bad_input_with_a_message(client: TestClient, body: Any, status: int, detail: str) -> None:
    response = client.post("/api/score", json=body)
    assert response.status_code == status
    assert detail in response.json()["detail"]


def test_advise_answers_with_the_advisor(client: TestClient) -> None:
    advisor = pytest.importorskip("farklecam.scoring.advisor", reason="farklecam.scoring.advisor is not installed yet")
    body = {"dice": [1, 1, 1, 5, 3, 4], "turn_total": 350, "on_board": False}
    response = client.post("/api/advise", json=body)
    assert response.status_code == 200
    expected = advisor.advise((1, 1, 1, 5, 3, 4), get_rules("boxed"), turn_total=350, on_board=False).to_dict()
    assert response.json() == expected


def test_advise_rejects_bad_dice_before_advising(client: TestClient) -> None:
    response = client.post("/api/advise", json={"dice": [0, 1]})
    assert response.status_code == 422
    assert "faces must be 1-6" in response.json()["detail"]


# ----------------------------------------------------------------------------- reading pictures
def test_read_returns_reading_keeps_and_advice(client: TestClient, fake_reader: FakeReader) -> None:
    response = client.post("/api/read", files={"file": ("roll.jpg", jpeg(), "image/jpeg")})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["image_size"] == [64, 48]
    assert data["reading"]["faces"] == [1, 5]
    assert data["reading"]["rethrow"] == 1
    assert [d["status"] for d in data["reading"]["dice"]] == ["ok", "ok", "cocked"]
    assert data["score"] == score_roll((1, 5), get_rules("boxed"))
    assert fake_reader.calls == 1


def test_read_takes_rules_from_the_form(client: TestClient, fake_reader: FakeReader) -> None:
    form = {"preset": "house", "options": '{"single_five": 100}'}
    response = client.post("/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")}, data=form)
    assert response.status_code == 200, response.text
    assert response.json()["rules"] == "house"
    assert response.json()["score"]["options"][0]["points"] == 200
    bad = client.post("/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")}, data={"options": "{oops"})
    assert bad.status_code == 422 and "JSON object" in bad.json()["detail"]


def test_read_takes_calibrated_tray_corners_or_refuses_them_clearly(
    client: TestClient, fake_reader: FakeReader
) -> None:
    corners = [[10, 20], [600, 25], [610, 470], [5, 460]]
    ok = client.post("/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")}, data={"tray": json.dumps(corners)})
    assert ok.status_code == 200, ok.text
    assert len(fake_reader.trays) == 1 and fake_reader.trays[0].polygon.tolist() == corners
    for bad, detail in [
        ("[[1, 2], [3, 4]]", "four corners"),
        ("not json", "four corners"),
        ('[[1, 2], [3, 4], [5, "x"], [7, 8]]', "four corners"),
        ("[[0, 0], [0, 0], [0, 0], [0, 0]]", "bad tray corners"),
    ]:
        response = client.post("/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")}, data={"tray": bad})
        assert response.status_code == 422 and detail in response.json()["detail"], (bad, response.text)
    assert fake_reader.calls == 1


def test_read_learns_a_named_cameras_vertical_across_pictures(client: TestClient, fake_reader: FakeReader) -> None:
    def post(**data: str) -> int:
        return client.post("/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")}, data=data).status_code

    assert post(camera="table-1") == post(camera="table-1") == post(camera="table.2") == post() == 200
    first, again, other = fake_reader.memories
    assert first is again and other is not first  # one memory per named camera; none for an unnamed picture
    response = client.post(
        "/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")}, data={"camera": "../etc/passwd"}
    )
    assert response.status_code == 422 and "camera" in response.text
    assert fake_reader.calls == 4


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="no committed cocked test")
def test_read_with_the_real_models_flags_the_leaning_die_once_the_tray_is_given(client: TestClient) -> None:
    image = ROOT / "examples" / "tray_cocked.jpg"
    tray = json.loads((ROOT / "examples" / "labels" / "tray_cocked.json").read_text())["tray"]
    files = {"file": (image.name, image.read_bytes(), "image/jpeg")}
    response = client.post("/api/read", files=files, data={"tray": json.dumps(tray)})
    assert response.status_code == 200, response.text
    dice = response.json()["reading"]["dice"]
    assert sorted(d["status"] for d in dice) == ["cocked", "ok", "ok"]
    assert sorted(d["face"] for d in dice if d["status"] == "ok") == [1, 6]


def test_read_sniffs_content_not_the_name(client: TestClient, fake_reader: FakeReader) -> None:
    png = cv2.imencode(".png", np.zeros((20, 30, 3), np.uint8))[1].tobytes()
    assert client.post("/api/read", files={"file": ("photo.txt", png, "text/plain")}).status_code == 200
    response = client.post("/api/read", files={"file": ("photo.jpg", b"GIF89a not really", "image/jpeg")})
    assert response.status_code == 415
    assert "not a picture" in response.json()["detail"]


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (jpeg()[:200], "truncated JPEG"),
        (b"\xff\xd8\xff", "truncated JPEG"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 4, "truncated PNG"),
    ],
)
def test_read_refuses_broken_pictures(client: TestClient, fake_reader: FakeReader, data: bytes, detail: str) -> None:
    response = client.post("/api/read", files={"file": ("x.jpg", data, "image/jpeg")})
    assert response.status_code == 422
    assert detail in response.json()["detail"]
    assert fake_reader.calls == 0


def test_read_refuses_oversized_uploads(client: TestClient, fake_reader: FakeReader) -> None:
    big = jpeg() + b"\0" * (70 * 1024)
    response = client.post("/api/read", files={"file": ("big.jpg", big, "image/jpeg")})
    assert response.status_code == 413
    assert "too large" in response.json()["detail"]
    assert fake_reader.calls == 0


def test_read_refuses_oversized_chunked_uploads(client: TestClient, fake_reader: FakeReader) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b"x" * 1024

    response = client.post("/api/read", content=chunks(), headers={"Content-Type": "multipart/form-data; boundary=b"})
    assert response.status_code == 413


def test_read_without_a_file_is_a_validation_error(client: TestClient, fake_reader: FakeReader) -> None:
    response = client.post("/api/read", data={"preset": "boxed"})
    assert response.status_code == 422
    assert "file" in response.json()["detail"]


def test_read_without_models_is_503_with_a_message(tmp_path: Path) -> None:
    app = create_app(Settings(db_path=tmp_path / "g.sqlite3", model_dir=tmp_path / "no-models"))
    with TestClient(app) as client:
        response = client.post("/api/read", files={"file": ("r.jpg", jpeg(), "image/jpeg")})
        assert response.status_code == 503
        assert response.json()["error"] == "ModelLoadError"
        assert client.post("/api/score", json={"dice": [5]}).status_code == 200  # the rest keeps working


def test_bodies_over_the_json_limit_are_refused(client: TestClient) -> None:
    response = client.post("/api/score", content=b"[" * (2 * 1024 * 1024), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
