"""The numeric core of the last round: each remaining turn as a one-turn DP with known stakes (numpy, numba).

Everything here is internal to :mod:`farklecam.scoring.last_round`, which states the model
in players' words; this module holds the arrays and the compiled sweeps.

Units are 50 points. A player's turn is a DP over ``(turn total t, dice)`` as in
:mod:`farklecam.scoring.turn_dp`; what changes is the worth of a bank. The final score
``base + t`` is compared with the *bar*, the best final score so far, ``need`` units
above the player's base: above it the player leads alone, on it they share the lead,
below it they have lost. Next to the player's own chance each sweep carries what one
of the players leading at the bar (a *leader*) is worth under the player's choices.

The states above the bar do not depend on the bar (:func:`above`: the own chance and
the chance the turn still ends in a farkle); only those at or below it are swept per
bar (:func:`bars`, :func:`below`).

The cut: a turn total of ``cut`` units or more ends the turn at once, banked, and
counts as exactly ``cut`` (a passed total too counts at most ``cut``). :func:`cut_units`
puts it where one turn reaches it with a chance below :data:`TAIL`, so no chance moves
by more than about that; it keeps every array finite and a bar more than ``cut`` above
a player's base out of their reach.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numba
import numpy as np

from farklecam.scoring import winprob_dp
from farklecam.scoring.rules import Rules

STEP = winprob_dp.STEP
#: The cut is a turn total that one turn reaches with a smaller chance than this.
TAIL = 1e-13


@dataclass(frozen=True)
class Throws:
    """One rule set's chance node for the sweeps (rows merged by the keeps they offer; every keep kept)."""

    dice: int
    pts: Any  # (options,) points of each keep, units
    nxt: Any  # (options,) dice left after it (0: hot dice)
    row_start: Any  # (rows + 1,) each row's first option
    row_size: Any  # (rows,) dice thrown
    row_prob: Any  # (rows,) chance of the row when throwing that many dice
    pf: Any  # (dice + 1,) chance a throw of n dice scores nothing
    max_pts: int
    g1: float  # a single die thrown up to ``single_die_throws`` times: weight of one throw's success part
    miss: float  # and the chance every one of those throws misses


@lru_cache(maxsize=8)
def throws_for(rules: Rules) -> Throws:
    """The chance node of ``rules`` (memoised per rule set)."""
    chance = winprob_dp.chance_for(replace(rules, last_round=True))  # every keep: values need not grow with t
    q = float(chance.pf[1])
    k = rules.single_die_throws
    return Throws(
        dice=rules.dice,
        pts=chance.pts.astype(np.int64),
        nxt=chance.nxt.astype(np.int64),
        row_start=chance.row_start.astype(np.int64),
        row_size=chance.row_size.astype(np.int64),
        row_prob=chance.row_prob.astype(float),
        pf=chance.pf.astype(float),
        max_pts=int(chance.max_pts),
        g1=sum(q**i for i in range(k)),
        miss=q**k,
    )


@lru_cache(maxsize=8)
def cut_units(rules: Rules) -> int:
    """Smallest turn total (units, past every bank minimum) that one turn reaches with a chance below TAIL."""
    chance = winprob_dp.chance_for(replace(rules, last_round=True))
    floor = -(-max(rules.bank_minimum(False), rules.bank_minimum(True)) // STEP) + 1
    length = 64
    while True:
        reach, _ = winprob_dp.reach_values(rules, chance, length, "reach")
        below_tail = np.nonzero(reach[1:] < TAIL)[0]
        if below_tail.size:
            return max(int(below_tail[0]) + 1, floor)
        length *= 2


@dataclass(frozen=True)
class Player:
    """One turn to sweep: the base score and bank minimum (units), and the cut of this turn (units of turn total)."""

    base: int
    bmin: int
    cut: int

    def sizes(self, throws: Throws) -> tuple[int, int]:
        """``(span, top)``: throw states cover totals ``0..span-1``, states after a keep ``0..top-1``."""
        return self.cut + 1, self.cut + 1 + throws.max_pts


def above(throws: Throws, player: Player, must_roll: bool, bank: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The player's turn where every state is past the bar: bank (own chance ``bank[t, m]``) or throw on.

    Returns ``(dec, w, dec_far, w_far, s1)``: the own chance after a keep (``dec[t, m]``,
    ``m`` dice left, 0: hot dice) and of a throw of ``n`` dice (``w[t, n]``), the chance the
    turn still ends in a farkle from there, and the success part of one single-die throw.
    """
    span, top = player.sizes(throws)
    dec, dec_far = np.zeros((top, throws.dice)), np.zeros((top, throws.dice))
    w, w_far, s1 = np.zeros((span, throws.dice + 1)), np.zeros((span, throws.dice + 1)), np.zeros(span)
    _sweep_above(
        throws.pts, throws.nxt, throws.row_start, throws.row_size, throws.row_prob, throws.pf, throws.dice,
        throws.g1, throws.miss, player.bmin, player.cut, must_roll, np.ascontiguousarray(bank), dec, w, dec_far,
        w_far, s1,
    )  # fmt: skip
    return dec, w, dec_far, w_far, s1


@dataclass
class Bars:
    """Per-bar inputs and outputs of :func:`bars` (one row per bar)."""

    need: Any  # (k,) bar minus base (units, at most the cut): totals above it lead, on it tie
    tie: Any  # (k, dice) own chance of banking on the bar with m dice left (a leader's worth then too)
    fail: Any  # (k,) a leader's worth if this player fails
    start_t: Any  # (k, s) turn total of each start state to read (a throw)
    start_n: Any  # (k, s) dice thrown there
    own: Any  # (k, s) out: the player's own chance from each start
    lead: Any  # (k, s) out: a leader's worth from each start


def bars(throws: Throws, player: Player, must_roll: bool, exact: bool, up: tuple[Any, ...], rows: Bars) -> None:
    """Sweep the states at or below each bar; fill ``rows.own`` and ``rows.lead``.

    ``up`` is what :func:`above` returned. With ``exact`` (an exact target) ending past
    the bar is a loss for the player and worth ``fail`` to a leader.
    """
    dec, w, dec_far, w_far, _ = up
    _sweep_bars(
        throws.pts, throws.nxt, throws.row_start, throws.row_size, throws.row_prob, throws.pf, throws.dice,
        throws.g1, throws.miss, player.bmin, player.cut, must_roll, exact, dec, w, dec_far, w_far,
        rows.need, np.ascontiguousarray(rows.tie), np.ascontiguousarray(rows.fail), rows.start_t, rows.start_n,
        rows.own, rows.lead,
    )  # fmt: skip


def below(
    throws: Throws, player: Player, must_roll: bool, exact: bool, up: tuple[Any, ...], need: int, tie: Any,
    fail: float = 0.0,
) -> tuple[Any, Any, Any, Any, Any]:  # fmt: skip
    """Every state of one bar: ``(dec, w, s1, dec_lead, w_lead)``, those above the bar taken from ``up``.

    The own chances where the player to move reads each keep, and a leader's worth
    (``fail`` after a farkle) where one bar's sweep serves many (a turn that only
    races to beat the bar is the same a fixed distance below any bar).
    """
    span, top = player.sizes(throws)
    dec_own, w_own, s1 = np.array(up[0]), np.array(up[1]), np.array(up[4])
    dec_lead, w_lead = np.zeros((top, throws.dice)), np.zeros((span, throws.dice + 1))
    _one_bar(
        throws.pts, throws.nxt, throws.row_start, throws.row_size, throws.row_prob, throws.pf, throws.dice,
        throws.g1, throws.miss, player.bmin, player.cut, must_roll, exact, up[0], up[2], need,
        np.ascontiguousarray(tie, dtype=float), fail, dec_own, dec_lead, w_own, w_lead, s1,
    )  # fmt: skip
    return dec_own, w_own, s1, dec_lead, w_lead


# ---------------------------------------------------------------------- compiled sweeps
@numba.njit(cache=True, nogil=True)
def _sweep_above(
    pts: Any, nxt: Any, row_start: Any, row_size: Any, row_prob: Any, pf: Any, d: int, g1: float, miss: float,
    bmin: int, cut: int, must_roll: bool, bank: Any, dec: Any, w: Any, dec_far: Any, w_far: Any, s1: Any,
) -> None:  # fmt: skip
    """Every state past the bar: bank where allowed, worth something and at least a throw on.

    From the cut on the turn banks at once. Keeps: the best own chance, among equals
    the last listed (the most points). ``*_far``: the chance the turn still ends in a farkle.
    """
    top = dec.shape[0]
    span = w.shape[0]
    rows = row_size.shape[0]
    succ = np.zeros(d + 1)
    succ_far = np.zeros(d + 1)
    for t in range(top - 1, -1, -1):
        if t < span:
            succ[:] = 0.0
            succ_far[:] = 0.0
            for r in range(rows):
                best = -1.0
                best_far = 0.0
                for o in range(row_start[r], row_start[r + 1]):
                    value = dec[t + pts[o], nxt[o]]
                    if value >= best:
                        best = value
                        best_far = dec_far[t + pts[o], nxt[o]]
                succ[row_size[r]] += row_prob[r] * best
                succ_far[row_size[r]] += row_prob[r] * best_far
            for n in range(1, d + 1):
                w[t, n] = succ[n]
                w_far[t, n] = succ_far[n] + pf[n]
            w[t, 1] = succ[1] * g1
            w_far[t, 1] = succ_far[1] * g1 + miss
            s1[t] = succ[1]
        for m in range(d):
            if t >= cut:
                dec[t, m] = bank[t, m]
                dec_far[t, m] = 0.0
                continue
            n = d if m == 0 else m
            allowed = t >= bmin and not (m == 0 and must_roll)
            if allowed and bank[t, m] > 0.0 and bank[t, m] >= w[t, n]:
                dec[t, m] = bank[t, m]
                dec_far[t, m] = 0.0
            else:
                dec[t, m] = w[t, n]
                dec_far[t, m] = w_far[t, n]


@numba.njit(cache=True, nogil=True)
def _one_bar(
    pts: Any, nxt: Any, row_start: Any, row_size: Any, row_prob: Any, pf: Any, d: int, g1: float, miss: float,
    bmin: int, cut: int, must_roll: bool, exact: bool, up_dec: Any, up_dec_far: Any, need: int, tie: Any,
    fail: float, dec_own: Any, dec_lead: Any, w_own: Any, w_lead: Any, s1: Any,
) -> None:  # fmt: skip
    """The states at or below one bar (``t <= need <= cut``); past it, the bar-free values of :func:`_sweep_above`.

    Below the bar a bank is worth nothing to the player, who throws on; on it the player
    banks a share of the lead (``tie[m]``) where that is worth at least throwing on (at
    the cut, always: a total past the cut counts as the cut, so with ``need == cut`` it ties).
    A leader is worth 0 once the player banks past the bar (``fail`` with ``exact``) and
    ``fail`` after a farkle.
    """
    top = dec_own.shape[0]
    span = w_own.shape[0]
    rows = row_size.shape[0]
    high = min(need, top - 1)
    past = fail if exact else 0.0
    succ = np.zeros(d + 1)
    succ_lead = np.zeros(d + 1)
    for t in range(high, -1, -1):
        if t < span:
            succ[:] = 0.0
            succ_lead[:] = 0.0
            for r in range(rows):
                best = -1.0
                best_lead = 0.0
                for o in range(row_start[r], row_start[r + 1]):
                    t2 = t + pts[o]
                    m2 = nxt[o]
                    if t2 <= need:
                        value = dec_own[t2, m2]
                    elif need >= cut:
                        value = tie[m2]
                    else:
                        value = up_dec[t2, m2]
                    if value >= best:
                        best = value
                        if t2 <= need:
                            best_lead = dec_lead[t2, m2]
                        elif need >= cut:
                            best_lead = tie[m2]
                        else:
                            best_lead = up_dec_far[t2, m2] * fail + (1.0 - up_dec_far[t2, m2]) * past
                succ[row_size[r]] += row_prob[r] * best
                succ_lead[row_size[r]] += row_prob[r] * best_lead
            for n in range(1, d + 1):
                w_own[t, n] = succ[n]
                w_lead[t, n] = succ_lead[n] + pf[n] * fail
            w_own[t, 1] = succ[1] * g1
            w_lead[t, 1] = succ_lead[1] * g1 + miss * fail
            s1[t] = succ[1]
        for m in range(d):
            on_bar = t == need
            if t >= cut:  # only on the bar (need == cut): bank at once
                dec_own[t, m] = tie[m] if on_bar else 0.0
                dec_lead[t, m] = tie[m] if on_bar else fail
                continue
            n = d if m == 0 else m
            allowed = on_bar and t >= bmin and not (m == 0 and must_roll)
            if allowed and tie[m] > 0.0 and tie[m] >= w_own[t, n]:
                dec_own[t, m] = tie[m]
                dec_lead[t, m] = tie[m]
            else:
                dec_own[t, m] = w_own[t, n]
                dec_lead[t, m] = w_lead[t, n]


@numba.njit(cache=True, nogil=True)
def _sweep_bars(
    pts: Any, nxt: Any, row_start: Any, row_size: Any, row_prob: Any, pf: Any, d: int, g1: float, miss: float,
    bmin: int, cut: int, must_roll: bool, exact: bool, up_dec: Any, up_w: Any, up_dec_far: Any, up_w_far: Any,
    need: Any, tie: Any, fail: Any, start_t: Any, start_n: Any, own: Any, lead: Any,
) -> None:  # fmt: skip
    """:func:`_one_bar` for each bar, reading the own chance and a leader's worth at each start state."""
    top = up_dec.shape[0]
    span = up_w.shape[0]
    dec_own = np.zeros((top, d))
    dec_lead = np.zeros((top, d))
    w_own = np.zeros((span, d + 1))
    w_lead = np.zeros((span, d + 1))
    s1 = np.zeros(span)
    for k in range(need.shape[0]):
        past = fail[k] if exact else 0.0
        _one_bar(
            pts, nxt, row_start, row_size, row_prob, pf, d, g1, miss, bmin, cut, must_roll, exact,
            up_dec, up_dec_far, need[k], tie[k], fail[k], dec_own, dec_lead, w_own, w_lead, s1,
        )  # fmt: skip
        for s in range(start_t.shape[1]):
            t = start_t[k, s]
            n = start_n[k, s]
            if t < 0 or t >= span:
                own[k, s] = 0.0
                lead[k, s] = fail[k]
            elif t > need[k]:
                own[k, s] = up_w[t, n]
                lead[k, s] = up_w_far[t, n] * fail[k] + (1.0 - up_w_far[t, n]) * past
            else:
                own[k, s] = w_own[t, n]
                lead[k, s] = w_lead[t, n]
