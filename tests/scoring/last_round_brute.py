"""A deliberately plain last-round calculator, the oracle for farklecam.scoring.last_round.

Plain memoised recursion over the game itself: for each remaining player, each bar
(the best final score so far) and each number of players sharing it, every state of
their turn (turn total, dice) with the set-aside enumerator's keeps. No arrays, no
shared sweeps, no shortcuts between bars. Every player maximises their own chance to
win; leaders tied at the end share it equally.

The same finite game as the solver's: a turn total of ``cut`` units (50 points) or
more ends the turn at once, banked, and counts as exactly ``cut`` (the mover's cut
counts from the total they already hold; a passed total counts at most ``cut``). The same conventions where a player is
indifferent: a bank worth at least throwing on (and worth something) is taken; among
equally good keeps the one with the most points, then the most dice left; a pass
(piggyback) is taken only when strictly better.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides

STEP = 50


class Worth(NamedTuple):
    own: float  # the chance of the player whose turn it is
    lead: float  # what one of the players leading at the bar is worth


class Brute:
    """The exact chances of the mover's plays in the last round that ``scores`` (turn order) describe."""

    def __init__(self, rules: Rules, scores: list[int], turn_total: int, cut: int, on_board: bool | None = None):
        self.rules = rules
        goal = rules.target
        trigger = next(k for k in range(1, len(scores)) if scores[k] >= goal)
        self.bases = [s // STEP for s in scores[:trigger]]  # the mover, then those still to play
        self.best = max(scores[1:]) // STEP
        self.leaders = scores[1:].count(max(scores[1:]))
        self.now = turn_total // STEP
        self.cuts = [self.now + cut] + [cut] * (len(self.bases) - 1)
        mover_on = scores[0] > 0 if on_board is None else on_board
        self.bmins = [self._bmin(mover_on)] + [self._bmin(s > 0) for s in scores[1:trigger]]
        self.throws = {n: self._rows(n) for n in range(1, rules.dice + 1)}
        self.q = sum(p for p, keeps in self.throws[1] if not keeps)

    def _bmin(self, on_board: bool) -> int:
        return -(-self.rules.bank_minimum(on_board) // STEP)

    def _rows(self, n: int) -> list[tuple[float, list[tuple[int, int]]]]:
        rows = []
        for roll, p in roll_outcomes(n):
            keeps = {(o.points // STEP, 0 if o.hot_dice else o.dice_left) for o in legal_set_asides(roll, self.rules)}
            rows.append((float(p), sorted(keeps)))
        return rows

    # ------------------------------------------------------------------ the mover's plays
    def bank(self, total: int, dice_left: int) -> float | None:
        """Chance to win banking ``total`` points now with ``dice_left`` dice left (None: not allowed)."""
        t = total // STEP
        if t < self.bmins[0] or (dice_left == 0 and self.rules.must_roll_after_hot_dice):
            return None
        return self._bank(0, self.best, self.leaders, t, dice_left).own

    def roll(self, total: int, dice_left: int) -> float:
        """Chance to win throwing on with ``total`` points set aside and ``dice_left`` left (0: all dice)."""
        t = total // STEP
        if t >= self.cuts[0]:  # the turn banks at once
            return self._decide(0, self.best, self.leaders, t, dice_left).own
        return self._throw(0, self.best, self.leaders, t, self.rules.dice if dice_left == 0 else dice_left).own

    # ------------------------------------------------------------------ the game
    @cache  # noqa: B019 - one oracle per test case
    def after(self, j: int, bar: int, c: int, passed: tuple[int, int] | None) -> float:
        """A leader's worth (one of ``c`` at ``bar``) when player ``j`` is about to start (past the last: 1/c)."""
        if j == len(self.bases):
            return 1.0 / c
        if bar - self.bases[j] > self.cuts[j]:  # a total counts at most the cut: out of reach, they fail
            return self.after(j + 1, bar, c, None)
        fresh = self._throw(j, bar, c, 0, self.rules.dice)
        if passed is not None:
            total, dice = passed
            taken = self._throw(j, bar, c, min(total, self.cuts[j]), dice)  # a pass counts at most the cut
            if taken.own > fresh.own:
                return taken.lead
        return fresh.lead

    def _bank(self, j: int, bar: int, c: int, t: int, m: int) -> Worth:
        counted = min(t, self.cuts[j])
        y = self.bases[j] + counted
        passed = (counted, self.rules.dice if m == 0 else m) if self.rules.piggyback else None
        if y > bar:
            if self.rules.exact_target:
                return Worth(0.0, self.after(j + 1, bar, c, None))
            return Worth(self.after(j + 1, y, 1, passed), 0.0)
        if y == bar:
            share = self.after(j + 1, bar, c + 1, passed)
            return Worth(share, share)
        return Worth(0.0, self.after(j + 1, bar, c, None))

    @cache  # noqa: B019
    def _decide(self, j: int, bar: int, c: int, t: int, m: int) -> Worth:
        """After a keep: bank where allowed and worth it, else throw on."""
        if t >= self.cuts[j]:
            return self._bank(j, bar, c, t, m)
        n = self.rules.dice if m == 0 else m
        on = self._throw(j, bar, c, t, n)
        allowed = t >= self.bmins[j] and not (m == 0 and self.rules.must_roll_after_hot_dice)
        if allowed:
            banked = self._bank(j, bar, c, t, m)
            if banked.own > 0.0 and banked.own >= on.own:
                return banked
        return on

    @cache  # noqa: B019
    def _throw(self, j: int, bar: int, c: int, t: int, n: int) -> Worth:
        """Throw ``n`` dice at turn total ``t``; a single die may be thrown up to ``single_die_throws`` times."""
        own = lead = 0.0
        fail = self.after(j + 1, bar, c, None)
        for p, keeps in self.throws[n]:
            if not keeps:
                continue
            best: Worth | None = None
            for points, left in keeps:
                option = self._decide(j, bar, c, t + points, left)
                if best is None or option.own >= best.own:
                    best = option
            assert best is not None
            own += p * best.own
            lead += p * best.lead
        if n == 1:
            tries = self.rules.single_die_throws
            weight = sum(self.q**i for i in range(tries))
            return Worth(own * weight, lead * weight + self.q**tries * fail)
        miss = sum(p for p, keeps in self.throws[n] if not keeps)
        return Worth(own, lead + miss * fail)
