"""One SQLite file as the service keeps it: one connection, shared by worker threads under a lock.

WAL with full sync (an acknowledged write survives ``kill -9``), foreign keys on, writes in
``BEGIN IMMEDIATE`` transactions, and every SQLite error turned into :class:`StorageError`
naming the file, so the games' store and the tournaments' store open, write and fail alike.

An open connection keeps writing to the file it opened even after that file is deleted,
or another file is moved to its name: SQLite goes on answering, every write lands in a
file no one will open again, and the games are gone at the next start. So each statement
first checks that the path still names the file that was opened (its device and inode);
where it does not, it raises :class:`StorageError` (the service answers 503) instead of
pretending to keep anything.
"""

from __future__ import annotations

import os
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
        self._identity = self._stat()  # the WAL pragma wrote the header: the file exists now

    def _stat(self) -> tuple[int, int] | None:
        """The file's (device, inode) now; None for an in-memory database or a file that is gone."""
        if self.path == ":memory:":
            return None
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def check(self) -> None:
        """Make sure the path still names the file this connection writes to.

        Raises:
            StorageError: the file was deleted, moved away, or replaced by another file since it was opened.
        """
        if self._identity is None:
            return
        now = self._stat()
        if now == self._identity:
            return
        what = "deleted or moved away" if now is None else "replaced by another file"
        raise StorageError(
            f"the {self.what} {self.path} was {what} while the server was running, so nothing can be kept there: "
            "put the file back, or restart the server to use the file at that path (a new one if there is none)"
        )

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` under the lock; any SQLite error becomes :class:`StorageError`.

        Raises:
            StorageError: an SQLite error, or the file is no longer the one opened (:meth:`check`).
        """
        with self.lock:
            self.check()
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
        """All rows of one statement, under the lock.

        Raises:
            StorageError: an SQLite error, or the file is no longer the one opened (:meth:`check`).
        """
        with self.lock:
            self.check()
            try:
                return self.db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"{self.what} {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the connection (committed data is already on disk)."""
        with self.lock:
            self.db.close()
