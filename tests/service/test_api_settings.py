"""Settings from FARKLECAM_* variables, and ``farklecam serve`` building them from its options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from farklecam.errors import InvalidRulesError
from farklecam.service.app import build_reader
from farklecam.service.commands.serve_verb import SERVE
from farklecam.service.db.target import SqliteTarget
from farklecam.service.settings import Settings, default_db_path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_defaults_are_local_and_offline() -> None:
    settings = Settings()
    assert (settings.host, settings.port, settings.rules, settings.offline) == ("127.0.0.1", 8000, "boxed", True)
    assert settings.is_loopback
    assert settings.database == SqliteTarget(default_db_path())
    assert default_db_path().name == "games.sqlite3" and "farklecam" in str(default_db_path())


def test_environment_variables_set_fields(tmp_path: Path) -> None:
    env = {"FARKLECAM_PORT": "9001", "FARKLECAM_DB_PATH": str(tmp_path / "g.db"), "FARKLECAM_RULES": "bar",
           "FARKLECAM_MAX_UPLOAD_BYTES": "2048", "FARKLECAM_HOST": " ", "OTHER": "x"}  # fmt: skip
    settings = Settings.from_env(env)
    assert settings.port == 9001 and settings.database == SqliteTarget(tmp_path / "g.db")
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
    assert settings.database == SqliteTarget(tmp_path / "t.db") and settings.rules == "zilch"
    assert "warning" not in capsys.readouterr().err


def test_serve_straight_down_reaches_the_reader_and_every_tables_pill(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import uvicorn

    from farklecam.service.deps import LazyReader, ReaderSlot

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
    from farklecam.service.deps import LazyReader, ReaderSlot
    from farklecam.vision.images import load_image

    settings = Settings(db_path=tmp_path / "t.db", straight_down=True)
    table = LazyReader(ReaderSlot(lambda: build_reader(settings)), straight_down=True)
    tilted = table.read(load_image(EXAMPLES / "tray_webcam.jpg"))
    assert tilted.straight_down_doubted and table.vertical == "tilted"
    table.read(load_image(EXAMPLES / "tray_ok.jpg"))  # 2.7 degrees off: the setting holds again
    assert table.vertical == "straight_down"


def test_serve_beyond_this_machine_prints_a_table_code_and_the_addresses_to_open(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.delenv("FARKLECAM_TABLE_CODE", raising=False)
    monkeypatch.setattr("farklecam.service.security.lan_addresses", lambda: ["192.168.1.20"])
    assert SERVE.run(serve_args("--host", "0.0.0.0", "--db", str(tmp_path / "t.db"))) == 0
    code = seen["app"].state.settings.table_code
    err = capsys.readouterr().err
    assert code and f"table code: {code}" in err and "http://192.168.1.20:8000/" in err
    assert "anyone on this network who has the table code" in err and "--tls-self-signed" in err
    assert seen["ssl_certfile"] is None
    assert SERVE.run(serve_args("--host", "0.0.0.0", "--db", str(tmp_path / "t.db"), "--table-code", "den-42x")) == 0
    assert seen["app"].state.settings.table_code == "den-42x" and "table code: den-42x" in capsys.readouterr().err


def test_serve_allow_host_reaches_the_host_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    argv = ("--db", str(tmp_path / "t.db"), "--allow-host", "Table.LAN", "--allow-host", "10.0.0.9")
    assert SERVE.run(serve_args(*argv)) == 0
    assert seen["app"].state.settings.allow_hosts == ("table.lan", "10.0.0.9")
    assert Settings.from_env({"FARKLECAM_ALLOW_HOSTS": "a.lan, b.lan"}).allow_hosts == ("a.lan", "b.lan")
    with pytest.raises(InvalidRulesError, match="not a host name"):
        Settings.from_env({}, allow_hosts=["http://evil.example/"])


def test_serve_tls_self_signed_makes_and_serves_a_certificate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the user data folder, on Linux
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"), "--tls-self-signed")) == 0
    cert = tmp_path / "data" / "farklecam" / "tls" / "cert.pem"
    assert seen["ssl_certfile"] == str(cert) and seen["ssl_keyfile"] == str(cert.with_name("key.pem"))
    assert seen["app"].state.settings.scheme == "https" and "serving on https://" in capsys.readouterr().err
    key = cert.with_name("key.pem")
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"), "--tls-cert", str(cert), "--tls-key", str(key))) == 0
    assert seen["ssl_certfile"] == str(cert)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--tls-cert", "c.pem"), "tls_cert and tls_key go together"),
        (("--tls-cert", "c.pem", "--tls-key", "k.pem"), "does not exist"),
        (("--tls-self-signed", "--tls-cert", "c.pem", "--tls-key", "k.pem"), "not both"),
        (("--table-code", "abc"), "6 to 64 letters and digits"),
    ],
)
def test_serve_refuses_bad_security_options_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: tuple[str, ...], message: str
) -> None:
    import uvicorn

    from farklecam.errors import FarkleError

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: pytest.fail("must not start"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FarkleError, match=message):
        SERVE.run(serve_args("--db", str(tmp_path / "t.db"), *argv))


def test_serve_profile_reads_with_it_and_every_table_teaches_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn
    from fastapi.testclient import TestClient

    from farklecam.service.cli import main
    from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore

    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    monkeypatch.delenv("FARKLECAM_PROFILE", raising=False)
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(app=app, **kw))
    assert main(["serve", "--db", str(tmp_path / "t.db"), "--profile", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no profile 'nope'" in err and not seen
    assert main(["serve", "--db", str(tmp_path / "t.db"), "--profile", "../up"]) == 2
    assert "cannot name a profile" in capsys.readouterr().err
    assert Settings.from_env({"FARKLECAM_PROFILE": "den"}).profile == "den"
    ProfileStore().open_or_create("den")
    assert main(["serve", "--db", str(tmp_path / "t.db"), "--profile", "den"]) == 0
    app = seen["app"]
    assert app.state.settings.profile == "den"
    with TestClient(app) as client:  # the profile every table reads with until its page chooses another
        assert client.get("/api/profiles").json()["default"] == "den"
    assert SERVE.run(serve_args("--db", str(tmp_path / "t.db"))) == 0
    with TestClient(seen["app"]) as client:
        assert client.get("/api/profiles").json() == {"profiles": [{"name": "den", "corrections": 0}], "default": None}
    if (EXAMPLES.parent / "models" / "die_detector.onnx").exists():
        from farklecam.service.deps import LazyReader, ReaderSlot

        reader = build_reader(app.state.settings)
        assert getattr(reader, "profile", None) is not None  # what the slot loads on first use
        slot = ReaderSlot(lambda: reader)
        assert LazyReader(slot).teaching_profile() is reader.profile  # a table's corrections go to the profile
        chose = LazyReader(slot)
        chose.choose_profile("den")  # chosen by name, the server's own: the same adapter, taught once
        assert chose.teaching_profile() is reader.profile
