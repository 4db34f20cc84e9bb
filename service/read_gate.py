"""The server's reads gate: a few reads at a time, the reading a table waits for first.

Every decode and every model read on the server passes this gate, so at most
``capacity`` of them run at once and the CPU is not oversubscribed. Which waiting
read goes next matters when many tables stream at once:

* **urgent** reads are those a table is waiting on to report a throw: its dice are
  still and no throw is held, so each read brings the settled answer nearer
  (:attr:`farklecam.vision.settle.detector.SettleDetector.settling`). Uploads to
  ``/api/read`` are urgent too: a person waits for each;
* **routine** reads recheck dice already reported (a held throw, an empty tray).

Urgent waiters go before routine ones; within each, first come, first served. A
table's stream keeps one frame in flight (its WebSocket handler reads one message
at a time), so a busy table holds at most one place in the line and cannot starve
the others. Urgency travels with the thread that reads (:func:`urgency`), so the
reader and the settle layer below need not know about it.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ReadGate", "urgency"]

_URGENT: contextvars.ContextVar[bool] = contextvars.ContextVar("farklecam_read_urgent", default=True)


@contextmanager
def urgency(urgent: bool) -> Iterator[None]:
    """Mark the reads this thread makes inside the block as urgent or routine (default: urgent)."""
    token = _URGENT.set(urgent)
    try:
        yield
    finally:
        _URGENT.reset(token)


class ReadGate:
    """At most ``capacity`` holders at once; waiters served urgent first, then in order of arrival.

    Args:
        capacity: how many may hold the gate at once (at least 1).

    Raises:
        ValueError: a capacity below 1.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a reads gate holds at least 1, got {capacity}")
        self.capacity = capacity
        self._held = 0
        self._waiting: list[tuple[int, int]] = []  # (0 urgent / 1 routine, ticket), kept sorted
        self._tickets = itertools.count()
        self._changed = threading.Condition()

    @contextmanager
    def turn(self, urgent: bool | None = None) -> Iterator[None]:
        """Hold the gate for the block; ``urgent`` None reads the thread's :func:`urgency`."""
        self.acquire(_URGENT.get() if urgent is None else urgent)
        try:
            yield
        finally:
            self.release()

    def __enter__(self) -> None:
        self.acquire(_URGENT.get())

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self, urgent: bool = True) -> None:
        """Wait for a place: free, and no waiter ahead by urgency or arrival."""
        place = (0 if urgent else 1, next(self._tickets))
        with self._changed:
            self._waiting.append(place)
            self._waiting.sort()
            try:
                self._changed.wait_for(lambda: self._held < self.capacity and self._waiting[0] == place)
            finally:
                self._waiting.remove(place)
            self._held += 1
            self._changed.notify_all()  # the next in line may fit as well

    def release(self) -> None:
        """Give the place back.

        Raises:
            RuntimeError: released more often than acquired.
        """
        with self._changed:
            if self._held == 0:
                raise RuntimeError("the reads gate was released more often than it was held")
            self._held -= 1
            self._changed.notify_all()

    @property
    def waiting(self) -> int:
        """How many wait for a place now."""
        with self._changed:
            return len(self._waiting)
