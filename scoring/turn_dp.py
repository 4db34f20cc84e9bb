"""The numeric core of the solver: one turn of Farkle as a finite DP over (turn total, dice), in numpy.

Everything here is internal to :mod:`scoring.solver` (which wraps it in a typed
:class:`~scoring.solver.Policy`); no other module imports numpy.

The model
---------
Turn totals are multiples of 50 (every score is), so a total is an index
``t = T / 50``. After a keep the player is in a *decision state* ``(t, m)``:
``m`` dice left to throw (1..D-1) or ``m = 0`` for hot dice (all D dice may be
thrown again). The player banks (when the rules allow it there) or throws; a
throw of ``n`` dice is a chance node over the exact roll table
(:func:`scoring.chance.roll_outcomes`), and for each roll the player picks the
best keep. Every keep adds at least 50 points, so values at ``t`` only depend on
larger ``t``: one backward sweep from the cap down to 0 solves the turn exactly
(the sweep is vectorised over all rolls, keeps and *scenarios* at once).

A scenario is one ``(bank minimum, farkle value)`` pair: on or off the board,
and, with a farkle penalty, the relative value a farkle leads to (see
:mod:`scoring.solver` for the average-reward formulation that sets it).

The cap
-------
Above some total banking beats one more throw of any number of dice that can
farkle: at ``T`` a throw of ``n`` dice is worth ``(1 - pf_n) T + c_n + pf_n F``
when every later state banks, which is below ``T`` once ``T > c_n / pf_n``
(``F <= 0``). From there on the values are closed forms (the *tail*): ``T`` in
every state that can farkle, ``T + A`` after hot dice when D dice can never
farkle (Zilch's no-score bonus), where ``A`` is the fixed point of "throw all D
dice, keep the best, bank unless hot". The cap is the largest such threshold,
so the DP is the exact, uncapped turn. (With ``must_roll_after_hot_dice`` and
``pf_D > 0`` the forced throw after hot dice beyond the cap is modelled as one
more throw and a bank: an error of the order of the chance to get there.)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from scoring.chance import roll_outcomes
from scoring.rules import Rules
from scoring.setasides import legal_set_asides

STEP = 50
NEG = -np.inf


@dataclass(frozen=True)
class Tables:
    """Per-rule-set chance tables: every scoring roll of 1..D dice with its keeps.

    ``pts[r, j]`` (points / 50) and ``nxt[r, j]`` (decision state: dice left, 0 = hot dice)
    hold roll ``r``'s keeps (see :func:`build_tables`); unused slots point at the sentinel state ``D``.
    ``prob[r, n]`` is the probability of roll ``r`` when throwing ``n`` dice.
    """

    dice: int
    pts: Any
    nxt: Any
    prob: Any
    pf: Any  # (D + 1,) P(farkle) of one throw of n dice
    a_hot: float  # tail bonus after hot dice (0 unless D dice can never farkle)
    c: Any  # (D + 1,) tail constants: E[best points + tail bonus] of a throw of n dice


def build_tables(rules: Rules, *, prune: bool = True) -> Tables:
    """Enumerate every roll of 1..D dice and its keeps.

    With ``prune`` only the non-dominated keeps stay: of the keeps leaving the
    same dice, the one with the most points. That is exact because a state's
    value never decreases with the turn total (more points, same choices: the
    bank minimums only open up). It fails for a truncated turn (``bank_tail``),
    where a forced bank at the cap can be worth less than rolling on below it.
    """
    d = rules.dice
    rows: list[list[tuple[int, int]]] = []
    probs: list[float] = []
    sizes: list[int] = []
    pf = np.zeros(d + 1)
    for n in range(1, d + 1):
        for roll, p in roll_outcomes(n):
            keeps = {(option.dice_left, option.points) for option in legal_set_asides(roll, rules)}
            if not keeps:
                pf[n] += float(p)
                continue
            if prune:
                best: dict[int, int] = {}
                for left, points in keeps:
                    best[left] = max(best.get(left, 0), points)
                keeps = set(best.items())
            rows.append(sorted(keeps))
            probs.append(float(p))
            sizes.append(n)
    width = max(len(row) for row in rows)
    pts = np.zeros((len(rows), width), dtype=np.int64)
    nxt = np.full((len(rows), width), d, dtype=np.int64)
    for i, row in enumerate(rows):
        for j, (left, points) in enumerate(row):
            pts[i, j], nxt[i, j] = points // STEP, left
    prob = np.zeros((len(rows), d + 1))
    prob[np.arange(len(rows)), sizes] = probs
    a_hot = _hot_bonus(pts, nxt, prob, d) if pf[d] == 0 else 0.0
    bonus = np.zeros(d + 1)
    bonus[0] = a_hot
    gain = np.where(nxt < d, pts * float(STEP) + bonus[np.minimum(nxt, d)], NEG)
    c = gain.max(axis=1) @ prob
    return Tables(d, pts, nxt, prob, pf, a_hot, c)


def _hot_bonus(pts: Any, nxt: Any, prob: Any, d: int) -> float:
    """Fixed point ``A = E[max(best non-hot keep, best hot keep + A)]`` over throws of all D dice."""
    points = pts * float(STEP)
    cold = np.where((nxt > 0) & (nxt < d), points, NEG).max(axis=1)
    hot = np.where(nxt == 0, points, NEG).max(axis=1)
    p = prob[:, d]
    a = 0.0
    for _ in range(10_000):
        new = float(np.maximum(cold, hot + a) @ p)
        if abs(new - a) < 1e-12:
            return new
        a = new
    return a  # pragma: no cover - the map contracts by P(hot dice) < 1


@lru_cache(maxsize=16)
def cached_tables(rules: Rules) -> Tables:
    """:func:`build_tables`, memoised per rule set."""
    return build_tables(rules)


def single_die(tables: Tables, throws: int) -> tuple[float, float]:
    """``(G, q**throws)`` for a single die thrown up to ``throws`` times: success weight and farkle chance."""
    q = float(tables.pf[1])
    return sum(q**i for i in range(throws)), q**throws


def cap_index(rules: Rules, tables: Tables, bank_minimums: list[int]) -> int:
    """First total index from which banking beats throwing in every state that can farkle."""
    d = rules.dice
    g, qk = single_die(tables, rules.single_die_throws)
    threshold = 0.0
    for n in range(1, d + 1):
        pf, c = float(tables.pf[n]), float(tables.c[n])
        if n == 1:
            pf, c = qk, g * c
        if pf > 0:
            threshold = max(threshold, c / pf)
    threshold = max(threshold, *bank_minimums, 0)
    return int(np.ceil(threshold / STEP)) + 2


def sweep(
    rules: Rules,
    tables: Tables,
    farkle_values: list[float],
    bank_minimums: list[int],
    cap: int,
    *,
    bank_tail: bool = False,
    track_slope: bool = True,
) -> tuple[Any, Any, Any]:
    """Backward DP for a batch of scenarios.

    ``bank_tail`` replaces the closed-form tail by "the turn ends with a bank at
    the cap" (Farkler's truncation at the target; tests compare against it).

    Returns:
        ``W`` (K, cap, D + 1): value of throwing n dice at total index t (n = 1: all single-die throws);
        ``S1`` (K, cap): success part of one single-die throw (for throws left < the maximum);
        ``slope`` (K,): d W[k, 0, D] / d F_k, the probability the turn ends in a farkle
        (zeros unless ``track_slope``).
    """
    d = rules.dice
    k_count = len(farkle_values)
    f = np.asarray(farkle_values, dtype=float)
    bmin = np.asarray([-(-b // STEP) for b in bank_minimums])  # bank allowed iff t >= bmin
    pad = int(tables.pts.max()) + 1
    length = cap + pad
    states = d + 1
    dec = np.full((k_count, length, states), NEG)
    dec_b = np.zeros((k_count, length, states))
    t_tail = np.arange(cap, length) * float(STEP)
    dec[:, cap:, 1:d] = t_tail[None, :, None]
    if bank_tail:
        dec[:, cap:, 0] = t_tail[None, :]
    elif tables.pf[d] == 0:
        dec[:, cap:, 0] = t_tail[None, :] + tables.a_hot
    elif rules.must_roll_after_hot_dice:
        pfd = float(tables.pf[d])
        dec[:, cap:, 0] = (1 - pfd) * t_tail[None, :] + tables.c[d] + pfd * f[:, None]
        dec_b[:, cap:, 0] = pfd
    else:
        dec[:, cap:, 0] = t_tail[None, :]
    flat = dec.reshape(k_count, -1)
    flat_b = dec_b.reshape(k_count, -1)
    used = tables.nxt < d  # options of each roll, flattened row by row
    base = (tables.pts * states + tables.nxt)[used]
    starts = np.concatenate(([0], np.cumsum(used.sum(axis=1))[:-1]))
    owner = np.repeat(np.arange(used.shape[0]), used.sum(axis=1))
    prob, pf = tables.prob, tables.pf
    g1, q1 = single_die(tables, rules.single_die_throws)
    extra_throws = rules.single_die_throws > 1
    bank_t = np.arange(cap) * float(STEP)
    w_out = np.zeros((k_count, cap, d + 1))
    s1_out = np.zeros((k_count, cap))
    slope = np.zeros(k_count)
    for t in range(cap - 1, -1, -1):
        idx = base + t * states
        vals = flat[:, idx]
        best = np.maximum.reduceat(vals, starts, axis=1)
        succ = best @ prob
        w = succ + pf * f[:, None]
        if extra_throws:
            w[:, 1] = succ[:, 1] * g1 + q1 * f
        w_out[:, t] = w
        s1_out[:, t] = succ[:, 1]
        bank = np.where(t >= bmin, bank_t[t], NEG)[:, None]
        dec[:, t, 1:d] = np.maximum(bank, w[:, 1:d])
        hot_bank = NEG if rules.must_roll_after_hot_dice else bank[:, 0]
        dec[:, t, 0] = np.maximum(hot_bank, w[:, d])
        if track_slope:  # d value / d F of the chosen actions (any choice among ties is a subgradient)
            chosen = np.where(vals >= best[:, owner], flat_b[:, idx], NEG)
            succ_b = np.maximum.reduceat(chosen, starts, axis=1) @ prob
            wb = succ_b + pf
            if extra_throws:
                wb[:, 1] = succ_b[:, 1] * g1 + q1
            dec_b[:, t, 1:d] = np.where(bank >= w[:, 1:d], 0.0, wb[:, 1:d])
            dec_b[:, t, 0] = np.where(hot_bank >= w[:, d], 0.0, wb[:, d])
            slope = wb[:, d]
    return w_out, s1_out, slope
