"""``--db`` and ``FARKLECAM_DB``: a path is a file, a URL is a server, and a URL is never taken for a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from farklecam.errors import InvalidRulesError
from farklecam.service.cli import main
from farklecam.service.db.target import PostgresTarget, SqliteTarget, parse_target
from farklecam.service.settings import Settings


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("games.sqlite3", SqliteTarget(Path("games.sqlite3"))),
        ("/srv/farkle/games.db", SqliteTarget(Path("/srv/farkle/games.db"))),
        ("postgresql://farkle@db.lan/league", PostgresTarget("postgresql://farkle@db.lan/league")),
        ("postgres://farkle@db.lan:5433/league", PostgresTarget("postgres://farkle@db.lan:5433/league")),
        ("postgresql:///league?host=/run/postgresql", PostgresTarget("postgresql:///league?host=/run/postgresql")),
    ],
)
def test_paths_and_urls(text: str, found: object) -> None:
    assert parse_target(text) == found


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("mysql://db.lan/league", "mysql:// is not a database farklecam keeps games in"),
        ("postgresql:league", "is not a PostgreSQL URL"),
        ("postgresql://db.lan:99999/league", "port '99999' is not a number"),
        ("postgresql://db.lan/league?colour=red", 'invalid URI query parameter: "colour"'),
        ("postgresql://[::1/league", "IPv6"),
    ],
)
def test_a_url_that_cannot_be_used_is_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_target(text)


def test_the_password_is_never_shown() -> None:
    target = parse_target("postgresql://farkle:s3cret@db.lan/league")
    assert "s3cret" not in str(target) and "s3cret" not in repr(target)
    assert str(target) == "postgresql://farkle:***@db.lan/league"
    with pytest.raises(ValueError, match="bad PostgreSQL URL") as refused:
        parse_target("postgresql://farkle:s3cret@db.lan:0/league")
    assert "s3cret" not in str(refused.value)


def test_settings_take_the_database_from_the_option_or_the_environment(tmp_path: Path) -> None:
    url = "postgresql://farkle@db.lan/league"
    assert Settings.from_env({"FARKLECAM_DB": url}).database == PostgresTarget(url)
    both = {"FARKLECAM_DB": url, "FARKLECAM_DB_PATH": str(tmp_path / "g.db")}
    assert Settings.from_env(both).database == PostgresTarget(url)  # db wins over the older db_path
    assert Settings.from_env(both, db=str(tmp_path / "h.db")).database == SqliteTarget(tmp_path / "h.db")
    assert Settings(db=tmp_path / "g.db").database == SqliteTarget(tmp_path / "g.db")
    with pytest.raises(InvalidRulesError, match=r"FARKLECAM_DB_PATH.*give a database URL as --db"):
        Settings.from_env({"FARKLECAM_DB_PATH": url})
    with pytest.raises(InvalidRulesError, match=r"FARKLECAM_DB.*not a database farklecam keeps"):
        Settings.from_env({"FARKLECAM_DB": "redis://cache/0"})


@pytest.mark.parametrize(
    ("db", "reason"),
    [
        (
            "postgresql://farkle@127.0.0.1:1/league",
            "cannot reach the PostgreSQL database postgresql://farkle@127.0.0.1:1",
        ),
        ("postgresql://farkle@db.lan:http/league", "port 'http' is not a number"),
    ],
)
def test_serve_with_a_bad_or_unreachable_url_is_one_line_and_makes_no_folder(
    db: str, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the server started"))
    assert main(["serve", "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and reason in err, err
    assert list(tmp_path.iterdir()) == []  # no folder named "postgresql:", nothing at all
    assert main(["tournament", "standings", "cup", "--db", db]) == 2
    assert reason in capsys.readouterr().err
