"""Win tables solved in the background, so a customised game's advice turns to the chance to win by itself.

The presets' tables ship solved (:mod:`farklecam.scoring.bundle_tables`); a game whose rules were
changed on the page needs its own, a few seconds to solve, about two minutes with a farkle
penalty (:mod:`farklecam.scoring.winprob_dp`). A server answering a frame or a request cannot wait that
long, so :func:`farklecam.service.usecases.scoring.win_block` asks the solver installed here to solve
it and answers by points until the table is there.

One rule set at a time, in a child process at a lower CPU priority (``nice`` 10), so the
tables' frame reads come first; the child writes the table into the disk cache
(:mod:`farklecam.scoring.policy_cache`), where :func:`farklecam.scoring.winprob.ready` finds it. A rule set whose
solve failed is not tried again by this server. ``farklecam serve`` installs a solver
(``Settings.solve_win_tables``); without one, the advice says how to solve the table from
the command line.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from enum import StrEnum

from farklecam.scoring.rules import Rules

__all__ = ["BackgroundWinSolver", "SolveState", "install", "installed"]

#: How much lower the child's CPU priority is than the server's.
NICENESS = 10


class SolveState(StrEnum):
    """Where a rule set's win table stands with the background solver."""

    READY = "ready"  # solved: advice by the chance to win
    SOLVING = "solving"  # being solved now
    BUSY = "busy"  # another rule set's table is being solved; ask again later
    FAILED = "failed"  # the solve failed (or its table could not be cached): solve it from the command line


def _solve(rules: Rules, niceness: int) -> None:
    """The child's work: solve and cache ``rules``' table, at a lower priority."""
    with contextlib.suppress(OSError):
        os.nice(niceness)
    from farklecam.scoring.winprob import solve_win

    solve_win(rules)


class BackgroundWinSolver:
    """Solves one rule set's win table at a time in a child process; see the module docstring.

    Args:
        niceness: how much lower the child's CPU priority is.
    """

    def __init__(self, niceness: int = NICENESS) -> None:
        self._niceness = niceness
        self._lock = threading.Lock()
        self._child: multiprocessing.process.BaseProcess | None = None
        self._solving: Rules | None = None
        self._failed: set[str] = set()

    def request(self, rules: Rules) -> SolveState:
        """Where ``rules``' table stands; starts solving it when nothing else is being solved."""
        from farklecam.scoring.winprob import ready

        if ready(rules, ()):
            return SolveState.READY
        key = rules.key()
        with self._lock:
            self._settle()
            if key in self._failed:
                return SolveState.FAILED
            if self._child is not None and self._solving is not None:
                return SolveState.SOLVING if self._solving.key() == key else SolveState.BUSY
            context = multiprocessing.get_context("spawn")  # a fresh interpreter: no locks or threads of the server
            self._child = context.Process(target=_solve, args=(rules, self._niceness), daemon=True, name="win-table")
            self._child.start()
            self._solving = rules
            return SolveState.SOLVING

    def _settle(self) -> None:
        """Forget a finished solve: its table is cached (its child may still be exiting), or its child is gone.

        A child gone without a cached table failed (or could not write the cache): that rule set is not tried again.
        """
        from farklecam.scoring.winprob import ready

        child, rules = self._child, self._solving
        if child is None or rules is None:
            return
        solved = ready(rules, ())
        if child.is_alive() and not solved:
            return
        if not solved:
            self._failed.add(rules.key())
        self._child, self._solving = None, None  # a child still exiting is reaped when the next one starts

    def close(self) -> None:
        """Stop a solve in progress (the server is shutting down)."""
        with self._lock:
            if self._child is not None and self._child.is_alive():
                self._child.terminate()
                self._child.join(5)
            self._child, self._solving = None, None


_INSTALLED: BackgroundWinSolver | None = None


def install(solver: BackgroundWinSolver | None) -> None:
    """Make ``solver`` the one advice asks (None: none, the advice says how to solve from the command line)."""
    global _INSTALLED
    _INSTALLED = solver


def installed() -> BackgroundWinSolver | None:
    """The solver advice asks, if the server installed one."""
    return _INSTALLED
