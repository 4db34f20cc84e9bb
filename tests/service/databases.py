"""The databases the storage tests run on: an SQLite file, and a PostgreSQL server where one is given.

The PostgreSQL half runs against a real server whose URL is in ``FARKLECAM_TEST_POSTGRES``
(``scripts/test.sh`` starts a throwaway one with ``scripts/postgres.sh`` and sets it); without
it those tests skip, saying so. Each test gets a schema of its own on that server, named in
the URL's ``search_path``, and dropped afterwards, so tests never see each other's games.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest

from farklecam.service.db.target import DatabaseTarget, PostgresTarget, SqliteTarget

ENV = "FARKLECAM_TEST_POSTGRES"
ENGINES = ("sqlite", "postgresql")
NO_SERVER = f"no PostgreSQL server for the storage tests: set {ENV} to its URL (bash scripts/postgres.sh starts one)"


def postgres_url() -> str:
    """The test server's URL, or a skip with the reason."""
    url = os.environ.get(ENV, "").strip()
    if not url:
        pytest.skip(NO_SERVER)
    return url


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL whose tables live in a new, empty schema of the test server (dropped at the end)."""
    import psycopg

    base = postgres_url()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in base else "?"
    try:
        yield f"{base}{joiner}options={quote(f'-c search_path={schema}')}"
    finally:
        with psycopg.connect(base, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def database_target(engine: str, folder: Path) -> Iterator[DatabaseTarget]:
    """A fresh, empty database of ``engine``: a file in ``folder``, or a schema on the test server."""
    if engine == "sqlite":
        yield SqliteTarget(folder / "games.sqlite3")
        return
    with postgres_schema() as url:
        yield PostgresTarget(url)
