"""What a commit changed, said to every process that keeps the same database.

A :class:`Change` names one game (with how many events it has now), one tournament, or one
game's live camera stream (opened or closed on some server).
Stores publish one inside the transaction that makes it; the engine delivers it once that
transaction commits: PostgreSQL with ``NOTIFY`` to every listening process (this one too),
SQLite to this process's subscribers (an SQLite file has one serving process). A listener
given ``None`` may have missed changes (its connection to the server dropped), so it must
forget whatever it holds from the database.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["CHANNEL", "Change", "Listener", "Subscribers"]

log = logging.getLogger("farklecam.service")

#: The PostgreSQL ``NOTIFY`` channel every farklecam process listens on.
CHANNEL = "farklecam_changes"


@dataclass(frozen=True, slots=True)
class Change:
    """One game, tournament or table's camera stream changed.

    Attributes:
        kind: ``"game"``, ``"tournament"`` or ``"stream"`` (a game's camera stream opened or closed).
        key: the game's id or the tournament's name.
        events: for a game, its event count after the change (a process holding fewer is behind); else 0.
    """

    kind: Literal["game", "tournament", "stream"]
    key: str
    events: int = 0

    def to_payload(self) -> str:
        """The ``NOTIFY`` payload (a few dozen bytes; PostgreSQL takes up to 8000)."""
        return json.dumps({"kind": self.kind, "key": self.key, "events": self.events}, separators=(",", ":"))

    @classmethod
    def from_payload(cls, text: str) -> Change | None:
        """The change a payload names; None for one this code does not know (a newer process's, say)."""
        try:
            data = json.loads(text)
            kind, key, events = data["kind"], data["key"], data["events"]
        except (ValueError, TypeError, KeyError):
            return None
        if kind not in ("game", "tournament", "stream") or not isinstance(key, str) or type(events) is not int:
            return None
        return cls(kind, key, events)

    def to_dict(self) -> dict[str, object]:
        """The change as JSON data (what a client following changes is sent)."""
        return {"kind": self.kind, "key": self.key, "events": self.events}


#: Called with each change, or with None where changes may have been missed. It runs on the thread that
#: delivers (a commit's, or the PostgreSQL listener's), so it must be quick and must not touch the database.
Listener = Callable[[Change | None], None]


class Subscribers:
    """The listeners of one database, each told of every change; one listener's failure is logged, not spread."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._guard = threading.Lock()

    def add(self, listener: Listener) -> Callable[[], None]:
        """Subscribe ``listener``; returns what unsubscribes it."""
        with self._guard:
            self._listeners.append(listener)

        def remove() -> None:
            with self._guard:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def __len__(self) -> int:
        with self._guard:
            return len(self._listeners)

    def deliver(self, change: Change | None) -> None:
        """Tell every listener of ``change``."""
        with self._guard:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change)
            except Exception:  # a broken listener must not keep the others, or the committer, from going on
                log.exception("a change listener failed on %s", change)
