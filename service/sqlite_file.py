"""One SQLite file as the service keeps it: one connection, shared by worker threads under a lock.

WAL with full sync (an acknowledged write survives ``kill -9``), foreign keys on, writes in
``BEGIN IMMEDIATE`` transactions, and every SQLite error turned into :class:`StorageError`
naming the file, so the games' store and the tournaments' store open, write and fail alike.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from farklecam.errors import StorageError

__all__ = ["SqliteFile"]


class SqliteFile:
    """An open SQLite file (created with its folder); ``":memory:"`` for a throwaway one.

    Args:
        path: the database file.
        what: what the file holds, for messages (``"game database"``).

    Raises:
        StorageError: the file cannot be created or opened.
    """

    def __init__(self, path: str | Path, what: str) -> None:
        self.path, self.what = str(path), what
        self.lock = threading.RLock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the {what} {self.path}: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` under the lock; any SQLite error becomes :class:`StorageError`."""
        with self.lock:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    yield self.db
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise
                self.db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"{self.what} {self.path}: {exc}") from exc

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """All rows of one statement, under the lock."""
        with self.lock:
            try:
                return self.db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"{self.what} {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the connection (committed data is already on disk)."""
        with self.lock:
            self.db.close()
