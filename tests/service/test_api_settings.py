"""Settings from FARKLECAM_* variables, and ``farklecam serve`` building them from its options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from farklecam.errors import InvalidRulesError
from service.app import build_reader
from service.commands.serve_verb import SERVE
from service.settings import Settings, default_db_path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_defaults_are_local_and_offline() -> None:
    settings = Settings()
    assert (settings.host, settings.port, settings.rules, settings.offline) == ("127.0.0.1", 8000, "boxed", True)
    assert settings.is_loopback
    assert settings.database == default_db_path()
    assert default_db_path().name == "games.sqlite3" and "farklecam" in str(default_db_path())


def test_environment_variables_set_fields(tmp_path: Path) -> None:
    env = {"FARKLECAM_PORT": "9001", "FARKLECAM_DB_PATH": str(tmp_path / "g.db"), "FARKLECAM_RULES": "bar",
           "FARKLECAM_MAX_UPLOAD_BYTES": "2048", "FARKLECAM_HOST": " ", "OTHER": "x"}  # fmt: skip
    settings = Settings.from_env(env)
    assert settings.port == 9001 and settings.database == tmp_path / "g.db"
    assert settings.rules == "house"  # aliases resolve to the preset's name
    assert settings.max_upload_bytes == 2048 and settings.host == "127.0.0.1"  # blank values are ignored
    assert Settings.from_env(env, port=7000, host=None).port == 7000  # options win; None means "not given"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FARKLECAM_PORT": "http"}, "FARKLECAM_PORT"),
        ({"FARKLECAM_PORT": "70000"}, "FARKLECAM_PORT"),
        ({"FARKLECAM_RULES": "chess"}, "unknown rule preset"),
        ({"FARKLECAM_MAX_UPLOAD_BYTES": "1"}, "FARKLECAM_MAX_UPLOAD_BYTES"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidRulesError, match=message):
        Settings.from_env(env)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("0.0.0.0", False), ("table.lan", False)],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert Settings(host=host).is_loopback is loopback


def serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    SERVE.configure(parser)
    return parser.parse_args(argv)


def test_serve_runs_uvicorn_with_the_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.delenv("FARKLECAM_PORT", raising=False)
    args = serve_args("--port", "8123", "--db", str(tmp_path / "t.db"), "--rules", "zilch")
    assert SERVE.run(args) == 0
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8123)
    settings = seen["app"].state.settings
    assert settings.database == tmp_path / "t.db" and settings.rules == "zilch"
    assert "warning" not in capsys.readouterr().err


def test_serve_straight_down_reaches_the_reader_and_every_tables_pill(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import uvicorn

    from service.deps import LazyReader, ReaderSlot

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.delenv("FARKLECAM_STRAIGHT_DOWN", raising=False)
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"))) == 0
    assert seen["app"].state.settings.straight_down is False
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"), "--straight-down")) == 0
    app = seen["app"]
    assert app.state.settings.straight_down is True
    if (Path(__file__).resolve().parents[2] / "models" / "die_detector.onnx").exists():
        assert build_reader(app.state.settings).config.straight_down is True  # what the slot loads on first use
    table = LazyReader(ReaderSlot(lambda: None), straight_down=True)  # type: ignore[arg-type, return-value]
    assert table.vertical == "straight_down"
    table.tray = [[0, 0], [600, 0], [600, 400], [0, 400]]
    assert table.vertical == "tray"  # marked corners still come first
    assert Settings.from_env({"FARKLECAM_STRAIGHT_DOWN": "true"}).straight_down is True


@pytest.mark.skipif(not (EXAMPLES.parent / "models" / "cocked_test.onnx").exists(), reason="needs the committed models")
def test_a_tables_pill_says_when_its_straight_down_camera_is_tilted(tmp_path: Path) -> None:
    """tray_webcam's camera is 30-35 degrees off straight down: its dice overrule the setting, and the pill says so."""
    from service.deps import LazyReader, ReaderSlot
    from vision.images import load_image

    settings = Settings(db_path=tmp_path / "t.db", straight_down=True)
    table = LazyReader(ReaderSlot(lambda: build_reader(settings)), straight_down=True)
    tilted = table.read(load_image(EXAMPLES / "tray_webcam.jpg"))
    assert tilted.straight_down_doubted and table.vertical == "tilted"
    table.read(load_image(EXAMPLES / "tray_ok.jpg"))  # 2.7 degrees off: the setting holds again
    assert table.vertical == "straight_down"


def test_serve_warns_when_listening_beyond_this_machine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    assert SERVE.run(serve_args("--host", "0.0.0.0", "--db", str(tmp_path / "t.db"))) == 0
    assert "anyone on this network" in capsys.readouterr().err
