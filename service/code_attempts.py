"""A bound on wrong table codes per address, so guessing a code on the network takes forever.

A code chosen with ``--table-code`` may be as short as six characters; without a
bound a client on the same network could try thousands a second. After
``attempts`` wrong codes from one address within ``window`` seconds, that address
is refused (429) until the oldest of them is ``window`` seconds old. Only wrong
codes count: a page that has not asked for the code yet sends none. The table of
addresses is bounded too, the longest quiet address forgotten first.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["WrongCodeLimit"]


class WrongCodeLimit:
    """Count wrong codes per client address over a sliding window.

    Args:
        attempts: wrong codes allowed per address within ``window``.
        window: seconds a wrong code is remembered.
        clock: monotonic seconds (tests pass their own).
        max_addresses: addresses remembered at most.
    """

    def __init__(
        self,
        attempts: int = 10,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_addresses: int = 1024,
    ) -> None:
        self.attempts, self.window, self.clock, self.max_addresses = attempts, window, clock, max_addresses
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, address: str) -> float:
        """Seconds until ``address`` may try a code again; 0 when it may now."""
        with self._lock:
            failures = self._recent(address)
            if len(failures) < self.attempts:
                return 0.0
            return max(failures[0] + self.window - self.clock(), 0.0)

    def failed(self, address: str) -> None:
        """Record one wrong code from ``address``."""
        with self._lock:
            failures = self._recent(address)
            failures.append(self.clock())
            self._failures[address] = failures
            self._failures.move_to_end(address)
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)

    def _recent(self, address: str) -> deque[float]:
        failures = self._failures.get(address, deque())
        horizon = self.clock() - self.window
        while failures and failures[0] <= horizon:
            failures.popleft()
        return failures
