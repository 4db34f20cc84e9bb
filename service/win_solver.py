"""Win tables solved in the background, so a customised game's advice turns to the chance to win by itself.

The presets' tables ship solved (:mod:`farklecam.scoring.bundle_tables`); a game whose rules were
changed on the page needs its own, a few seconds to solve, about a minute and a half with a farkle
penalty (:mod:`farklecam.scoring.winprob_dp`). A server answering a frame or a request cannot wait that
long, so :func:`farklecam.service.usecases.scoring.win_block` asks the solver installed here to solve
it and answers by points until the table is there.

One rule set at a time, in a child process at a lower CPU priority (``nice`` 10), so the
tables' frame reads come first; the child writes the table into the disk cache
(:mod:`farklecam.scoring.policy_cache`), where :func:`farklecam.scoring.winprob.ready` finds it.
Rule sets asked for meanwhile wait in a queue, solved in the order asked, the next one
started as soon as a child exits. Every request naming new rules would otherwise queue
minutes of work for free, so the queue is bounded: at most :data:`PER_CLIENT` rule sets
waiting or being solved for one client address, and :data:`QUEUED` waiting in all. Rules
past either bound are refused (:attr:`SolveState.REFUSED`; their advice stays by points)
and may be asked for again once the queue has room. A rule set whose solve failed is not
tried again by this server. ``farklecam serve`` installs a solver
(``Settings.solve_win_tables``); without one, the advice says how to solve the table from
the command line.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from enum import StrEnum

from farklecam.scoring.rules import Rules
from farklecam.service.security import client_address

__all__ = ["PER_CLIENT", "QUEUED", "BackgroundWinSolver", "SolveState", "install", "installed"]

#: How much lower the child's CPU priority is than the server's.
NICENESS = 10
#: Rule sets one client address may have waiting or being solved at once: a table tries a variant or two.
PER_CLIENT = 2
#: Rule sets waiting in all, behind the one being solved (at most 8 x 2 minutes of a farkle penalty's solves).
QUEUED = 8
#: Failed rule sets remembered (so they are not solved again), the oldest forgotten first.
FAILED_KEPT = 256


class SolveState(StrEnum):
    """Where a rule set's win table stands with the background solver."""

    READY = "ready"  # solved: advice by the chance to win
    SOLVING = "solving"  # being solved now
    BUSY = "busy"  # waiting in the queue behind another rule set's solve; it starts by itself
    FAILED = "failed"  # the solve failed (or its table could not be cached): solve it from the command line
    REFUSED = "refused"  # the queue, or this client's share of it, is full: not queued (ask again later)


def _solve(rules: Rules, niceness: int) -> None:
    """The child's work: solve and cache ``rules``' table, at a lower priority."""
    with contextlib.suppress(OSError):
        os.nice(niceness)
    from farklecam.scoring.winprob import solve_win

    solve_win(rules)


@dataclass(frozen=True)
class _Job:
    """One rule set to solve, and the client address that asked for it first."""

    rules: Rules
    key: str
    client: str


class BackgroundWinSolver:
    """Solves one rule set's win table at a time in a child process, the others queued; see the module docstring.

    Args:
        niceness: how much lower the child's CPU priority is.
        per_client: rule sets one client address may have waiting or being solved.
        queued: rule sets that may wait behind the one being solved.
    """

    def __init__(self, niceness: int = NICENESS, per_client: int = PER_CLIENT, queued: int = QUEUED) -> None:
        self._niceness = niceness
        self.per_client, self.queued = per_client, queued
        self._lock = threading.Lock()
        self._child: multiprocessing.process.BaseProcess | None = None
        self._solving: _Job | None = None
        self._queue: deque[_Job] = deque()
        self._failed: OrderedDict[str, None] = OrderedDict()

    def request(self, rules: Rules, client: str | None = None) -> SolveState:
        """Where ``rules``' table stands; queues it (or starts it, when nothing is being solved) if it may.

        Args:
            rules: the rule set whose win table the advice wants.
            client: who asks (an address); None takes the address of the request being answered
                (:func:`farklecam.service.security.client_address`), ``""`` outside one.
        """
        from farklecam.scoring.winprob import ready

        if ready(rules, ()):
            return SolveState.READY
        key = rules.key()
        asker = client if client is not None else client_address() or ""
        with self._lock:
            if self._solving is not None and ready(self._solving.rules, ()):
                self._next()  # its table is cached while its child still exits: the queue need not wait
            if key in self._failed:
                return SolveState.FAILED
            if self._solving is not None and self._solving.key == key:
                return SolveState.SOLVING
            if any(job.key == key for job in self._queue):
                return SolveState.BUSY
            jobs = [*self._queue, *([self._solving] if self._solving is not None else [])]
            if sum(job.client == asker for job in jobs) >= self.per_client:  # not share(): the lock is held
                return SolveState.REFUSED
            job = _Job(rules, key, asker)
            if self._solving is None:
                return SolveState.SOLVING if self._start(job) else SolveState.FAILED
            if len(self._queue) >= self.queued:
                return SolveState.REFUSED
            self._queue.append(job)
            return SolveState.BUSY

    @property
    def waiting(self) -> int:
        """Rule sets queued behind the one being solved."""
        with self._lock:
            return len(self._queue)

    def share(self, client: str) -> int:
        """Rule sets waiting or being solved that ``client`` asked for first (at most :attr:`per_client`)."""
        with self._lock:
            jobs = [*self._queue, *([self._solving] if self._solving is not None else [])]
            return sum(job.client == client for job in jobs)

    def _start(self, job: _Job) -> bool:
        """Start ``job``'s child and a thread that starts the next job when it exits (call under the lock).

        Returns:
            False when no child could be started (no memory or processes left): the rule set counts as failed.
        """
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no locks or threads of the server
        child = context.Process(target=_solve, args=(job.rules, self._niceness), daemon=True, name="win-table")
        try:
            child.start()
        except OSError:
            self._fail(job.key)
            return False
        self._child, self._solving = child, job
        threading.Thread(target=self._after, args=(child,), daemon=True, name="win-table-queue").start()
        return True

    def _fail(self, key: str) -> None:
        """Remember that ``key``'s solve failed (call under the lock)."""
        self._failed[key] = None
        while len(self._failed) > FAILED_KEPT:
            self._failed.popitem(last=False)

    def _after(self, child: multiprocessing.process.BaseProcess) -> None:
        """Wait for ``child`` to exit, note a failed solve, and start the first queued rule set not yet solved.

        A child gone without a cached table failed (or could not write the cache): that rule set is not
        tried again.
        """
        from farklecam.scoring.winprob import ready

        child.join()
        with self._lock:
            if self._child is not child or self._solving is None:  # closed, or moved on once its table was cached
                return
            if not ready(self._solving.rules, ()):
                self._fail(self._solving.key)
            self._next()

    def _next(self) -> None:
        """Let the current solve go and start the first queued rule set not solved yet (call under the lock)."""
        from farklecam.scoring.winprob import ready

        self._child, self._solving = None, None  # a child still exiting is left to its thread to reap
        while self._queue:
            job = self._queue.popleft()
            if not ready(job.rules, ()) and self._start(job):
                return

    def close(self) -> None:
        """Stop a solve in progress and forget the queue (the server is shutting down)."""
        with self._lock:
            child = self._child
            self._child, self._solving = None, None
            self._queue.clear()
        if child is not None and child.is_alive():
            child.terminate()
            child.join(5)


_INSTALLED: BackgroundWinSolver | None = None


def install(solver: BackgroundWinSolver | None) -> None:
    """Make ``solver`` the one advice asks (None: none, the advice says how to solve from the command line)."""
    global _INSTALLED
    _INSTALLED = solver


def installed() -> BackgroundWinSolver | None:
    """The solver advice asks, if the server installed one."""
    return _INSTALLED
