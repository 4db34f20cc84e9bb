"""The table's page: served offline by the app, and driven in a real headless Chromium with a fake webcam.

The browser tests use Debian's ``chromium`` (never a downloaded browser) through
playwright-python, against a real uvicorn server on a free loopback port. The
fake webcam plays a y4m file made from the committed generated example
``examples/tray_ok.jpg``; the server reads it with the real models when they
are installed, else with a reader that returns the example's labelled dice for
frames that look like the example (so the test still checks every step from
camera to page: capture, JPEG, WebSocket, decode, settle, score, advice, game).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring.pass_advice import advise_pass
from farklecam.scoring.presets import get_rules
from farklecam.service.app import STATIC_DIR, create_app
from farklecam.service.deps import ReaderSlot, get_reader_slot
from farklecam.service.picture_store import ThrowPictures
from farklecam.service.settings import Settings
from farklecam.service.storage import GameStore
from farklecam.service.throw_picture import make_picture
from farklecam.vision.reading import Reading

with warnings.catch_warnings():  # starlette prefers httpx2 but works with httpx (a dev dependency)
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "tray_ok.jpg"
EXAMPLE_LABELS = REPO / "examples" / "labels" / "tray_ok.json"
MODELS = REPO / "models"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


# ----------------------------------------------------------------------------- served offline
def test_page_and_assets_are_served(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(db_path=tmp_path / "g.sqlite3"))) as client:
        page = client.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        for asset in re.findall(r'(?:src|href)="([^"]+)"', page.text):
            response = client.get(f"/{asset}")
            assert response.status_code == 200, asset
        assert client.get("/app.js").headers["content-type"].startswith(("text/javascript", "application/javascript"))
        assert client.get("/openapi.json").json()["info"]["title"] == "farklecam"


def test_the_favicon_is_a_small_icon_served_with_the_page(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(db_path=tmp_path / "g.sqlite3"))) as client:
        icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/")
    assert icon.content[:4] == b"\x00\x00\x01\x00" and len(icon.content) < 4096  # an ICO file, one small image


def test_page_loads_nothing_from_outside() -> None:
    for path in STATIC_DIR.iterdir():
        if path.suffix not in {".html", ".js", ".css"}:
            continue  # the favicon: an image, no links
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://|//cdn|@import|fonts\.googleapis", text), path.name


def test_page_names_every_element_its_script_uses() -> None:
    html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    script = (STATIC_DIR / "app.js").read_text(encoding="utf-8")
    ids = set(re.findall(r'id="([\w-]+)"', html))
    used = set(re.findall(r'\$\("([\w-]+)"\)', script))
    assert used <= ids, used - ids


# ----------------------------------------------------------------------------- browser
class ExampleReader:
    """The example's labelled dice for frames that look like the example, no dice for anything else."""

    def __init__(self) -> None:
        self.reference = self._small(cv2.imread(str(EXAMPLE)))
        labels = json.loads(EXAMPLE_LABELS.read_text(encoding="utf-8"))
        self.dice = labels["dice"]
        self.size = (640, 480)

    @staticmethod
    def _small(image: np.ndarray) -> np.ndarray:
        return cv2.cvtColor(cv2.resize(image, (64, 48), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)

    def read(self, frame: np.ndarray) -> Reading:
        height, width = frame.shape[:2]
        if float(np.abs(self._small(frame).astype(float) - self.reference).mean()) > 20:
            return Reading.empty((width, height))
        sx, sy = width / self.size[0], height / self.size[1]
        return Reading(
            xyxy=[[d["box"][0] * sx, d["box"][1] * sy, d["box"][2] * sx, d["box"][3] * sy] for d in self.dice],
            confidence=[0.95] * len(self.dice),
            face=[d["face"] for d in self.dice],
            face_confidence=[0.95] * len(self.dice),
            status=[d["status"] for d in self.dice],
            image_size=(width, height),
        )


def models_installed() -> bool:
    return (MODELS / "die_detector.onnx").is_file() and (MODELS / "face_classifier.onnx").is_file()


#: A thrown clip's length at 10 frames a second: each loop brings the dice in again (a new throw) and then
#: holds them still for 3.5 s, time for a player's clicks on the settled throw.
THROWN_FRAMES = 40


def write_y4m(path: Path, image: np.ndarray, frames: int = 10, fps: int = 10, thrown: bool = False) -> Path:
    """A y4m (I420) clip of one still picture: what Chromium's fake webcam plays in a loop.

    ``thrown`` opens the clip with half a second of an empty, dark tray, so that each loop shows
    dice arriving (a throw needs the dice to move) and then lying still: long enough that the page,
    which sends the newest frame once the last is answered, sends one of them.
    """
    height, width = image.shape[:2]
    yuv = cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420).tobytes()
    empty = cv2.cvtColor(np.full_like(image, 30), cv2.COLOR_BGR2YUV_I420).tobytes()
    with path.open("wb") as f:
        f.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for k in range(frames):
            f.write(b"FRAME\n" + (empty if thrown and k < max(2, fps // 2) else yuv))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ThreadedServer:
    """A real uvicorn server for an app object, on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def browser_kit() -> Any:
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright-python is not installed")
    return sync_api


def launch(sync_api: Any, playwright: Any, y4m: Path | None) -> Any:
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-dev-shm-usage"]  # fmt: skip
    if y4m is not None:
        args += ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                 f"--use-file-for-fake-video-capture={y4m}"]  # fmt: skip
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)


def serve_with(reader_factory: Any, db: Path, **settings: Any) -> ThreadedServer:
    app = create_app(Settings(db_path=db, **settings))
    slot = ReaderSlot(reader_factory)
    app.dependency_overrides[get_reader_slot] = lambda: slot
    return ThreadedServer(app)


def start_and_keep_the_1(page: Any) -> str:
    """Start Ann and Bob's game, record Ann's throw 1,2,3,4,6,6 by hand and keep the advised 1; the game's id."""
    page.fill("#players", "Ann, Bob")
    page.click("#start")
    page.wait_for_selector("#play:not([hidden])")
    game_id = str(page.inner_text("#game-id"))
    page.fill("#manual-action", "roll 1,2,3,4,6,6")
    page.press("#manual-action", "Enter")
    page.wait_for_selector('#turn[data-phase="awaiting_keep"]')
    page.click("#accept")
    return game_id


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_game_started_with_dice_lying_in_the_tray_records_no_throw(
    browser_kit: Any, served: ThreadedServer, tmp_path: Path
) -> None:
    y4m = write_y4m(tmp_path / "still.y4m", cv2.imread(str(EXAMPLE)))  # the dice lie still: nobody threw
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            body = {
                "players": ["Ann", "Bob"],
                "first_player": "Ann",
                "options": {"dice": 5},
            }  # as many dice as lie in view
            game_id = httpx.post(f"{served.url}/api/games", json=body).json()["id"]
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{served.url}/#game={game_id}")
            page.wait_for_selector("#play:not([hidden])")
            page.wait_for_selector('#faces[data-faces="3,4,5,5,5"]', timeout=90_000)  # seen and shown
            page.wait_for_function(
                "document.querySelector('#game-message').textContent.includes('lay in the tray before')",
                timeout=60_000,
            )
            page.wait_for_timeout(2000)  # more settled frames: still nothing scored
            assert page.get_attribute("#turn", "data-phase") == "awaiting_roll"
        finally:
            browser.close()
    assert httpx.get(f"{served.url}/api/games/{game_id}/events").json()["data"] == []


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ThreadedServer]:
    with serve_with(ExampleReader, tmp_path / "games.sqlite3") as server:
        yield server


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_reads_the_webcam_and_keeps_score(browser_kit: Any, served: ThreadedServer, tmp_path: Path) -> None:
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)))
    faces = sorted(d["face"] for d in json.loads(EXAMPLE_LABELS.read_text())["dice"] if d["status"] == "ok")
    assert faces == [3, 4, 5, 5, 5]
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(served.url)
            # The camera frames reach the server and the page shows the dice read, their keeps and advice.
            page.wait_for_selector('#faces[data-faces="3,4,5,5,5"]', timeout=90_000)
            assert page.inner_text("#camera-status") == "camera on"
            first = page.inner_text("#options tbody tr:first-child")
            assert first.split("\t")[:2] == ["5 5 5", "500"]
            page.wait_for_selector('#advice[data-keep="5,5,5"]', timeout=30_000)
            page.wait_for_selector('#throw-status[data-state="latched"], #throw-status[data-state="settled"]')
            # Keep score: Ann throws 1,2,3,4,6,6 by hand, keeps the 1, throws the 5 dice in the camera's view.
            game_id = start_and_keep_the_1(page)
            page.wait_for_selector('#turn[data-phase="can_bank_or_roll"], #turn[data-phase="awaiting_keep"]')
            # The five dice lay still in the camera's view all along: shown, never scored by themselves
            # (a throw needs the dice to move), so the player records them with the button.
            page.wait_for_function(
                "document.querySelector('#game-message').textContent.includes('lay in the tray before')",
                timeout=60_000,
            )
            page.click("#record-roll")
            page.wait_for_function(
                "document.querySelector('#turn').dataset.phase === 'awaiting_keep'"
                " && document.querySelector('#turn').dataset.turnTotal === '100'"
            )
            assert httpx.get(f"{served.url}/api/games/{game_id}").json()["state"]["roll"] == faces
            page.wait_for_selector('#advice[data-keep="5,5,5"]')
            page.click("#accept")
            page.wait_for_selector('#turn[data-phase="can_bank_or_roll"]')
            page.click("#bank")
            page.wait_for_selector('#scoreboard tr[data-player="Ann"][data-score="600"]')
            assert page.inner_text('#scoreboard tr[data-player="Bob"] td:nth-child(3)') == "0"
            page.screenshot(path=str(tmp_path / "page.png"))
        finally:
            browser.close()
    events = httpx.get(f"{served.url}/api/games/{game_id}/events").json()
    assert [e["text"] for e in events["data"]] == [
        "roll 1,2,3,4,6,6", "keep 1", "roll 3,4,5,5,5", "keep 5,5,5", "bank",
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_page_explains_a_missing_camera_and_a_lost_server(browser_kit: Any, served: ThreadedServer) -> None:
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)  # no fake device: this browser has no camera
        try:
            page = browser.new_page()
            page.goto(served.url)
            page.wait_for_selector("#no-camera:not([hidden])", timeout=60_000)
            assert re.search(r"camera", page.inner_text("#no-camera"), re.I)
            assert page.inner_text("#camera-status") == "no camera"
            page.wait_for_selector('#stream-status[data-state="ok"]')
            served.stop()
            page.wait_for_selector("#banner:not([hidden])", timeout=60_000)
            assert "connection" in page.inner_text("#banner") or "reached" in page.inner_text("#banner")
            assert page.inner_text("#server-status") == "server unreachable"
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_shows_what_the_models_read(browser_kit: Any, tmp_path: Path) -> None:
    if not models_installed():
        pytest.skip("the ONNX models are not installed in models/")
    from farklecam.vision.reader import DiceReader

    reader = DiceReader()
    direct = reader.read(cv2.imread(str(EXAMPLE)))
    if not direct.faces:
        pytest.skip("the installed models read no die in the example (their accuracy is tested in tests/vision)")
    expected = ",".join(map(str, direct.faces))
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)))
    with serve_with(lambda: reader, tmp_path / "games.sqlite3") as server, browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page()
            page.goto(server.url)
            page.wait_for_selector(f'#faces[data-faces="{expected}"]', timeout=120_000)
            page.wait_for_selector('#throw-status[data-state="latched"], #throw-status[data-state="settled"]')
            assert page.inner_text("#faces") == " ".join(map(str, direct.faces))
        finally:
            browser.close()


def eventually(condition: Any, timeout: float = 30.0) -> None:
    """Wait until ``condition()`` holds (the server reads frames at its own pace)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


@contextlib.contextmanager
def example_page(browser_kit: Any, reader: Any, tmp_path: Path, faces: str = "3,4,5,5,5") -> Iterator[Any]:
    """The page on a server that reads through ``reader``, its camera the 640 x 480 example, once ``faces`` show."""
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)))  # frames are sent at that size
    with serve_with(lambda: reader, tmp_path / "games.sqlite3") as server, browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(server.url)
            page.wait_for_selector(f'#faces[data-faces="{faces}"]', timeout=90_000)
            yield page
        finally:
            browser.close()


class TrayRecordingReader(ExampleReader):
    """The example's dice; like :meth:`farklecam.vision.reader.DiceReader.with_tray`, a read with a tray records its
    corners."""

    def __init__(self, trays: list[list[list[float]] | None] | None = None, tray: list[list[float]] | None = None):
        super().__init__()
        self.trays = [] if trays is None else trays
        self.tray = tray

    def with_tray(self, corners: list[list[float]]) -> TrayRecordingReader:
        from farklecam.vision.tray.outline import TrayOutline

        return TrayRecordingReader(self.trays, TrayOutline.from_corners(corners).to_list())

    def read(self, frame: np.ndarray) -> Reading:
        self.trays.append(self.tray)
        return super().read(frame)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_marks_the_tray_corners_and_the_server_reads_with_them(browser_kit: Any, tmp_path: Path) -> None:
    reader = TrayRecordingReader()
    corners = [[100.0, 80.0], [540.0, 90.0], [560.0, 400.0], [90.0, 420.0]]
    with example_page(browser_kit, reader, tmp_path) as page:
        assert page.inner_text("#tray-status") == "tray: found per frame" and reader.trays[-1] is None
        page.click("#mark-tray")
        box = page.locator("#overlay").bounding_box()
        scale = min(box["width"] / 640, box["height"] / 480)
        left = box["x"] + (box["width"] - 640 * scale) / 2
        top = box["y"] + (box["height"] - 480 * scale) / 2
        for k, (x, y) in enumerate(corners):
            assert f"corner {k + 1} of 4" in page.inner_text("#tray-hint")
            page.mouse.click(left + x * scale, top + y * scale)
        page.wait_for_selector('#tray-status[data-state="ok"]', timeout=30_000)
        page.wait_for_function("document.querySelector('#tray-hint').textContent.includes('Tray corners set')")
        page.wait_for_function("document.querySelector('#throw-status').dataset.state !== 'none'")
        eventually(lambda: any(t is not None for t in reader.trays))  # the frame in flight may predate the corners
        used = next(t for t in reversed(reader.trays) if t is not None)
        assert np.abs(np.array(used) - np.array(corners)).max() <= 1.5, used  # the clicked frame pixels
        page.screenshot(path=str(tmp_path / "tray.png"))
        # The corners are kept in the browser: a reloaded page sends them again on its new connection.
        reader.trays.clear()
        page.reload()
        page.wait_for_selector('#tray-status[data-state="ok"]', timeout=90_000)
        assert not page.locator("#clear-tray").is_hidden()
        eventually(lambda: any(t is not None for t in reader.trays))
        page.click("#clear-tray")
        page.wait_for_selector('#tray-status[data-state="off"]', timeout=30_000)
        # A frame sent before the click may still be read with the corners: the reads after it have none.
        eventually(lambda: len(reader.trays) >= 2 and reader.trays[-1] is None and reader.trays[-2] is None)
        # A tray whose corners lie out of view: two clicks on each floor edge, and the page finds the corners.
        truth = np.array(json.loads(EXAMPLE_LABELS.read_text())["tray"])
        assert ((truth < 0) | (truth > [640, 480])).any(), "the example's tray should reach out of view"
        page.click("#mark-edges")
        for k in (0, 2, 1, 3):  # edges in any order
            a, b = truth[k], truth[(k + 1) % 4]
            ts = [
                t
                for t in np.linspace(0, 1, 201)
                if (a + t * (b - a) >= 0).all() and (a + t * (b - a) < [640, 480]).all()
            ]
            for t in np.quantile(ts, [0.2, 0.8]):  # two points on the part of the edge in view
                x, y = a + t * (b - a)
                page.mouse.click(left + x * scale, top + y * scale)
        page.wait_for_selector('#tray-status[data-state="ok"]', timeout=30_000)
        eventually(lambda: reader.trays[-1] is not None)
        found = np.array(TrayRecordingReader().with_tray(truth.tolist()).tray)
        assert np.abs(np.array(reader.trays[-1]) - found).max() <= 4, reader.trays[-1]


class DownRecordingReader(ExampleReader):
    """The example's dice; like :meth:`farklecam.vision.reader.DiceReader.with_straight_down`, records what each read
    was told."""

    def __init__(self, seen: list[bool] | None = None, on: bool = False) -> None:
        super().__init__()
        self.seen = [] if seen is None else seen
        self.on = on

    def with_straight_down(self, on: bool) -> DownRecordingReader:
        return DownRecordingReader(self.seen, on)

    def read(self, frame: np.ndarray) -> Reading:
        self.seen.append(self.on)
        return super().read(frame)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_says_its_camera_looks_straight_down_and_remembers_it(browser_kit: Any, tmp_path: Path) -> None:
    reader = DownRecordingReader()
    with example_page(browser_kit, reader, tmp_path) as page:
        assert not page.is_checked("#straight-down") and reader.seen[-1] is False  # the server's default
        page.check("#straight-down")
        page.wait_for_function("document.querySelector('#tray-hint').textContent.includes('straight down')")
        eventually(lambda: reader.seen[-1] is True)
        page.wait_for_function("document.querySelector('#tray-status').textContent.includes('straight down')")
        # Kept in the browser: a reloaded page says so again on its new connection.
        reader.seen.clear()
        page.reload()
        page.wait_for_selector("#straight-down:checked", timeout=90_000)
        eventually(lambda: bool(reader.seen) and reader.seen[-1] is True)
        page.uncheck("#straight-down")
        eventually(lambda: reader.seen[-1] is False)


class ProfileRecordingReader(ExampleReader):
    """The example's dice; like :meth:`farklecam.vision.reader.DiceReader.with_profile`, records each read's profile."""

    def __init__(self, seen: list[str | None] | None = None, profile: str | None = None) -> None:
        super().__init__()
        self.seen = [] if seen is None else seen
        self.profile = profile

    def bind_profile(self, profile: Any) -> str:
        return str(profile.name)

    def with_profile(self, profile: str | None) -> ProfileRecordingReader:
        return ProfileRecordingReader(self.seen, profile)

    def read(self, frame: np.ndarray) -> Reading:
        self.seen.append(self.profile)
        return super().read(frame)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_chooses_its_tables_profile_and_remembers_it(
    browser_kit: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore

    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    ProfileStore().open_or_create("kitchen")
    ProfileStore().open_or_create("den")
    reader = ProfileRecordingReader()
    with example_page(browser_kit, reader, tmp_path) as page:
        page.wait_for_selector("#profile option[value=kitchen]", state="attached")
        listed = page.eval_on_selector_all("#profile option", "os => os.map(o => [o.value, o.textContent])")
        assert listed == [["", "none"], ["den", "den (0 corrections)"], ["kitchen", "kitchen (0 corrections)"]]
        assert page.input_value("#profile") == "" and reader.seen[-1] is None  # the server's (none)
        page.select_option("#profile", "kitchen")
        page.wait_for_function("document.querySelector('#tray-hint').textContent.includes('Profile kitchen')")
        eventually(lambda: reader.seen[-1] == "kitchen")
        # Kept in the browser: a reloaded page chooses it again on its new connection.
        reader.seen.clear()
        page.reload()
        page.wait_for_function("document.querySelector('#profile').value === 'kitchen'", timeout=90_000)
        eventually(lambda: bool(reader.seen) and reader.seen[-1] == "kitchen")
        page.select_option("#profile", "")
        eventually(lambda: reader.seen[-1] is None)


# ----------------------------------------------------------------------------- a turn, at a phone's width and a desk's
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def advice_of(page: Any) -> dict[str, str]:
    """What the advice box says as data, and the faces the overlay rings as the advised keep."""
    shown: dict[str, str] = page.evaluate(
        "() => { const a = document.querySelector('#advice');"
        " return {keep: a.dataset.keep, action: a.dataset.action, phase: a.dataset.phase || '', text: a.textContent,"
        " highlight: document.querySelector('#overlay').dataset.highlight || ''}; }"
    )
    return shown


def wait_for_advice(page: Any, phase: str, **expected: str) -> dict[str, str]:
    """Wait until the advice box speaks for ``phase`` with the ``expected`` data, and the overlay agrees."""
    checks = [f"a.dataset.phase === {json.dumps(phase)}"]
    checks += [f"a.dataset.{k} === {json.dumps(v)}" for k, v in expected.items() if k != "highlight"]
    if "highlight" in expected:
        checks.append(f"document.querySelector('#overlay').dataset.highlight === {json.dumps(expected['highlight'])}")
    condition = " && ".join(checks)
    try:
        page.wait_for_function(f"(() => {{ const a = document.querySelector('#advice'); return {condition}; }})()")
    except Exception as exc:  # say what the page showed instead
        raise AssertionError(f"advice for {phase} {expected} never shown; the page shows {advice_of(page)}") from exc
    return advice_of(page)


def advised_action(url: str, game: dict[str, Any], roll: list[int], turn_total: int, keep: list[int]) -> str:
    """The server advisor's bank-or-roll after ``keep`` from ``roll``, for the game's rules and its player."""
    options = {k: v for k, v in game["rules"].items() if k != "name"}
    body = {"dice": roll, "turn_total": turn_total, "on_board": False, "options": options}
    advice = httpx.post(f"{url}/api/advise", json=body).json()
    chosen = [a for a in [advice, *advice["alternatives"]] if sorted(a["keep"]) == sorted(keep)]
    return str(chosen[0]["action"])


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("width", [390, 1280])
def test_page_plays_a_turn_and_the_advice_follows_every_action(
    browser_kit: Any, served: ThreadedServer, tmp_path: Path, width: int
) -> None:
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)))
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 900})
            page.goto(served.url)
            page.wait_for_selector('#faces[data-faces="3,4,5,5,5"]', timeout=90_000)
            # Without a game: the advice and the ringed keep are those of the dice in view.
            page.wait_for_function("document.querySelector('#overlay').dataset.highlight === '5,5,5'")
            assert page.get_attribute("#advice", "data-keep") == "5,5,5"
            assert page.evaluate(NO_SIDEWAYS_SCROLL)
            # The rules: house, with three 1s worth 2000 instead of 1000: the game is named customised.
            page.select_option("#preset", "house")
            page.click("#rule-options summary")
            three_ones = page.locator('#option-fields [name="three_ones"]')
            assert three_ones.input_value() == "1000"  # the preset's value
            three_ones.fill("9950")  # past the option's range: the server's reason is shown, no game starts
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_function("document.querySelector('#new-game-message').textContent.includes('three_ones')")
            assert "2000" in page.inner_text("#new-game-message") and page.is_hidden("#play")
            three_ones.fill("2000")
            page.wait_for_selector('#rules-changed[data-changed="1"]')
            assert page.evaluate(NO_SIDEWAYS_SCROLL), "the rule options push the page sideways"
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            game_id = page.inner_text("#game-id")
            assert page.get_attribute("#game-rules", "data-rules") == "house (customised)"
            assert "three ones 2000" in page.inner_text("#game-rules")
            listed = httpx.get(f"{served.url}/api/games").json()["data"]
            assert [g["rules"] for g in listed if g["id"] == game_id] == ["house (customised)"]
            # Ann's turn starts: nothing to keep, nothing ringed (the dice in view are no roll of this game).
            wait_for_advice(page, "awaiting_roll", action="throw", keep="", highlight="")
            # A refused typed action keeps its text, with the reason.
            page.fill("#manual-action", "keep 6")
            page.press("#manual-action", "Enter")
            page.wait_for_selector("#game-message.error")
            assert page.input_value("#manual-action") == "keep 6"
            # A typed throw: the advice is the game's (keep the 1); the dice in view are not that roll.
            page.fill("#manual-action", "roll 1,2,3,4,6,6")
            page.press("#manual-action", "Enter")
            wait_for_advice(page, "awaiting_keep", keep="1", highlight="")
            assert page.input_value("#manual-action") == ""
            page.click("#accept")
            # After the keep: bank-or-roll for the new total, and no keep advised or ringed any more.
            shown = wait_for_advice(page, "can_bank_or_roll", keep="", highlight="")
            game = httpx.get(f"{served.url}/api/games/{game_id}").json()
            assert shown["action"] == advised_action(served.url, game, [1, 2, 3, 4, 6, 6], 0, [1]) == "roll"
            # The camera's throw (recorded by itself if it settles now, else by the button).
            page.evaluate("() => { const b = document.querySelector('#record-roll'); if (!b.disabled) b.click(); }")
            shown = wait_for_advice(page, "awaiting_keep", keep="5,5,5", highlight="5,5,5")
            assert "keep 5 5 5" in shown["text"]
            page.click("#accept")
            # The stale advice of the last throw is gone: no keep, no ring, the advisor's bank-or-roll for 600.
            shown = wait_for_advice(page, "can_bank_or_roll", keep="", highlight="")
            assert "Turn total 600" in shown["text"]
            assert shown["action"] == advised_action(served.url, game, [3, 4, 5, 5, 5], 100, [5, 5, 5])
            page.click("#bank")
            page.wait_for_selector('#scoreboard tr[data-player="Ann"][data-score="600"]')
            shown = wait_for_advice(page, "awaiting_roll", action="throw", keep="", highlight="")
            assert shown["text"].startswith("Bob to throw 6 dice")
            assert page.evaluate(NO_SIDEWAYS_SCROLL), "the page scrolls sideways during play"
            page.screenshot(path=str(tmp_path / f"turn-{width}.png"), full_page=True)
        finally:
            browser.close()
    events = httpx.get(f"{served.url}/api/games/{game_id}/events").json()
    assert [e["text"] for e in events["data"]] == [
        "roll 1,2,3,4,6,6", "keep 1", "roll 3,4,5,5,5", "keep 5,5,5", "bank",
    ]  # fmt: skip


# ----------------------------------------------------------------------------- the table code
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_asks_for_the_table_code_once_keeps_it_and_asks_again_when_refused(
    browser_kit: Any, tmp_path: Path
) -> None:
    code = "TBL-4821"
    sent: list[tuple[str, str | None]] = []
    with (
        serve_with(ExampleReader, tmp_path / "games.sqlite3", table_code=code) as server,
        browser_kit.sync_playwright() as p,
    ):
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            page.on("request", lambda r: sent.append((r.url, r.headers.get("x-table-code"))))
            page.goto(server.url)
            # Asked once, before any call that needs the code.
            page.wait_for_selector("#code-dialog[open]")
            page.fill("#code-input", code)
            page.click("#code-form button[type=submit]")
            page.wait_for_selector('#stream-status[data-state="ok"]', timeout=60_000)  # the WebSocket, with ?code=
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            assert page.evaluate("localStorage.getItem('farklecam.tableCode')") == code
            api_calls = [(url, header) for url, header in sent if "/api/" in url and not url.endswith("/api/session")]
            assert api_calls and all(header == code for _, header in api_calls), api_calls
            # Kept: a reloaded page asks nothing and plays on.
            page.reload()
            page.wait_for_selector("#play:not([hidden])")
            page.wait_for_selector('#stream-status[data-state="ok"]', timeout=60_000)
            assert not page.locator("#code-dialog").get_attribute("open")
            # A code the server refuses (changed, mistyped) is forgotten and asked for again; then play goes on.
            page.evaluate("localStorage.setItem('farklecam.tableCode', 'WRONG-999')")
            page.reload()
            page.wait_for_selector("#code-dialog[open]", timeout=30_000)
            assert "code" in page.inner_text("#code-why").lower()
            assert page.evaluate("localStorage.getItem('farklecam.tableCode')") is None
            page.fill("#code-input", code)
            page.click("#code-form button[type=submit]")
            page.wait_for_selector("#play:not([hidden])")
            page.fill("#manual-action", "roll 1,2,3,4,6,6")
            page.press("#manual-action", "Enter")
            page.wait_for_selector('#turn[data-phase="awaiting_keep"]')
            page.wait_for_selector('#stream-status[data-state="ok"]', timeout=60_000)
        finally:
            browser.close()


# ----------------------------------------------------------------------------- progressive
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_offers_the_passed_dice_and_the_advice_on_taking_them(
    browser_kit: Any, served: ThreadedServer, tmp_path: Path
) -> None:
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)))
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(served.url)
            page.wait_for_selector('#faces[data-faces="3,4,5,5,5"]', timeout=90_000)
            page.select_option("#preset", "progressive")
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            game_id = page.inner_text("#game-id")
            for action in ("roll 1,1,1,2,3,6", "keep 1,1,1", "bank"):
                page.fill("#manual-action", action)
                page.press("#manual-action", "Enter")
                page.wait_for_function("document.querySelector('#manual-action').value === ''")
            # Bob is offered Ann's three dice and her 1000, or a fresh start with six (the five in view are neither).
            page.wait_for_selector('#passed:not([hidden])[data-dice="3"][data-total="1000"]')
            assert "passed 3 dice with 1000 points" in page.inner_text("#passed-offer")
            # The table's advice on it (the camera streams): by the chance to win from the scores (Bob 0, Ann 1000).
            take = advise_pass(get_rules("progressive"), 1000, 3, scores=[0, 1000]).take
            shown = wait_for_advice(page, "awaiting_roll", action="take" if take else "fresh", keep="")
            assert "chance to win" in shown["text"] and shown["text"].startswith("Bob: ")
            # The button throws the dice in view as the passed dice: five are refused, and the offer stands.
            page.click("#take-passed")
            page.wait_for_selector("#game-message.error")
            assert "exactly 3 dice" in page.inner_text("#game-message")
            assert page.is_visible("#passed")
            page.fill("#manual-action", "passed-roll 5,5,5")
            page.press("#manual-action", "Enter")
            wait_for_advice(page, "awaiting_keep", keep="5,5,5", highlight="")
            assert page.is_hidden("#passed") and page.get_attribute("#turn", "data-turn-total") == "1000"
        finally:
            browser.close()
    events = httpx.get(f"{served.url}/api/games/{game_id}/events").json()
    assert [e["text"] for e in events["data"]] == ["roll 1,1,1,2,3,6", "keep 1,1,1", "bank", "passed-roll 5,5,5"]


# ----------------------------------------------------------------------------- advice by the chance to win
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_shows_the_play_to_win_when_the_advice_carries_it(browser_kit: Any, served: ThreadedServer) -> None:
    """Where a game's advice carries a solved ``win`` block, its keep is the one shown, ringed and accepted."""
    win = {
        "available": True, "scores": [0, 12000], "opponent": 12000, "last_turn": True, "farkle": False,
        "keep": [1, 1], "points": 200, "dice_left": 4, "action": "roll", "win_probability": 0.0421,
        "alternatives": [{"keep": [1], "points": 100, "dice_left": 5, "action": "roll", "win_probability": 0.04,
                          "bank_probability": 0.0, "roll_probability": 0.04}],
        "points_advice": {"keep": [1, 1], "action": "bank"}, "approximate": False,
    }  # fmt: skip

    def with_win(route: Any) -> None:
        response = route.fetch()
        route.fulfill(response=response, json={**response.json(), "win": win})

    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            page.route("**/api/games/*/advice", with_win)
            page.goto(served.url)
            page.click("#rule-options summary")
            page.fill('#option-fields [name="opening_minimum"]', "0")  # so that 200 may be banked
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            page.fill("#manual-action", "roll 1,1,2,3,4,6")
            page.press("#manual-action", "Enter")
            shown = wait_for_advice(page, "awaiting_keep", keep="1,1", action="roll")
            assert "Last turn!" in shown["text"] and "4.2% to win" in shown["text"]
            assert "for points alone: keep 1 1, then BANK" in shown["text"]
            page.click("#accept")
            # After the keep, bank-or-roll by the chance to win of the keep made.
            shown = wait_for_advice(page, "can_bank_or_roll", keep="", action="roll")
            assert "4.2% to win" in shown["text"]
            # Another device banks first: the page's own bank is refused (not applied twice), and it catches up.
            game_id = page.inner_text("#game-id")
            moved = httpx.post(f"{served.url}/api/games/{game_id}/actions", json={"type": "bank", "expected_events": 2})
            assert moved.status_code == 200, moved.text
            page.click("#bank")
            page.wait_for_selector("#game-message.error")
            assert "moved on" in page.inner_text("#game-message")
            shown = wait_for_advice(page, "awaiting_roll", keep="", action="throw")
            assert shown["text"].startswith("Bob to throw 6 dice")
        finally:
            browser.close()
    events = httpx.get(f"{served.url}/api/games/{game_id}/events").json()
    assert [e["text"] for e in events["data"]] == ["roll 1,1,2,3,4,6", "keep 1,1", "bank"]


class UnclearReader(ExampleReader):
    """The example's dice with its 3 unread: the camera cannot tell that die."""

    def __init__(self) -> None:
        super().__init__()
        self.dice = [
            {**d, "face": 0, "status": "uncertain"} if d["face"] == 3 else d for d in self.dice
        ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_page_offers_a_face_for_an_unclear_die_and_scores_the_throw_told(browser_kit: Any, tmp_path: Path) -> None:
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)), frames=THROWN_FRAMES, thrown=True)
    with serve_with(UnclearReader, tmp_path / "games.sqlite3") as server, browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(server.url)
            game_id = start_and_keep_the_1(page)  # five dice to throw, the five in the camera's view
            page.wait_for_selector('#turn[data-phase="can_bank_or_roll"]')
            page.click("#roll-again")
            # The throw settles with one die unread: nothing is scored, and the page asks what it shows.
            page.wait_for_selector('#tell-dice:not([hidden]) button[data-face="3"]', timeout=90_000)
            events = httpx.get(f"{server.url}/api/games/{game_id}/events").json()["data"]
            assert [e["text"] for e in events] == ["roll 1,2,3,4,6,6", "keep 1"]
            assert "unclear" in page.inner_text("#tell-dice")
            # The text names the die by number, and the picture tags that die with the same number.
            number = int(page.get_attribute('#tell-dice button[data-face="3"]', "data-die")) + 1
            assert f"Die #{number} is unclear" in page.inner_text("#tell-dice")
            tags = json.loads(page.get_attribute("#overlay", "data-tags"))
            assert [re.sub(r"\d\?$", "?", t["text"]) for t in tags if t["status"] == "uncertain"] == [f"#{number} ?"]
            assert [t["die"] for t in tags if t["status"] == "uncertain"] == [number]
            page.click('#tell-dice button[data-face="3"]')
            page.wait_for_selector('#turn[data-phase="awaiting_keep"]')
            assert httpx.get(f"{server.url}/api/games/{game_id}").json()["state"]["roll"] == [3, 4, 5, 5, 5]
            page.wait_for_selector("#tell-dice[hidden]", state="attached")  # told: the question is gone
        finally:
            browser.close()


class MisreadReader(ExampleReader):
    """The example's dice with one of its three 5s read as a 6: a wrong die the camera is sure of."""

    def __init__(self) -> None:
        super().__init__()
        fives = [i for i, d in enumerate(self.dice) if d["face"] == 5]
        self.dice = [{**d, "face": 6} if i == fives[-1] else d for i, d in enumerate(self.dice)]


def log_texts(page: Any) -> list[str]:
    """The game log as the page lists it (its box opened)."""
    if page.get_attribute("#log-box", "open") is None:
        page.click("#log-box summary")
    page.wait_for_selector("#log li")
    texts = "(items) => items.map((li) => li.querySelector('.log-text').textContent)"
    return [str(t) for t in page.eval_on_selector_all("#log li", texts)]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_corrects_a_misread_die_with_a_click_on_the_picture_and_the_game_keeps_it(
    browser_kit: Any, tmp_path: Path
) -> None:
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)), frames=THROWN_FRAMES, thrown=True)
    db = tmp_path / "games.sqlite3"
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            with serve_with(MisreadReader, db) as server:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(server.url)
                game_id = start_and_keep_the_1(page)  # five dice to throw, the five in the camera's view
                page.wait_for_selector('#turn[data-phase="can_bank_or_roll"]')
                page.click("#roll-again")
                # The throw settles and is recorded as read: one 5 taken for a 6, two 5s worth 100.
                page.wait_for_selector('#turn[data-phase="awaiting_keep"]', timeout=90_000)
                game = f"{server.url}/api/games/{game_id}"
                assert httpx.get(game).json()["state"]["roll"] == [3, 4, 5, 5, 6]
                page.wait_for_function("JSON.parse(document.querySelector('#overlay').dataset.tags || '[]').length")
                tags = json.loads(page.get_attribute("#overlay", "data-tags"))
                six = next(t for t in tags if t["text"].startswith("6"))
                x1, y1, x2, y2 = six["box"]
                # One click on the wrong die asks what it is; one more says it: the throw is scored again.
                page.click("#overlay", position={"x": (x1 + x2) / 2, "y": (y1 + y2) / 2})
                page.wait_for_selector("#fix-die:not([hidden])")
                assert page.inner_text("#fix-die .fix-title") == f"Die #{six['die']} (read 6) is:"
                assert page.is_disabled('#fix-die button[data-fix="face"][data-face="6"]')  # what it reads now
                page.click('#fix-die button[data-fix="face"][data-face="5"]')
                page.wait_for_selector("#fix-die[hidden]", state="attached")
                page.wait_for_function("document.querySelector('#legal').textContent.includes('5,5,5 (500)')")
                assert httpx.get(game).json()["state"]["roll"] == [3, 4, 5, 5, 5]
                assert f"die #{six['die']} is a 5: Ann threw 3 4 5 5 5" in page.inner_text("#game-message")
                page.wait_for_selector('#faces[data-faces="3,4,5,5,5"]')  # the picture shows it corrected
                page.wait_for_function("document.querySelector('#advice').dataset.keep.includes('5,5,5')")
                correction = f"correct {six['die']} face 5 roll 3,4,5,5,5"
                assert log_texts(page)[-2:] == ["roll 3,4,5,5,6", correction]
            # The server stops; a new one on the same database replays the log, the correction in it.
            with serve_with(MisreadReader, db) as server:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{server.url}/#game={game_id}")
                page.wait_for_selector('#turn[data-phase="awaiting_keep"]')
                page.wait_for_function("document.querySelector('#legal').textContent.includes('5,5,5 (500)')")
                assert log_texts(page)[-1] == correction
                assert httpx.get(f"{server.url}/api/games/{game_id}").json()["state"]["roll"] == [3, 4, 5, 5, 5]
        finally:
            browser.close()


# ----------------------------------------------------------------------------- what the page says it sees
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_page_announces_a_farkle_until_the_next_player_throws(browser_kit: Any, served: ThreadedServer) -> None:
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            page.goto(served.url)
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            assert page.is_hidden("#turn-news")
            for action, shown in (("roll 2,2,3,4,6,6", True), ("roll 1,2,3,4,6,6", False), ("undo", True)):
                page.fill("#manual-action", action)
                page.press("#manual-action", "Enter")
                page.wait_for_function("document.querySelector('#manual-action').value === ''")
                page.wait_for_selector("#turn-news", state="visible" if shown else "hidden")
            news = page.inner_text("#turn-news")
            assert news == "FARKLE — Ann scores nothing this turn (threw 2 2 3 4 6 6); Bob throws next"
            assert page.get_attribute("#turn-news", "role") == "alert"  # read out as well as shown
            assert page.get_attribute("#turn", "data-phase") == "awaiting_roll"
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_page_gives_the_second_player_a_fair_head_start(browser_kit: Any, served: ThreadedServer) -> None:
    from farklecam.scoring.winprob import solve_win

    points = solve_win(get_rules("house")).compensation()
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            page.goto(served.url)
            page.select_option("#preset", "house")
            page.fill("#players", "Ann, Bob")
            page.check("#head-start")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            bob = page.locator('#scoreboard tr[data-player="Bob"]')
            assert bob.get_attribute("data-head-start") == str(points) and points > 0
            assert f"head start {points}" in bob.inner_text()
            assert page.get_attribute('#scoreboard tr[data-player="Ann"]', "data-score") == "0"
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_page_draws_the_bank_line_and_each_players_chance_for_the_player_to_move(
    browser_kit: Any, served: ThreadedServer
) -> None:
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(served.url)
            page.select_option("#preset", "house")
            page.fill("#players", "Ann, Bob")
            page.click("#start")
            page.wait_for_selector("#play:not([hidden])")
            for action in ("roll 1,1,1,5,2,3", "keep 1,1,1,5", "bank", "roll 2,2,3,4,6,6"):  # Ann 1050, Bob farkles
                page.fill("#manual-action", action)
                page.press("#manual-action", "Enter")
                page.wait_for_function("document.querySelector('#manual-action').value === ''")
            # The scoreboard says each player's chance to win, updated after every action.
            chances = [float(page.get_attribute(f'#scoreboard tr[data-player="{p}"]', "data-chance") or "nan")
                       for p in ("Ann", "Bob")]  # fmt: skip
            assert sum(chances) == pytest.approx(1.0) and chances[0] > 0.5  # Ann 1050 ahead, to throw
            assert f"{100 * chances[0]:.1f}%" in page.inner_text('#scoreboard tr[data-player="Ann"]')
            page.click("#bank-line summary")
            shown = "(img) => !img.hidden && img.complete && img.naturalWidth === 900 && img.dataset.query"
            page.wait_for_function(f"({shown})(document.querySelector('#bank-line-img'))")
            query = page.get_attribute("#bank-line-img", "data-query") or ""
            assert "preset=house" in query and "score=1050" in query  # Ann to throw again, with her 1050
            assert "score of 1050" in (page.get_attribute("#bank-line-img", "alt") or "")
            # A table of three: each player's chance, marked approximate.
            page.evaluate("() => { localStorage.removeItem('farklecam.game'); }")
            page.goto(served.url)
            page.select_option("#preset", "house")
            page.fill("#players", "Ann, Bob, Cy")
            page.click("#start")
            page.wait_for_selector('#scoreboard tr[data-player="Cy"]')
            three = [float(page.get_attribute(f'#scoreboard tr[data-player="{p}"]', "data-chance") or "nan")
                     for p in ("Ann", "Bob", "Cy")]  # fmt: skip
            assert sum(three) == pytest.approx(1.0) and three[0] > three[2]  # Ann throws first
            assert f"≈ {100 * three[0]:.1f}%" in page.inner_text('#scoreboard tr[data-player="Ann"]')
        finally:
            browser.close()


class CrowdedReader(ExampleReader):
    """Six dice packed 4 px apart (640 x 480 frame pixels): one leaning, one unclear, one off the tray."""

    def __init__(self) -> None:
        super().__init__()
        row = [[200 + 44 * k, 200, 240 + 44 * k, 240] for k in range(5)]
        faces = [5, 1, 0, 0, 4, 2]
        statuses = ["ok", "ok", "cocked", "uncertain", "off_tray", "ok"]
        boxes = [*row, [200, 244, 240, 284]]
        self.dice = [{"box": b, "face": f, "status": s} for b, f, s in zip(boxes, faces, statuses, strict=True)]


def overlaps(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0 and min(a[3], b[3]) - max(a[1], b[1]) > 0


def covered(tags: list[dict[str, Any]]) -> list[str]:
    """Each tag that covers a die (its own included) or another die's tag."""
    bad = []
    for tag in tags:
        dice = [t["die"] for t in tags if overlaps(tag["tag"], t["box"])]
        others = [t["die"] for t in tags if t is not tag and overlaps(tag["tag"], t["tag"])]
        if dice or others:
            bad.append(f"{tag['text']!r} covers dice {dice} and the tags of {others}")
    return bad


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_page_tags_every_die_clear_of_its_neighbours_numbers_those_it_names_and_explains_the_marks(
    browser_kit: Any, tmp_path: Path
) -> None:
    with example_page(browser_kit, CrowdedReader(), tmp_path, faces="1,2,5") as page:
        page.wait_for_function("JSON.parse(document.querySelector('#overlay').dataset.tags || '[]').length === 6")
        tags = json.loads(page.get_attribute("#overlay", "data-tags"))
        texts = [t["text"] for t in tags]
        assert texts[:3] + texts[4:] == ["5", "1", "#3 leaning", "#5 4 off tray", "2"]
        assert re.fullmatch(r"#4 \d?\?", texts[3]), texts[3]  # with the face it looks like, once votes settle
        assert covered(tags) == []
        width, height = page.evaluate("(({width, height}) => [width, height])(document.querySelector('#overlay'))")
        for t in tags:  # inside the picture
            assert t["tag"][0] >= 0 and t["tag"][1] >= 0 and t["tag"][2] <= width and t["tag"][3] <= height, t
        # The text names the dice to throw again by the numbers on the picture.
        assert page.inner_text("#throw-status") == "RETHROW 2: #3 leaning, #5 off the tray"
        # A legend for every mark, its tags in the colours the picture draws them in.
        legend = page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('#legend [data-mark]')].map((li) => {
                 const tag = getComputedStyle(li.querySelector('.tag'));
                 return [li.dataset.mark, {text: li.textContent.trim(), fill: tag.backgroundColor,
                                           ring: tag.borderTopColor, visible: li.checkVisibility()}];
               }))"""
        )
        assert set(legend) == {"ok", "cocked", "off_tray", "uncertain", "keep", "number"}
        assert all(entry["visible"] for entry in legend.values())
        assert "leaning" in legend["cocked"]["text"] and "off tray" in legend["off_tray"]["text"]
        assert "check this die" in legend["uncertain"]["text"] and "keep" in legend["keep"]["text"]
        drawn = page.evaluate(
            """(tags) => { const ctx = document.querySelector('#overlay').getContext('2d');
                 return tags.map((t) => { const [r, g, b] = ctx.getImageData(t.tag[0] + 1, t.tag[1] + 1, 1, 1).data;
                                          return [t.status, `rgb(${r}, ${g}, ${b})`]; }); }""",
            tags,
        )
        for status, colour in drawn:
            assert legend[status]["fill"] == colour, (status, colour, legend[status])
        # The layout itself: dice edge to edge in two rows, tags wider than a die, placed in any order.
        boxes = [[100 + 44 * k, 200 + 44 * r, 140 + 44 * k, 240 + 44 * r] for r in range(2) for k in range(5)]
        for order in (None, list(range(9, -1, -1))):
            placed = page.evaluate(
                "([boxes, order]) => placeLabels(boxes, boxes.map(() => [80, 22]), 640, 480, order)", [boxes, order]
            )
            laid = [{"die": i + 1, "text": str(i), "tag": placed[i], "box": box} for i, box in enumerate(boxes)]
            assert covered(laid) == [], order


def wrong_code_limit(server: ThreadedServer, window: float) -> None:
    """Give the server a shorter lockout than a minute (a test waits it out)."""
    from farklecam.service.code_attempts import WrongCodeLimit
    from farklecam.service.security import SiteGuard

    app = server.server.config.app
    guards = [m.kwargs["policy"] for m in app.user_middleware if m.cls is SiteGuard]
    assert len(guards) == 1
    guards[0].limit = WrongCodeLimit(attempts=10, window=window)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_page_waits_out_a_lockout_for_wrong_codes_then_loads_whole(browser_kit: Any, tmp_path: Path) -> None:
    code = "TBL-4821"
    with (
        serve_with(ExampleReader, tmp_path / "games.sqlite3", table_code=code) as server,
        browser_kit.sync_playwright() as p,
    ):
        wrong_code_limit(server, window=10.0)
        created = httpx.post(
            f"{server.url}/api/games", json={"players": ["Ann", "Bob"]}, headers={"X-Table-Code": code}
        )
        assert created.status_code == 201, created.text
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            page.add_init_script(f"localStorage.setItem('farklecam.tableCode', {json.dumps(code)})")  # known here
            for _ in range(10):  # someone on this address guessed ten times: even the right code is refused
                httpx.get(f"{server.url}/api/health", headers={"X-Table-Code": "GUESS-1"})
            assert httpx.get(f"{server.url}/api/health", headers={"X-Table-Code": code}).status_code == 429
            page.goto(server.url)
            page.wait_for_function("document.querySelector('#banner').textContent.includes('wrong table codes')")
            assert page.get_attribute("#server-status", "data-state") == "bad"  # no green pill while shut out
            assert page.locator("#preset option").count() == 0
            # Once the lockout is over, everything refused is sent again: rules, saved games, the stream.
            page.wait_for_selector("#saved-games button", timeout=30_000)
            assert page.locator("#preset option").count() > 0
            page.wait_for_selector('#stream-status[data-state="ok"]', timeout=30_000)
            page.wait_for_selector("#banner", state="hidden")
            assert page.get_attribute("#server-status", "data-state") == "ok"
            assert "Resume Ann, Bob" in page.inner_text("#saved-games")
        finally:
            browser.close()


def relative_luminance(rgb: list[float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: list[float], bg: list[float]) -> float:
    light, dark = sorted((relative_luminance(fg), relative_luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


# Each visible link's colour and the colour behind it (the nearest element with an opaque background).
LINK_COLOURS = r"""() => [...document.querySelectorAll('a')].filter((a) => a.checkVisibility()).map((a) => {
  const rgb = (text) => text.match(/[\d.]+/g).map(Number);
  let el = a, bg = null;
  for (; el && !bg; el = el.parentElement) {
    const c = rgb(getComputedStyle(el).backgroundColor);
    if (c.length < 4 || c[3] > 0) { bg = c; }
  }
  return {text: a.textContent, fg: rgb(getComputedStyle(a).color), bg: bg || [255, 255, 255]};
})"""


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_organiser_page_keeps_errors_says_why_a_button_cannot_act_and_has_readable_links(
    browser_kit: Any, served: ThreadedServer
) -> None:
    players = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"]
    assert httpx.post(f"{served.url}/api/tournaments", json={"name": "tiny", "seed": 1}).status_code == 201
    assert httpx.post(f"{served.url}/api/tournaments/tiny/players", json={"players": players[:2]}).status_code == 200
    assert httpx.post(f"{served.url}/api/tournaments", json={"name": "cup", "seed": 1}).status_code == 201
    assert httpx.post(f"{served.url}/api/tournaments/cup/players", json={"players": players}).status_code == 200
    assert httpx.post(f"{served.url}/api/tournaments/cup/start").status_code == 200  # round 1 is being played
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page()
            # Too few players: nothing to start or export, and the page says why.
            page.goto(f"{served.url}/organiser.html?t=tiny")
            page.wait_for_selector("#start:disabled")
            assert "at least 6 players" in page.get_attribute("#start", "title")
            assert page.is_disabled("#export") and "Nothing to export" in page.get_attribute("#export", "title")
            assert "at least 6 players first (2 so far)" in page.inner_text("#buttons-why")
            # A round being played: "Start next round" cannot act, and says so beside the buttons.
            page.goto(f"{served.url}/organiser.html?t=cup")
            page.wait_for_selector("#start:disabled")
            why = page.inner_text("#buttons-why")
            assert "Round 1 is still being played: 0 of 2 tables finished" in why, why
            assert page.get_attribute("#start", "title") in why and page.is_enabled("#export")
            # An error stays until dismissed (past live refreshes too: test_organiser_live.py).
            page.fill("#new-name", "cup")
            page.click("#new-form button[type=submit]")
            page.wait_for_selector("#errors p")
            assert "cup" in page.inner_text("#errors")
            page.wait_for_timeout(1000)
            assert page.is_visible("#errors p") and page.is_hidden("#banner")
            page.click("#errors p .dismiss")
            assert page.locator("#errors p").count() == 0
            # Links readable on the dark page: the header's, and each table's camera page.
            links = page.evaluate(LINK_COLOURS)
            assert {link["text"] for link in links} >= {"table page", "camera page"}
            for link in links:
                assert contrast(link["fg"], link["bg"]) >= 4.5, link
        finally:
            browser.close()


# ----------------------------------------------------------------------------- the pictures behind the throws
IMAGE_SHOWN = "(img) => img.complete && img.naturalWidth > 0 && img.dataset.overlay === '{overlay}'"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_page_log_shows_the_picture_a_scored_throw_was_read_from(browser_kit: Any, tmp_path: Path) -> None:
    y4m = write_y4m(tmp_path / "tray.y4m", cv2.imread(str(EXAMPLE)), frames=THROWN_FRAMES, thrown=True)
    with serve_with(ExampleReader, tmp_path / "games.sqlite3") as server, browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, y4m)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(server.url)
            game_id = start_and_keep_the_1(page)  # typed by hand: five dice to throw, the five in the camera's view
            page.wait_for_selector('#turn[data-phase="can_bank_or_roll"]')
            page.click("#roll-again")
            page.wait_for_selector('#turn[data-phase="awaiting_keep"]', timeout=90_000)  # the camera scored it
            assert log_texts(page) == ["roll 1,2,3,4,6,6", "keep 1", "roll 3,4,5,5,5"]
            lines = page.locator("#log li")
            assert lines.nth(0).locator(".picture-none").inner_text() == "entered by hand: no picture"
            assert lines.nth(1).locator(".picture-none, .picture-link").count() == 0  # a keep is no throw
            lines.nth(2).locator(".picture-link").click()
            dialog = page.locator("#throw-picture[open]")
            dialog.wait_for()
            assert dialog.locator("h2").inner_text() == "Throw 3: roll 3,4,5,5,5"
            page.wait_for_function(
                f"({IMAGE_SHOWN.format(overlay=1)})(document.querySelector('#throw-picture img'))"
            )  # the picture with the reading as read drawn by the server
            size = page.eval_on_selector("#throw-picture img", "(img) => [img.naturalWidth, img.naturalHeight]")
            assert max(size) == 640
            assert "The camera read 3 4 5 5 5 scored" in dialog.inner_text()
            assert "Scored as read: no correction in the game's log." in dialog.inner_text()
            page.uncheck("#throw-picture-overlay")  # the plain picture
            page.wait_for_function(f"({IMAGE_SHOWN.format(overlay=0)})(document.querySelector('#throw-picture img'))")
            page.screenshot(path=str(tmp_path / "picture.png"))
            dialog.locator("button[type=submit]").click()
            page.wait_for_selector("#throw-picture[open]", state="detached")
            listing = httpx.get(f"{server.url}/api/games/{game_id}/pictures").json()
            assert [(p["seq"], p["text"]) for p in listing["data"]] == [(3, "roll 3,4,5,5,5")]
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_organiser_page_shows_a_tables_throw_pictures_and_deletes_them_once_confirmed(
    browser_kit: Any, served: ThreadedServer, tmp_path: Path
) -> None:
    players = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"]
    assert httpx.post(f"{served.url}/api/tournaments", json={"name": "cup", "seed": 1}).status_code == 201
    assert httpx.post(f"{served.url}/api/tournaments/cup/players", json={"players": players}).status_code == 200
    assert httpx.post(f"{served.url}/api/tournaments/cup/start").status_code == 200
    table = httpx.get(f"{served.url}/api/tournaments/cup").json()["rounds"][0]["tables"][0]
    game_id, first = table["game"], table["players"][0]
    image = cv2.imread(str(EXAMPLE))
    die = ExampleReader().read(image)[:1]  # a roll-off throw of one die, as the table's camera read it
    throw = {"type": "rolloff", "player": first, "face": die.faces[0]}
    assert httpx.post(f"{served.url}/api/games/{game_id}/actions", json=throw).status_code == 200
    with GameStore(tmp_path / "games.sqlite3") as store:  # its picture, kept as the table's session keeps one
        ThrowPictures(store.db).keep(game_id, 1, make_picture(image, die))
    with browser_kit.sync_playwright() as p:
        browser = launch(browser_kit, p, None)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{served.url}/organiser.html?t=cup")
            page.click(f'button[data-game="{game_id}"]')
            page.wait_for_selector("#pictures:not([hidden]) #pictures-body tr")
            assert page.inner_text("#pictures-title") == "Pictures of Round 1, table 1's throws"
            assert page.inner_text("#pictures-summary").startswith("1 pictures of camera-scored throws")
            row = page.locator('#pictures-body tr[data-seq="1"]')
            assert f'rolloff "{first}" {die.faces[0]}' in row.inner_text()
            row.locator("button").click()
            page.wait_for_function(f"({IMAGE_SHOWN.format(overlay=1)})(document.querySelector('#throw-picture img'))")
            page.locator("#throw-picture button[type=submit]").click()
            page.once("dialog", lambda ask: ask.dismiss())  # asked, and said no: nothing is deleted
            page.click("#delete-pictures")
            page.wait_for_timeout(500)
            assert httpx.get(f"{served.url}/api/games/{game_id}/pictures").json()["count"] == 1
            asked: list[str] = []
            page.once("dialog", lambda ask: (asked.append(ask.message), ask.accept()))
            page.click("#delete-pictures")
            page.wait_for_function("document.querySelector('#pictures-done').textContent.startsWith('Deleted 1')")
            assert "cannot be brought back" in asked[0] and "log" in asked[0]
            assert "picture deleted" in page.inner_text('#pictures-body tr[data-seq="1"]')
            assert page.is_disabled("#delete-pictures")
        finally:
            browser.close()
    listing = httpx.get(f"{served.url}/api/games/{game_id}/pictures").json()
    assert listing["count"] == 0 and [p["seq"] for p in listing["deleted"]] == [1]
    assert httpx.get(f"{served.url}/api/games/{game_id}/events").json()["count"] == 1  # the log is untouched
