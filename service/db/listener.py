"""Hear the changes other processes commit to a PostgreSQL database: one ``LISTEN`` connection and its thread.

PostgreSQL sends each ``NOTIFY`` of a committed transaction to every connection
listening on the channel, the sender's too. Where the listening connection drops, the
notifications sent meanwhile are lost, so the thread tells its listeners ``None``
(forget what you hold) and listens again, waiting a little longer after each failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from farklecam.errors import StorageError
from farklecam.service.db.changes import CHANNEL, Change

__all__ = ["PostgresListener"]

log = logging.getLogger("farklecam.service")

#: Seconds between two looks at whether to stop (also the longest :meth:`PostgresListener.close` waits for it).
POLL = 0.25
#: Seconds to wait before listening again after the connection dropped: the first time, and at most.
RETRY = (0.5, 10.0)


class PostgresListener:
    """A thread that passes each change heard on :data:`CHANNEL` to ``deliver``.

    Args:
        url: the database's URL.
        options: the connection's options (as the pool's).
        location: the URL without its password, for messages.
        deliver: called with each change, or None after the connection dropped.

    Raises:
        StorageError: the first connection cannot be opened (later failures are retried).
    """

    def __init__(
        self, url: str, options: dict[str, Any], location: str, deliver: Callable[[Change | None], None]
    ) -> None:
        self._url, self._options, self._location, self._deliver = url, options, location, deliver
        self._stop = threading.Event()
        try:
            self._connection: psycopg.Connection[Any] | None = self._listen()
        except psycopg.Error as exc:
            raise StorageError(f"cannot listen for changes on {location}: {' '.join(str(exc).split())}") from None
        self._thread = threading.Thread(target=self._run, name="farklecam-changes", daemon=True)
        self._thread.start()

    def _listen(self) -> psycopg.Connection[Any]:
        connection = psycopg.connect(self._url, **self._options)
        try:
            connection.execute(f"LISTEN {CHANNEL}")
        except BaseException:
            connection.close()
            raise
        return connection

    def _run(self) -> None:
        wait = RETRY[0]
        while not self._stop.is_set():
            try:
                if self._connection is None:
                    self._connection = self._listen()
                    self._deliver(None)  # whatever was sent while no one listened is lost
                    wait = RETRY[0]
                for note in self._connection.notifies(timeout=POLL):
                    change = Change.from_payload(note.payload)
                    if change is not None:
                        self._deliver(change)
            except psycopg.Error as exc:
                reason = " ".join(str(exc).split())
                log.warning("farklecam: lost the change feed of %s (%s); listening again", self._location, reason)
                self._drop()
                self._deliver(None)
                self._stop.wait(wait)
                wait = min(wait * 2, RETRY[1])
        self._drop()

    def _drop(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None

    def close(self) -> None:
        """Stop listening (within :data:`POLL` seconds) and close the connection."""
        self._stop.set()
        self._thread.join(timeout=POLL * 20)
