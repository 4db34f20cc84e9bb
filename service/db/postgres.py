"""The PostgreSQL engine: psycopg 3 with a connection pool, for any number of server processes on one database.

Each transaction takes a pooled connection for its length; reads on their own run in
autocommit. Durability is the server's: a transaction is committed (with PostgreSQL's
default ``synchronous_commit``, flushed to its WAL) before the store returns, so a
farklecam process killed at any moment loses at most the action it never answered.

Writers of one key (a tournament's sign-up list, the schema) are serialised across
processes by a transaction-scoped advisory lock. A change published in a transaction
is sent with ``pg_notify`` on :data:`~farklecam.service.db.changes.CHANNEL`, which
PostgreSQL delivers to every listening process when (and only if) the transaction
commits; :class:`~farklecam.service.db.listener.PostgresListener` hears them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from farklecam.errors import StorageError
from farklecam.service.db.changes import CHANNEL, Change, Listener, Subscribers
from farklecam.service.db.engine import ConflictError, Rows
from farklecam.service.db.listener import PostgresListener
from farklecam.service.db.target import PostgresTarget

__all__ = ["CONNECT_TIMEOUT", "POOL_SIZE", "PostgresDatabase", "connection_options"]

#: Seconds to wait for the server when connecting (unless the URL says ``connect_timeout``).
CONNECT_TIMEOUT = 10
#: Connections one process keeps (at least one, at most the second number), besides its listening one.
POOL_SIZE = (1, 10)
#: Seconds a request waits for a pooled connection before it fails (503) rather than hang.
POOL_WAIT = 30.0


def connection_options(url: str) -> dict[str, Any]:
    """What every connection is opened with beyond the URL: autocommit, a name the server lists, a timeout."""
    options: dict[str, Any] = {"autocommit": True, "application_name": "farklecam"}
    if "connect_timeout" not in conninfo_to_dict(url):
        options["connect_timeout"] = CONNECT_TIMEOUT
    return options


def one_line(exc: BaseException) -> str:
    """The message of a libpq error on one line (it spreads a refused connection over three)."""
    return " ".join(str(exc).split())


def _sql(text: str) -> str:
    """The stores' ``?`` placeholders as psycopg's ``%s`` (their SQL holds no other ``?`` or ``%``)."""
    return text.replace("?", "%s")


class _PostgresTransaction:
    """The statements of one transaction on one pooled connection (see ``engine.Transaction``)."""

    def __init__(self, connection: psycopg.Connection[Any], location: str) -> None:
        self._connection, self._location = connection, location

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        self.query(sql, params)

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        return run(self._connection, self._location, sql, params)

    def serialize(self, key: str) -> None:
        self.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (f"farklecam:{key}",))

    def publish(self, change: Change) -> None:
        self.query("SELECT pg_notify(?, ?)", (CHANNEL, change.to_payload()))


def run(connection: psycopg.Connection[Any], location: str, sql: str, params: Sequence[object] = ()) -> Rows:
    """One statement's rows on ``connection`` (none for a statement that returns none).

    Raises:
        ConflictError: a unique key is taken.
        StorageError: any other database error, on one line.
    """
    try:
        with connection.cursor() as cursor:
            cursor.execute(_sql(sql), tuple(params) if params else None)
            return cursor.fetchall() if cursor.description is not None else []
    except pg_errors.UniqueViolation as exc:
        raise ConflictError(f"game database {location}: {one_line(exc)}") from exc
    except psycopg.Error as exc:
        raise StorageError(f"game database {location}: {one_line(exc)}") from exc


class PostgresDatabase:
    """A PostgreSQL database through a pool of connections.

    Args:
        target: the database's URL.

    Raises:
        StorageError: the server cannot be reached or refuses the connection (the reason on one line).
    """

    engine: Literal["postgresql"] = "postgresql"

    def __init__(self, target: PostgresTarget) -> None:
        self._url, self.location = target.url, str(target)
        self._options = connection_options(self._url)
        try:  # one plain connection first: libpq's own reason when the server is not there
            psycopg.connect(self._url, **self._options).close()
        except psycopg.Error as exc:
            raise StorageError(f"cannot reach the PostgreSQL database {self.location}: {one_line(exc)}") from None
        self._pool = ConnectionPool(
            self._url,
            min_size=POOL_SIZE[0],
            max_size=POOL_SIZE[1],
            kwargs=self._options,
            timeout=POOL_WAIT,
            check=ConnectionPool.check_connection,  # a connection the server dropped is replaced, not handed out
            name="farklecam",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except PoolTimeout as exc:
            self._pool.close()
            raise StorageError(f"cannot reach the PostgreSQL database {self.location}: {one_line(exc)}") from None
        self._subscribers = Subscribers()
        self._listener: PostgresListener | None = None

    @contextmanager
    def transaction(self) -> Iterator[_PostgresTransaction]:
        """A transaction on a pooled connection, committed when the block ends.

        Raises:
            StorageError: no connection within :data:`POOL_WAIT` seconds, or the commit failed.
        """
        try:
            with self._pool.connection() as connection, connection.transaction():
                yield _PostgresTransaction(connection, self.location)
        except PoolTimeout as exc:
            raise StorageError(f"game database {self.location}: no free connection: {one_line(exc)}") from exc
        except psycopg.Error as exc:  # the commit itself, or a connection lost between statements
            kind = ConflictError if isinstance(exc, pg_errors.UniqueViolation) else StorageError
            raise kind(f"game database {self.location}: {one_line(exc)}") from exc

    def query(self, sql: str, params: Sequence[object] = ()) -> Rows:
        """All rows of one read, in autocommit on a pooled connection."""
        try:
            with self._pool.connection() as connection:
                return run(connection, self.location, sql, params)
        except PoolTimeout as exc:
            raise StorageError(f"game database {self.location}: no free connection: {one_line(exc)}") from exc
        except psycopg.Error as exc:
            raise StorageError(f"game database {self.location}: {one_line(exc)}") from exc

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Tell ``listener`` of every change any process commits from now on (listening starts with the first).

        Raises:
            StorageError: the listening connection cannot be opened.
        """
        if self._listener is None:
            self._listener = PostgresListener(self._url, self._options, self.location, self._subscribers.deliver)
        return self._subscribers.add(listener)

    def check(self) -> None:
        """Nothing to check: the server keeps the data, and each statement reports its own failure."""

    def close(self) -> None:
        """Stop listening and close every connection."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        self._pool.close()
