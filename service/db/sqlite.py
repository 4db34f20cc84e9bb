"""The SQLite engine: one file, one connection shared by the worker threads under a lock.

WAL with full sync (an acknowledged write survives ``kill -9``), foreign keys on, writes in
``BEGIN IMMEDIATE`` transactions (which also serialise writers across processes, so
:meth:`Transaction.serialize` has nothing to add), and every SQLite error turned into
:class:`~farklecam.errors.StorageError` naming the file.

An open connection keeps writing to the file it opened even after that file is deleted,
or another file is moved to its name: SQLite goes on answering, every write lands in a
file no one will open again, and the games are gone at the next start. So each statement
first checks that the path still names the file that was opened (its device and inode);
where it does not, it raises :class:`StorageError` (the service answers 503) instead of
pretending to keep anything.

Changes are told to this process's subscribers after each commit: an SQLite file is
served by one process, so there is no one else to tell.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal

from farklecam.errors import StorageError
from farklecam.service.db.changes import Change, Listener, Subscribers
from farklecam.service.db.engine import ConflictError, Rows

__all__ = ["SqliteDatabase"]

#: The extended result codes of a taken key (``sqlite3.Error.sqlite_errorname``).
_TAKEN = ("SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE")


class _SqliteTransaction:
    """The statements of one ``BEGIN IMMEDIATE`` ... ``COMMIT`` (see ``engine.Transaction``)."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._database = database
        self.changes: list[Change] = []

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        self._database.run(sql, params)

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        return self._database.run(sql, params)

    def serialize(self, key: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already holds every other writer off."""

    def publish(self, change: Change) -> None:
        self.changes.append(change)


class SqliteDatabase:
    """An open SQLite file (created with its folder); ``":memory:"`` for a throwaway one.

    Args:
        path: the database file.

    Raises:
        StorageError: the file cannot be created or opened.
    """

    engine: Literal["sqlite"] = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.location = str(path)
        self.lock = threading.RLock()
        self._subscribers = Subscribers()
        try:
            if self.location != ":memory:":
                Path(self.location).parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.location, check_same_thread=False, isolation_level=None, timeout=10)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"cannot open the game database {self.location}: {exc}") from exc
        self._identity = self._stat()  # the WAL pragma wrote the header: the file exists now

    def _stat(self) -> tuple[int, int] | None:
        """The file's (device, inode) now; None for an in-memory database or a file that is gone."""
        if self.location == ":memory:":
            return None
        try:
            found = os.stat(self.location)
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
            f"the game database {self.location} was {what} while the server was running, so nothing can be kept "
            "there: put the file back, or restart the server to use the file at that path (a new one if there is none)"
        )

    def run(self, sql: str, params: Sequence[object] = ()) -> Rows:
        """One statement's rows, under the lock (inside a transaction or on its own).

        Raises:
            ConflictError: a unique key is taken.
            StorageError: any other SQLite error, or the file is no longer the one opened (:meth:`check`).
        """
        with self.lock:
            self.check()
            try:
                return self.db.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                kind = ConflictError if getattr(exc, "sqlite_errorname", "") in _TAKEN else StorageError
                raise kind(f"game database {self.location}: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[_SqliteTransaction]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` under the lock, then the changes told to the subscribers.

        Raises:
            StorageError: an SQLite error, or the file is no longer the one opened (:meth:`check`).
        """
        tx = _SqliteTransaction(self)
        with self.lock:
            self.run("BEGIN IMMEDIATE")
            try:
                yield tx
                self.run("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):  # a closed connection has nothing to roll back
                    if self.db.in_transaction:  # a failed COMMIT (a busy file) leaves it open too
                        self.db.execute("ROLLBACK")
                raise
        for change in tx.changes:
            self._subscribers.deliver(change)

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        """All rows of one statement (see :meth:`run`)."""
        return self.run(sql, params)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Tell ``listener`` of the changes this process commits from now on."""
        return self._subscribers.add(listener)

    def close(self) -> None:
        """Close the connection (committed data is already on disk)."""
        with self.lock:
            self.db.close()
