"""The interface both engines give the stores, and the one way to open either.

The stores write one SQL text for both engines: ``?`` placeholders (the PostgreSQL
engine passes them on as ``%s``), standard types, no engine's extensions. What does differ
between the engines is here as methods: a transaction that serialises writers of one key
across processes (:meth:`Transaction.serialize`), a change published on commit
(:meth:`Transaction.publish`), and the error a taken unique key raises
(:class:`ConflictError`: another writer stored that row first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

from farklecam.errors import StorageError
from farklecam.service.db.changes import Change, Listener
from farklecam.service.db.target import DatabaseTarget, PostgresTarget

__all__ = ["ConflictError", "Database", "Queries", "Rows", "Transaction", "open_database"]

Rows = list[tuple[Any, ...]]


class ConflictError(StorageError):
    """Another writer (another process, perhaps) came first: a row with this key is already stored."""


class Queries(Protocol):
    """What reads: a transaction (inside it) or a database (each read on its own)."""

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        """All rows of one statement.

        Raises:
            StorageError: a database error.
        """


class Transaction(Protocol):
    """Statements that commit together, or not at all."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        """Run one statement.

        Raises:
            ConflictError: it would store a second row under a unique key.
            StorageError: any other database error.
        """

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        """All rows of one statement (raises as :meth:`execute`)."""

    def serialize(self, key: str) -> None:
        """Hold every other transaction that serialises ``key`` off until this one ends, in any process.

        A read-then-write (the next sign-up number, the next round's tables) is then safe
        across servers sharing the database.
        """

    def publish(self, change: Change) -> None:
        """Tell the database's listeners of ``change`` once this transaction commits (never if it does not)."""


class Database(Protocol):
    """An open database, its schema at this code's version."""

    @property
    def engine(self) -> Literal["sqlite", "postgresql"]:
        """``"sqlite"`` or ``"postgresql"``."""

    @property
    def location(self) -> str:
        """Where it is, for messages (a path, or the URL without its password)."""

    def transaction(self) -> AbstractContextManager[Transaction]:
        """A transaction, committed when the block ends and rolled back if it raises.

        Raises:
            StorageError: the commit (or the start) failed.
        """

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        """All rows of one read on its own (raises as :meth:`Transaction.execute`)."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Tell ``listener`` of every change committed from now on; returns what unsubscribes it."""

    def check(self) -> None:
        """Raise :class:`StorageError` where what was opened can no longer keep anything (an SQLite file deleted)."""

    def close(self) -> None:
        """Close every connection (what was committed is kept)."""


def open_database(target: DatabaseTarget) -> Database:
    """Open (creating where needed) the database ``target`` names and bring its schema to this code's version.

    Raises:
        StorageError: it cannot be opened or reached, is not a farklecam database, or is newer than this code.
    """
    from farklecam.service.db.migrate import migrate

    database: Database
    if isinstance(target, PostgresTarget):
        from farklecam.service.db.postgres import PostgresDatabase

        database = PostgresDatabase(target)
    else:
        from farklecam.service.db.sqlite import SqliteDatabase

        database = SqliteDatabase(target.path)
    try:
        migrate(database)
    except BaseException:
        database.close()
        raise
    return database
