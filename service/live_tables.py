"""Which server a table's camera streams to: one row per live table, in the games' database.

A table's live state (the settle detector, the marked tray, the learned vertical) lives in the
one ``farklecam serve`` process its camera page is connected to; games and tournaments are
shared by every process on the database. The organiser page, served by any of them, says where
each table's camera is, so an organiser knows which machine to look at, and which tables to
reopen elsewhere when one stops.

Each stream claims its game's row when it opens (``server`` names the process:
``serve --name``, by default ``HOST:PORT``), refreshes ``seen`` while frames arrive (at most
every :data:`TOUCH_SECONDS`) and deletes the row when it closes. A server killed mid-round
deletes nothing: its rows go stale, and :meth:`LiveTables.where` treats a row not seen for
:data:`STALE_SECONDS` as no camera. A second stream to the same game takes the row over.
Each claim and release is announced as a ``stream`` change (:class:`~farklecam.service.db.changes.Change`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from farklecam.service.db.changes import Change
from farklecam.service.db.engine import Database, Queries

__all__ = ["STALE_SECONDS", "TOUCH_SECONDS", "LiveTable", "LiveTables", "live_cameras"]

#: How often a stream refreshes its row while frames arrive.
TOUCH_SECONDS = 5.0
#: A row not refreshed for this long is a camera gone (its server stopped or lost the database).
STALE_SECONDS = 20.0


@dataclass(frozen=True, slots=True)
class LiveTable:
    """A table's camera: the server it streams to, since when, and when a frame last arrived."""

    server: str
    since: float
    seen: float

    def to_dict(self) -> dict[str, Any]:
        """JSON form (times in seconds since the epoch)."""
        return {"server": self.server, "since": self.since, "seen": self.seen}


class LiveTables:
    """The live tables' rows for one server process.

    Args:
        db: the games' database.
        server: this process's name, shown on the organiser page.
        clock: seconds since the epoch (tests pass their own).
    """

    def __init__(self, db: Database, server: str, clock: Callable[[], float] = time.time) -> None:
        self.db, self.server, self._clock = db, server, clock
        self._touched: dict[str, float] = {}

    def claim(self, game_id: str) -> None:
        """This server streams ``game_id``'s camera from now on (taking it over from any other)."""
        now = self._clock()
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM live_tables WHERE game_id = ?", (game_id,))
            tx.execute(
                "INSERT INTO live_tables (game_id, server, since, seen) VALUES (?, ?, ?, ?)",
                (game_id, self.server, now, now),
            )
            tx.publish(Change("stream", game_id))
        self._touched[game_id] = now

    def touch(self, game_id: str) -> None:
        """A frame arrived: refresh the row if it was last refreshed :data:`TOUCH_SECONDS` ago or more."""
        now = self._clock()
        if now - self._touched.get(game_id, 0.0) < TOUCH_SECONDS:
            return
        with self.db.transaction() as tx:
            tx.execute("UPDATE live_tables SET seen = ? WHERE game_id = ? AND server = ?", (now, game_id, self.server))
        self._touched[game_id] = now

    def release(self, game_id: str) -> None:
        """This server's stream of ``game_id`` closed (a row another server took over is left alone)."""
        self._touched.pop(game_id, None)
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM live_tables WHERE game_id = ? AND server = ?", (game_id, self.server))
            tx.publish(Change("stream", game_id))

    def where(self, game_ids: Iterable[str]) -> dict[str, LiveTable]:
        """The live camera of each of ``game_ids`` that has one (:func:`live_cameras`)."""
        return live_cameras(self.db, game_ids, self._clock())


def live_cameras(db: Queries, game_ids: Iterable[str], now: float | None = None) -> dict[str, LiveTable]:
    """Where each of ``game_ids`` that has a live camera streams to (rows not seen lately are left out).

    Raises:
        StorageError: the database cannot be read.
    """
    wanted = list(dict.fromkeys(game_ids))
    if not wanted:
        return {}
    marks = ", ".join("?" for _ in wanted)
    rows = db.query(
        f"SELECT game_id, server, since, seen FROM live_tables WHERE game_id IN ({marks}) AND seen >= ?",
        (*wanted, (time.time() if now is None else now) - STALE_SECONDS),
    )
    return {game_id: LiveTable(server, since, seen) for game_id, server, since, seen in rows}
