"""The table WebSocket: frames in, readings and advice out; bad frames answered, never a disconnect."""

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

from farklecam.scoring.presets import get_rules
from farklecam.service.app import create_app
from farklecam.service.deps import ReaderSlot, get_reader_slot
from farklecam.service.routes import ws as ws_route
from farklecam.service.settings import Settings
from farklecam.service.usecases.scoring import score_roll
from farklecam.vision.reading import Reading
from farklecam.vision.tray.outline import TrayOutline

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect


class BrightnessReader:
    """Reads one die per frame whose face is the frame's grey level // 40 (so each test frame says its faces).

    Like :meth:`farklecam.vision.reader.DiceReader.with_tray`, :meth:`with_tray` gives a reader of the
    same models with a calibrated tray; every read records the tray it used in ``trays``.
    """

    def __init__(self, trays: list[list[list[float]] | None] | None = None, tray: list[list[float]] | None = None):
        self.trays = [] if trays is None else trays
        self.tray = tray

    def with_tray(self, corners: list[list[float]]) -> BrightnessReader:
        return BrightnessReader(self.trays, TrayOutline.from_corners(corners).to_list())

    def read(self, frame: np.ndarray) -> Reading:
        self.trays.append(self.tray)
        face = int(np.clip(round(float(frame.mean()) / 40), 1, 6))
        return Reading(
            xyxy=[[5, 5, 20, 20], [25, 5, 40, 20]],
            confidence=[0.9, 0.9],
            face=[face, 5],
            face_confidence=[0.9, 0.9],
            status=["ok", "ok"],
            image_size=(frame.shape[1], frame.shape[0]),
        )


ROOT = Path(__file__).resolve().parents[2]


def frame(face: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((48, 64, 3), face * 40, np.uint8))
    assert ok
    return buf.tobytes()


@pytest.fixture(autouse=True)
def frame_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames arrive 1/8 s apart (the settle rule counts seconds; a test streams as fast as it can)."""
    ticks = iter(range(10**9))
    monkeypatch.setattr(ws_route, "clock", lambda: next(ticks) / 8)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3", max_frame_bytes=32 * 1024))
    slot = ReaderSlot(BrightnessReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as c:
        yield c


def stream(ws: Any, data: bytes, n: int) -> list[dict[str, Any]]:
    answers = []
    for _ in range(n):
        ws.send_bytes(data)
        answers.append(ws.receive_json())
    return answers


def test_frames_without_a_game_settle_and_are_scored_and_advised(client: TestClient) -> None:
    with client.websocket_connect("/ws/table/-") as ws:
        answers = stream(ws, frame(1), 7)
        assert [a["seq"] for a in answers] == list(range(1, 8))
        assert answers[0]["reading"] is None and answers[0]["settle"]["phase"] == "moving"  # first frame: no history
        assert [a["settle"]["phase"] for a in answers[1:]] == ["settling"] * 4 + ["settled", "latched"]
        last = answers[-1]
        assert last["type"] == "frame" and last["image_size"] == [64, 48]
        assert last["reading"]["faces"] == [1, 5] and last["throw"]["faces"] == [1, 5]
        assert last["score"] == score_roll((1, 5), get_rules("boxed"))
        assert last["advice"]["keep"] in ([1, 5], [1])
        assert last["game"] is None and last["ms"] >= 0
        moved = stream(ws, frame(3), 3)
        assert moved[0]["settle"]["phase"] == "moving" and moved[0]["reading"] is None
        assert moved[-1]["reading"]["faces"] == [3, 5] and moved[-1]["settle"]["phase"] == "settling"


def test_bad_frames_get_an_error_and_the_stream_goes_on(client: TestClient) -> None:
    with client.websocket_connect("/ws/table/-") as ws:
        for bad, detail in (
            (b"not a picture", "JPEG or PNG"),
            (frame(2)[:100], "truncated JPEG"),
            (b"\xff\xd8\xff" + b"\0" * (40 * 1024), "too large"),
            (b"", "JPEG or PNG"),
        ):
            ws.send_bytes(bad)
            answer = ws.receive_json()
            assert answer["type"] == "error", answer
            assert detail in answer["detail"]
        ws.send_text("hello")
        assert ws.receive_json()["type"] == "error"
        ws.send_text('{"type": "dance"}')
        assert "unknown message type" in ws.receive_json()["detail"]
        ws.send_text('{"type": "ping"}')
        assert ws.receive_json() == {"type": "pong"}
        assert stream(ws, frame(4), 2)[-1]["reading"]["faces"] == [4, 5]


def test_frames_in_a_game_carry_its_state_and_rules(client: TestClient) -> None:
    game = client.post("/api/games", json={"players": ["Ann", "Bob"], "first_player": "Ann", "preset": "house"}).json()
    with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
        answer = stream(ws, frame(1), 3)[-1]
        assert answer["rules"] == "house"
        assert answer["game"]["current"] == "Ann" and answer["game"]["phase"] == "awaiting_roll"
        client.post(f"/api/games/{game['id']}/actions", json={"text": "roll 1,2,3,4,6,6"})
        answer = stream(ws, frame(1), 1)[-1]
        assert answer["game"]["phase"] == "awaiting_keep"  # REST changes show on the next frame
        assert answer["score"]["roll"] == [1, 2, 3, 4, 6, 6]  # the roll waiting for a keep, not the dice in view
        assert answer["advice"]["keep"] == [1]


def test_a_throw_of_the_wrong_number_of_dice_is_not_applied(client: TestClient) -> None:
    body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
    game = client.post("/api/games", json=body).json()
    with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
        client.post(f"/api/games/{game['id']}/actions", json={"text": "roll 1,2,3,4,6"})
        client.post(f"/api/games/{game['id']}/actions", json={"text": "keep 1"})
        client.post(f"/api/games/{game['id']}/actions", json={"text": "roll 5,2,3,4"})
        client.post(f"/api/games/{game['id']}/actions", json={"text": "keep 5"})  # 3 dice left to throw
        ws.send_text('{"type": "roll_again"}')
        assert "throw 3 dice" in ws.receive_json()["message"]
        answers = stream(ws, frame(1), 7)  # the camera sees two dice: 1 and 5
        assert "saw 2 dice but 3 must be thrown" in answers[-1]["message"]
        settle = answers[-1]["settle"]
        assert (settle["phase"], settle["dice_seen"], settle["dice_expected"]) == ("wrong_count", 2, [3])
        assert answers[-1]["game"]["phase"] == "can_bank_or_roll"
    events = client.get(f"/api/games/{game['id']}/events").json()
    assert events["count"] == 4  # nothing was applied from the camera


def test_camera_roll_is_committed_like_a_rest_action(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    app = create_app(Settings(db_path=db))
    slot = ReaderSlot(BrightnessReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
        game = client.post("/api/games", json=body).json()
        for text in ("roll 1,2,3,4,6", "keep 1", "roll 5,2,3,4", "keep 5", "roll 1,2,3", "keep 1"):
            assert client.post(f"/api/games/{game['id']}/actions", json={"text": text}).status_code == 200
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
            lying = stream(ws, frame(4), 7)  # the dice of the last throw, at rest since before: never scored
            assert lying[-1]["game"]["phase"] == "can_bank_or_roll" and "lay in the tray" in lying[-1]["message"]
            answers = stream(ws, frame(1), 7)  # two dice thrown, the camera sees 1 and 5
        assert answers[-1]["game"]["phase"] == "awaiting_keep"
        assert answers[-1]["game"]["roll"] == [1, 5]
        assert "Ann threw 1 5" in answers[-1]["message"]
    with TestClient(create_app(Settings(db_path=db))) as client:  # a new app replays it from the file
        events = client.get(f"/api/games/{game['id']}/events").json()
        assert events["data"][-1]["text"] == "roll 1,5"


def test_unknown_game_is_refused_with_a_message(client: TestClient) -> None:
    with client.websocket_connect("/ws/table/0123456789ab") as ws:
        answer = ws.receive_json()
        assert answer["type"] == "error" and answer["fatal"] is True
        assert "no game with id" in answer["detail"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4404


def test_missing_models_are_reported_per_frame(tmp_path: Path) -> None:
    app = create_app(Settings(db_path=tmp_path / "g.sqlite3", model_dir=tmp_path / "none"))
    with TestClient(app) as client, client.websocket_connect("/ws/table/-") as ws:
        ws.send_bytes(frame(1))
        assert ws.receive_json()["settle"]["phase"] == "moving"  # the first frame is not read
        ws.send_bytes(frame(1))
        answer = ws.receive_json()
        assert answer["type"] == "error" and answer["error"] == "ModelLoadError"
        ws.send_text('{"type": "ping"}')
        assert ws.receive_json() == {"type": "pong"}


def test_the_page_calibrates_the_tray_and_every_read_uses_it(tmp_path: Path) -> None:
    reader = BrightnessReader()
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    slot = ReaderSlot(lambda: reader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    corners = [[10.0, 20.0], [60.0, 22.0], [62.0, 45.0], [5.0, 44.0]]
    with TestClient(app) as client:
        with client.websocket_connect("/ws/table/-") as ws:
            ws.send_text(json.dumps({"type": "tray", "corners": corners}))
            answer = ws.receive_json()
            assert answer["type"] == "tray" and answer["corners"] == corners and "set" in answer["message"]
            last = stream(ws, frame(2), 3)[-1]
            assert last["tray"] == corners and last["vertical"] == "tray"
            assert reader.trays and reader.trays[-1] == corners
            for bad, detail in (
                ([[1, 2], [3, 4]], "four corners"),
                ([[0, 0], [0, 0], [0, 0], [0, 0]], "bad tray corners"),
                ("top left", "four corners"),
                ([[1, 2], [3, 4], [5, float("inf")], [7, 8]], "four corners"),
            ):
                ws.send_text(json.dumps({"type": "tray", "corners": bad}))
                answer = ws.receive_json()
                assert answer["type"] == "error" and detail in answer["detail"], (bad, answer)
            reads = len(reader.trays)
            assert stream(ws, frame(2), 3)[-1]["tray"] == corners  # a refused calibration keeps the last good one
            assert len(reader.trays) > reads and reader.trays[-1] == corners
            ws.send_text('{"type": "tray", "corners": null}')
            assert ws.receive_json()["corners"] is None
            last = stream(ws, frame(3), 7)[-1]
            assert last["tray"] is None and last["vertical"] == "searching" and reader.trays[-1] is None

        game = client.post("/api/games", json={"players": ["Ann", "Bob"], "first_player": "Ann"}).json()
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
            ws.send_text(json.dumps({"type": "tray", "corners": corners}))
            ws.receive_json()
            stream(ws, frame(4), 7)
            assert reader.trays[-1] == corners
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:  # the page reloaded, not calibrated yet
            stream(ws, frame(5), 7)
            assert reader.trays[-1] is None  # the game's table reads with the newest page's tray


class MemoryRecordingReader(BrightnessReader):
    """Records the camera memory each read was given (as :meth:`DiceReader.with_vertical_memory` takes one)."""

    def __init__(self, memories: list[object]) -> None:
        super().__init__()
        self.memories = memories
        self.memory: object | None = None

    def with_vertical_memory(self, memory: object) -> MemoryRecordingReader:
        other = MemoryRecordingReader(self.memories)
        other.memory = memory
        return other

    def read(self, frame: np.ndarray) -> Reading:
        self.memories.append(self.memory)
        return super().read(frame)


def test_each_table_stream_learns_its_own_cameras_vertical(tmp_path: Path) -> None:
    memories: list[object] = []
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    slot = ReaderSlot(lambda: MemoryRecordingReader(memories))
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        with client.websocket_connect("/ws/table/-") as ws:
            stream(ws, frame(2), 7)
        first = list(memories)
        with client.websocket_connect("/ws/table/-") as ws:
            stream(ws, frame(2), 7)
        second = memories[len(first) :]
    assert len(first) >= 2 and len(second) >= 2
    assert all(m is first[0] and m is not None for m in first)  # one memory for all of a stream's frames
    assert all(m is second[0] for m in second) and second[0] is not first[0]  # a new stream, a new camera


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="no committed cocked test")
def test_a_stream_learns_its_cameras_vertical_from_the_dice_with_the_real_models(tmp_path: Path) -> None:
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))  # the real reader, from the committed models
    picture = (ROOT / "examples" / "tray_cocked.jpg").read_bytes()
    with TestClient(app) as client, client.websocket_connect("/ws/table/-") as ws:
        answers = []
        for _ in range(60):
            ws.send_bytes(picture)
            answers.append(ws.receive_json())
            if answers[-1].get("vertical") == "learned":
                break
        assert answers[0]["vertical"] == "searching" and answers[-1]["vertical"] == "learned", answers[-1]
        assert sorted(d["status"] for d in answers[-1]["reading"]["dice"]) == ["cocked", "ok", "ok"]


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="no committed cocked test")
def test_each_tables_page_says_whether_its_camera_looks_straight_down(tmp_path: Path) -> None:
    """One server, two tables: the page that says so reads straight down (and hears when its dice disagree)."""
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))  # no --straight-down: every table starts off
    overhead = (ROOT / "examples" / "tray_ok.jpg").read_bytes()  # 2.7 degrees off straight down
    webcam = (ROOT / "examples" / "tray_webcam.jpg").read_bytes()  # 30-35 degrees off
    with TestClient(app) as client, client.websocket_connect("/ws/table/-") as ws:
        assert stream(ws, overhead, 1)[0]["straight_down"] is False
        ws.send_text(json.dumps({"type": "straight_down", "on": True}))
        answer = ws.receive_json()
        assert answer == {"type": "straight_down", "on": True, "message": answer["message"]} and answer["message"]
        last = stream(ws, overhead, 4)[-1]
        assert last["straight_down"] is True and last["vertical"] == "straight_down"
        assert {d["status"] for d in last["reading"]["dice"]} == {"ok"}
        assert stream(ws, webcam, 4)[-1]["vertical"] == "tilted"  # its dice overrule the page
        with client.websocket_connect("/ws/table/-") as other:  # another table: the server's default
            assert stream(other, overhead, 1)[0]["straight_down"] is False
        for bad in ("yes", None, 1):
            ws.send_text(json.dumps({"type": "straight_down", "on": bad}))
            assert ws.receive_json()["type"] == "error"
        ws.send_text(json.dumps({"type": "straight_down", "on": False}))
        assert ws.receive_json()["on"] is False
        last = stream(ws, overhead, 2)[-1]
        assert last["straight_down"] is False and last["vertical"] in ("searching", "learned")


def test_a_tables_vertical_says_when_the_camera_seems_to_have_moved() -> None:
    """What the page's tray pill shows: searching, learned, checking (bumped, not yet confirmed), tray."""
    from farklecam.service.deps import LazyReader
    from farklecam.vision.pose.upright import UprightView

    table = LazyReader(ReaderSlot(lambda: None))  # type: ignore[arg-type, return-value]
    assert table.vertical == "searching"
    table.memory = type(table.memory)(needed=1)
    table.memory.learn(UprightView(nadir=np.array([320.0, 2000.0]), focal=576.0, principal=np.array([320.0, 240.0])))
    assert table.vertical == "learned"
    frame = cv2.imread(str(Path(__file__).resolve().parents[2] / "examples" / "tray_cocked.jpg"))
    table.memory.observe(frame)
    table.memory.observe(np.roll(frame, 40, axis=1))
    assert table.vertical == "checking"
    table.tray = [[0, 0], [600, 0], [600, 400], [0, 400]]
    assert table.vertical == "tray"


def test_a_table_whose_marked_tray_was_set_aside_says_moved() -> None:
    """The page's pill: a DiceReader that read a frame without the marked tray (the camera moved) says so."""
    from farklecam.service.deps import LazyReader
    from farklecam.vision.reading import Reading

    class SetAside:
        """Reads like a DiceReader that found the camera moved since the tray was marked, when told to."""

        moved = False

        def with_tray(self, tray: object) -> SetAside:
            return self

        def read(self, frame: np.ndarray) -> Reading:
            empty = np.zeros((0,))
            return Reading(np.zeros((0, 4)), empty, empty, empty, empty, tray_set_aside=self.moved)

    reader = SetAside()
    table = LazyReader(ReaderSlot(lambda: reader))  # type: ignore[arg-type, return-value]
    frame = np.zeros((48, 64, 3), np.uint8)
    table.read(frame)
    assert table.vertical == "searching" and not table.tray_moved  # no tray marked: nothing to set aside
    table.tray = [[0, 0], [60, 0], [60, 40], [0, 40]]
    table.read(frame)
    assert table.vertical == "tray"
    reader.moved = True
    table.read(frame)
    assert table.vertical == "moved" and table.tray_moved
    reader.moved = False
    table.read(frame)
    assert table.vertical == "tray"


def test_uncertain_dice_are_listed_for_the_one_click_fix_as_json() -> None:
    reading = Reading(
        xyxy=[[5, 5, 20, 20], [25, 5, 40, 20]], confidence=[0.9, 0.9], face=[4, 5], face_confidence=[0.9, 0.4],
        status=["ok", "uncertain"], image_size=(64, 48),
        data={"faces_seen": np.array(["4:5", "5:2 3:1"]), "ambiguity": np.array(["", "unread"])},
    )  # fmt: skip
    listed = json.loads(json.dumps(ws_route._uncertain(reading)))
    assert listed == [
        {"index": 1, "box": [25.0, 5.0, 40.0, 20.0], "face": 5, "faces_seen": "5:2 3:1", "ambiguity": "unread"}
    ]


def test_a_die_is_corrected_over_the_socket_through_the_games_log_and_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    app = create_app(Settings(db_path=db))
    slot = ReaderSlot(BrightnessReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        with client.websocket_connect("/ws/table/-") as ws:  # no game: nothing to correct
            ws.send_text(json.dumps({"type": "correct", "index": 0, "fix": "face", "face": 5}))
            assert ws.receive_json() == {
                "type": "error", "detail": "a die is corrected in a game: start or open one", "command": "correct"
            }  # fmt: skip
        body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
        game = client.post("/api/games", json=body).json()
        actions = f"/api/games/{game['id']}/actions"
        for text in ("roll 1,2,3,4,6", "keep 1", "roll 5,2,3,4", "keep 5", "roll 1,2,3", "keep 1"):
            assert client.post(actions, json={"text": text}).status_code == 200
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
            stream(ws, frame(4), 7)  # dice lying since before: no throw, nothing to correct
            ws.send_text(json.dumps({"type": "correct", "index": 0, "fix": "face", "face": 5}))
            refused = ws.receive_json()
            assert refused["type"] == "error" and "no settled throw to correct" in refused["detail"]
            thrown = stream(ws, frame(1), 7)[-1]  # two dice thrown: the camera reads 1 and 5 (the 1 is a 5)
            assert thrown["game"]["roll"] == [1, 5] and thrown["corrected"] is False
            die = [d["face"] for d in thrown["reading"]["dice"]].index(1)
            ws.send_text(json.dumps({"type": "correct", "index": die, "fix": "face", "face": 5}))
            answer = ws.receive_json()
            assert answer == {"type": "message", "message": f"die #{die + 1} is a 5: Ann threw 5 5", "events": 8}
            after = stream(ws, frame(1), 1)[-1]  # the next frame shows the throw as corrected, scored again
            assert after["reading"]["faces"] == [5, 5] and after["corrected"] is True
            assert after["game"]["roll"] == [5, 5] and after["score"]["options"][0]["points"] == 100
            assert after["settle"]["label"] == "Settled, corrected by the players"
            for bad, detail in (
                ({"index": 7, "fix": "face", "face": 5}, "no die #8"),
                ({"index": die, "fix": "face", "face": 5}, "already reads 5"),
                ({"index": die, "fix": "flip"}, "correct a die as"),
                ({"index": "1", "fix": "cocked"}, "correct a die as"),
                ({"fix": "add", "face": 2, "at": [50, float("nan")]}, "correct a die as"),
                ({"fix": "add", "face": 2, "at": [10, 10]}, "lies there already"),
            ):
                ws.send_text(json.dumps({"type": "correct", **bad}))
                answer = ws.receive_json()
                assert answer["type"] == "error" and answer["command"] == "correct", (bad, answer)
                assert detail in answer["detail"], (bad, answer)
            ws.send_text(json.dumps({"type": "correct", "fix": "add", "face": 2, "at": [55, 40]}))
            assert "3 dice but 2 were thrown" in ws.receive_json()["message"]  # taken back: too many dice
            assert client.post(actions, json={"type": "undo"}).json()["state"]["roll"] == [5, 5]
            assert stream(ws, frame(1), 1)[-1]["reading"]["faces"] == [5, 5]  # the undo took the added die back
        texts = [e["text"] for e in client.get(f"/api/games/{game['id']}/events").json()["data"]]
        assert texts[6:] == ["roll 1,5", f"correct {die + 1} face 5 roll 5,5", "correct add 2", "undo"]
    with TestClient(create_app(Settings(db_path=db))) as client:  # a new server replays the log
        state = client.get(f"/api/games/{game['id']}").json()["state"]
        assert (state["phase"], state["roll"]) == ("awaiting_keep", [5, 5])
        kept = client.post(actions, json={"type": "keep", "faces": [5, 5]})
        assert kept.status_code == 200 and kept.json()["state"]["turn_total"] == 350  # 250 set aside before


def test_a_correction_is_an_action_of_the_rest_api_too(client: TestClient) -> None:
    game = client.post("/api/games", json={"players": ["Ann", "Bob"], "first_player": "Ann"}).json()
    actions = f"/api/games/{game['id']}/actions"
    assert client.post(actions, json={"text": "roll 2,2,3,4,6,6"}).json()["state"]["current"] == "Bob"  # farkled
    body = {"type": "correct", "die": 6, "fix": "face", "face": 5, "roll": [2, 2, 3, 4, 5, 6], "expected_events": 1}
    fixed = client.post(actions, json=body)
    assert fixed.status_code == 200 and fixed.json()["state"]["current"] == "Ann"
    assert fixed.json()["state"]["roll"] == [2, 2, 3, 4, 5, 6]
    text = client.post(actions, json={"text": "correct 1 face 1 roll 1,2,3,4,5,6"})
    assert text.status_code == 200 and text.json()["state"]["legal"]["keeps"][0]["points"] == 1500
    assert client.post(actions, json={"text": "keep 1,2,3,4,5,6"}).status_code == 200
    after_keep = client.post(actions, json={"text": "correct 1 face 5 roll 2,3,4,5,5,6"})
    assert after_keep.status_code == 409 and "undo the keep first" in after_keep.json()["detail"]
    for bad in (
        {"type": "correct", "die": 1, "fix": "cocked", "roll": [1, 2]},
        {"type": "correct", "fix": "face", "face": 5},
        {"type": "correct", "die": 1, "fix": "sideways"},
        {"text": "correct 1 face 9"},
        {"text": "correct 1 cocked", "die": 1},
    ):
        answer = client.post(actions, json=bad)
        assert answer.status_code == 422 and answer.json()["detail"], (bad, answer.text)
    events = client.get(f"/api/games/{game['id']}/events").json()["data"]
    assert [e["text"] for e in events] == [
        "roll 2,2,3,4,6,6",
        "correct 6 face 5 roll 2,2,3,4,5,6",
        "correct 1 face 1 roll 1,2,3,4,5,6",
        "keep 1,2,3,4,5,6",
    ]
    assert events[1]["action"] == {"type": "correct", "die": 6, "fix": "face", "face": 5, "roll": [2, 2, 3, 4, 5, 6]}


def test_a_camera_scored_throw_keeps_its_picture_and_the_api_serves_lists_and_deletes_it(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    app = create_app(Settings(db_path=db))
    slot = ReaderSlot(BrightnessReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    webcam = {face: cv2.imencode(".jpg", np.full((720, 1280, 3), face * 40, np.uint8))[1].tobytes() for face in (1, 4)}
    with TestClient(app) as client:
        body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
        game = client.post("/api/games", json=body).json()
        pictures = f"/api/games/{game['id']}/pictures"
        for text in ("roll 1,2,3,4,6", "keep 1", "roll 5,2,3,4", "keep 5", "roll 1,2,3", "keep 1"):  # typed by hand
            assert client.post(f"/api/games/{game['id']}/actions", json={"text": text}).status_code == 200
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
            stream(ws, webcam[4], 7)  # dice lying since before: no throw, no picture
            assert client.get(pictures).json() == {"game_id": game["id"], "data": [], "count": 0, "bytes": 0,
                                                   "deleted": []}  # fmt: skip
            thrown = stream(ws, webcam[1], 7)[-1]  # two dice thrown: the camera reads 1 and 5 (the 1 is a 5)
            assert thrown["game"]["roll"] == [1, 5] and thrown["events"] == 7
            ws.send_text(json.dumps({"type": "correct", "index": 0, "fix": "face", "face": 5}))
            assert ws.receive_json()["events"] == 8
        listing = client.get(pictures).json()
        assert listing["count"] == 1 and listing["bytes"] == listing["data"][0]["bytes"] > 0
        picture = listing["data"][0]
        assert (picture["seq"], picture["text"], picture["width"], picture["height"]) == (7, "roll 1,5", 640, 360)
        reading = picture["reading"]
        assert reading["faces"] == [1, 5] and [d["status"] for d in reading["dice"]] == ["ok", "ok"]
        assert reading["dice"][0]["box"] == [2.5, 2.5, 10.0, 10.0]  # in the picture's pixels: half the frame's
        assert (reading["image_size"], reading["frame_size"]) == ([640, 360], [1280, 720])
        assert picture["corrections"] == [{"seq": 8, "text": "correct 1 face 5 roll 5,5", "in_force": True}]
        plain = client.get(f"{pictures}/7")
        assert plain.status_code == 200 and plain.headers["content-type"] == "image/jpeg"
        assert len(plain.content) == picture["bytes"]
        assert cv2.imdecode(np.frombuffer(plain.content, np.uint8), cv2.IMREAD_COLOR).shape == (360, 640, 3)
        drawn = client.get(f"{pictures}/7", params={"overlay": "1"})
        assert drawn.status_code == 200 and drawn.headers["content-type"] == "image/jpeg"
        assert drawn.content != plain.content
        for path, status, detail in (
            (f"{pictures}/6", 404, "keeps no picture of event 6"),  # a keep typed by hand
            (f"{pictures}/1", 404, "keeps no picture of event 1"),  # a roll typed by hand
            (f"{pictures}/0", 422, "greater than or equal to 1"),
            (f"{pictures}/7?overlay=maybe", 422, "overlay"),
            ("/api/games/0123456789ab/pictures", 404, "no game with id"),
            ("/api/games/0123456789ab/pictures/7", 404, "no game with id"),
        ):
            answer = client.get(path)
            assert answer.status_code == status and detail in answer.json()["detail"], (path, answer.json())
    with TestClient(create_app(Settings(db_path=db))) as client:  # a restarted server serves it from the database
        assert client.get(f"{pictures}/7").content == plain.content
        assert client.delete("/api/games/0123456789ab/pictures").status_code == 404
        assert client.delete(pictures).json() == {"game_id": game["id"], "deleted": 1, "bytes": len(plain.content)}
        gone = client.get(f"{pictures}/7")
        assert gone.status_code == 404 and "was deleted on" in gone.json()["detail"]
        listing = client.get(pictures).json()
        assert listing["data"] == [] and [(p["seq"], p["text"]) for p in listing["deleted"]] == [(7, "roll 1,5")]
        assert client.get(f"/api/games/{game['id']}/events").json()["count"] == 8  # the log is untouched


class ProfiledReader(BrightnessReader):
    """A :class:`BrightnessReader` binding profiles to the real face classifier; each read records its profile."""

    def __init__(self, classifier: Any, used: list[object], profile: Any = None) -> None:
        super().__init__()
        self.classifier, self.used, self.profile = classifier, used, profile

    def bind_profile(self, profile: Any) -> Any:
        from farklecam.vision.profiles.adapter import ProfileAdapter

        return ProfileAdapter(profile, self.classifier)

    def with_profile(self, profile: Any) -> ProfiledReader:
        return ProfiledReader(self.classifier, self.used, profile)

    def read(self, frame: np.ndarray) -> Reading:
        self.used.append(self.profile)
        return super().read(frame)


def test_a_tables_page_chooses_the_profile_it_reads_with_and_its_corrections_teach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore
    from farklecam.vision.reader import DiceReader

    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    store = ProfileStore()
    store.open_or_create("kitchen")
    store.open_or_create("garden")
    used: list[object] = []
    classifier = DiceReader().classifier
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    slot = ReaderSlot(lambda: ProfiledReader(classifier, used))
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        assert client.get("/api/profiles").json() == {
            "profiles": [{"name": "garden", "corrections": 0}, {"name": "kitchen", "corrections": 0}],
            "default": None,
        }
        body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
        game = client.post("/api/games", json=body).json()
        for text in ("roll 1,2,3,4,6", "keep 1", "roll 5,2,3,4", "keep 5", "roll 1,2,3", "keep 1"):
            assert client.post(f"/api/games/{game['id']}/actions", json={"text": text}).status_code == 200
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
            refusals = (("pantry", "no profile 'pantry'"), ("../kitchen", "cannot name a profile"), (3, "name"))
            for bad, detail in refusals:
                ws.send_text(json.dumps({"type": "profile", "name": bad}))
                answer = ws.receive_json()
                assert answer["type"] == "error" and answer["command"] == "profile", (bad, answer)
                assert detail in answer["detail"], (bad, answer)
            stream(ws, frame(4), 7)
            assert used and used[-1] is None  # refused names changed nothing: still the server's (none)
            ws.send_text(json.dumps({"type": "profile", "name": "kitchen"}))
            chosen = ws.receive_json()
            assert (chosen["type"], chosen["name"]) == ("profile", "kitchen") and "kitchen" in chosen["message"]
            thrown = stream(ws, frame(1), 7)[-1]  # two dice thrown and settled: the 1 is a 5
            assert thrown["game"]["roll"] == [1, 5]
            assert used[-1].profile.name == "kitchen"  # type: ignore[attr-defined]
            die = [d["face"] for d in thrown["reading"]["dice"]].index(1)
            ws.send_text(json.dumps({"type": "correct", "index": die, "fix": "face", "face": 5}))
            assert ws.receive_json()["type"] == "message"
            assert [(c.truth, c.source) for c in store.open("kitchen").corrections] == [("5", f"game {game['id']}")]
            assert len(store.open("garden")) == 0
            ws.send_text(json.dumps({"type": "profile", "name": None}))
            assert ws.receive_json()["name"] is None
            stream(ws, frame(4), 7)  # the next throw is read without it
            assert used[-1] is None
        assert client.get("/api/profiles").json()["profiles"][1] == {"name": "kitchen", "corrections": 1}


def test_tables_whose_cameras_stream_are_kept_past_the_limit_of_idle_tables(tmp_path: Path) -> None:
    # A server that takes over another's tables streams more tables than it keeps idle: dropping a
    # streaming table would restart its settle state on every frame, and no throw would ever settle.
    app = create_app(Settings(db_path=tmp_path / "games.sqlite3"))
    slot = ReaderSlot(BrightnessReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        app.state.tables.max_tables = 1
        ids = []
        for _ in range(2):
            body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
            game = client.post("/api/games", json=body).json()
            for text in ("roll 1,2,3,4,6", "keep 1", "roll 5,2,3,4", "keep 5", "roll 1,2,3", "keep 1"):
                assert client.post(f"/api/games/{game['id']}/actions", json={"text": text}).status_code == 200
            ids.append(game["id"])
        with (
            client.websocket_connect(f"/ws/table/{ids[0]}") as one,
            client.websocket_connect(f"/ws/table/{ids[1]}") as two,
        ):
            for face in [4] * 7 + [1] * 7:  # the dice lying from before, then a throw of 1 and 5 on both tables
                answers = [stream(ws, frame(face), 1)[-1] for ws in (one, two)]
            assert [a["game"]["roll"] for a in answers] == [[1, 5], [1, 5]]
        assert app.state.tables.existing(ids[0]) is None or app.state.tables.existing(ids[1]) is None  # idle: one kept


class LiftingReader(BrightnessReader):
    """As :class:`BrightnessReader`, but a frame of grey level 6 shows only the second die: the first lifted out."""

    def read(self, frame: np.ndarray) -> Reading:
        reading = super().read(frame)
        return reading[np.array([1])] if reading.face[0] == 6 else reading


def test_a_table_reopened_elsewhere_knows_its_last_throw_and_a_die_left_lying_is_not_a_new_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "games.sqlite3"
    body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"dice": 5}}
    app = create_app(Settings(db_path=db))
    slot = ReaderSlot(LiftingReader)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(app) as client:
        game = client.post("/api/games", json=body).json()
        actions = f"/api/games/{game['id']}/actions"
        for text in ("roll 1,2,3,4,6", "keep 1", "roll 5,2,3,4", "keep 5", "roll 1,2,3", "keep 1"):
            assert client.post(actions, json={"text": text}).status_code == 200
        with client.websocket_connect(f"/ws/table/{game['id']}") as ws:
            stream(ws, frame(4), 7)
            assert stream(ws, frame(1), 7)[-1]["game"]["roll"] == [1, 5]  # the camera's throw, with its picture
        assert client.post(actions, json={"text": "keep 1"}).status_code == 200  # the 5 is thrown again
    other = create_app(Settings(db_path=db))  # another server on the same games (or this one restarted)
    other.dependency_overrides[get_reader_slot] = lambda: slot
    with TestClient(other) as client, client.websocket_connect(f"/ws/table/{game['id']}") as ws:
        stream(ws, frame(1), 2)
        answers = stream(ws, frame(6), 8)  # a hand lifts the 1 out; the 5 lies where it was thrown
        assert answers[-1]["game"]["phase"] == "can_bank_or_roll" and answers[-1]["game"]["dice_to_throw"] == 1
        assert client.get(f"/api/games/{game['id']}/events").json()["count"] == 8  # no throw of the lying 5
