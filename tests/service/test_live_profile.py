"""``farklecam live --profile NAME``: the profile reaches the live reader; an unknown one is one line, status 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from farklecam.service.cli import main
from farklecam.service.live import app as live_app
from farklecam.service.live.app import LiveOptions
from farklecam.service.profiles.store import PROFILES_ENV

ROOT = Path(__file__).resolve().parents[2]


def test_live_hands_the_named_profile_to_its_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    assert main(["live", "--profile", "nope", "--video", "x.mp4"]) == 2
    assert "no profile 'nope'" in capsys.readouterr().err
    labels = tmp_path / "labelled"
    (labels / "images").mkdir(parents=True)
    (labels / "labels").mkdir()
    shutil.copy(ROOT / "examples" / "tray_ok.jpg", labels / "images")
    shutil.copy(ROOT / "examples" / "labels" / "tray_ok.txt", labels / "labels")
    assert main(["teach", "t", "--labels", str(labels)]) == 0
    seen: list[LiveOptions] = []
    monkeypatch.setattr(live_app, "run_live", lambda options: seen.append(options) or 0)
    assert main(["live", "--profile", "t", "--video", "x.mp4"]) == 0
    assert seen[0].profile is not None and len(seen[0].profile) == 5


def test_corrections_in_the_live_window_teach_its_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib
    from collections.abc import Iterator

    from farklecam.service.live import window
    from farklecam.service.profiles.store import ProfileStore

    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    profile = ProfileStore().open_or_create("den")

    @contextlib.contextmanager
    def no_camera(_: LiveOptions) -> Iterator[Iterator[object]]:
        yield iter(())

    sessions: list[object] = []

    class Window:
        def __init__(self, controller: object, *_: object, **__: object) -> None:
            sessions.append(controller.session)  # type: ignore[attr-defined]

        def run(self) -> None:
            pass

    monkeypatch.setattr(live_app, "_camera_or_video", no_camera)
    monkeypatch.setattr(window, "LiveWindow", Window)
    options = LiveOptions(game_file=tmp_path / "game.json", profile=profile)
    assert live_app.run_live(options) == 0
    assert sessions[0].on_correct is not None  # type: ignore[attr-defined]
    assert live_app.run_live(LiveOptions(game_file=tmp_path / "game.json")) == 0
    assert sessions[1].on_correct is None  # type: ignore[attr-defined]
