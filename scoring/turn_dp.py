"""The numeric core of the solver: one turn of Farkle as a finite DP over (turn total, dice), in numpy.

Everything here is internal to :mod:`farklecam.scoring.solver` (which wraps it in a typed
:class:`~farklecam.scoring.solver.Policy`); no other module imports numpy.

The model
---------
Turn totals are multiples of 50 (every score is), so a total is an index
``t = T / 50``. After a keep the player is in a *decision state* ``(t, m)``:
``m`` dice left to throw (1..D-1) or ``m = 0`` for hot dice (all D dice may be
thrown again). The player banks (when the rules allow it there) or throws; a
throw of ``n`` dice is a chance node over the exact roll table
(:func:`farklecam.scoring.chance.roll_outcomes`), and for each roll the player picks the
best keep. Every keep adds at least 50 points, so values at ``t`` only depend on
larger ``t``: one backward sweep from the cap down to 0 solves the turn exactly
(the sweep is vectorised over all rolls, keeps and *scenarios* at once).

A scenario is one ``(bank minimum, farkle value)`` pair: on or off the board,
and, with a farkle penalty, the relative value a farkle leads to (see
:mod:`farklecam.scoring.solver` for the average-reward formulation that sets it).

The cap
-------
The turn is not truncated (not even at the target). Far enough up, banking
beats one more throw in every state that can farkle, and values are closed
forms, linear in the total ``T`` and the farkle value ``F``: ``T`` in a state
that banks; after hot dice ``T + A`` when D dice can never farkle (Zilch's
no-score bonus; ``A`` is the fixed point of "throw all D dice, keep the best,
bank unless hot"), and ``a T + b + e F`` with ``a < 1`` when the throw after
hot dice is forced and can farkle. A throw of n dice up there is worth
``alpha_n T + gamma_n + phi_n F`` (``Tables.tail``), so banking wins from
``T = gamma_n / phi_n`` on (``F <= 0``): the *cap* is the largest such
threshold, and the full DP runs below it. With forced throws the line for the
forced state only holds once a keep that leaves dice beats the forced throw
whenever a roll offers one; between the cap and that *top* only the forced
state is solved, by a one-dimensional recursion (:func:`_forced_region`).
Tests compare the result with a DP truncated much further up.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides

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
    cold: Any  # (R,) points of each roll's best keep that leaves dice (-inf: none)
    hot_pts: Any  # (R,) points of each roll's best keep of every die thrown (-inf: none)
    hot: tuple[float, float, float]  # tail value after hot dice: a T + b + e F
    tail: Any  # (3, D + 1): one throw of n dice above the cap is worth tail[0] T + tail[1] + tail[2] F


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
    worth = pts * float(STEP)
    cold = np.where((nxt > 0) & (nxt < d), worth, NEG).max(axis=1)  # best keep leaving dice, per roll
    hot = np.where(nxt == 0, worth, NEG).max(axis=1)  # best keep of every die thrown
    forced = rules.must_roll_after_hot_dice and pf[d] > 0
    a, b, e = _hot_line(cold, hot, prob[:, d], float(pf[d]), forced)
    if forced:  # far enough up, a keep that leaves dice (then a bank) beats a forced throw when there is one
        has_cold = cold > NEG
        slope = np.where(has_cold, 1.0, a)
        const = np.where(has_cold, cold, a * hot + b)
        f_part = np.where(has_cold, 0.0, e)
    else:
        slope, const, f_part = np.ones(len(rows)), np.maximum(cold, hot + b), np.zeros(len(rows))
    tail = np.stack([slope @ prob, const @ prob, pf + f_part @ prob])
    return Tables(d, pts, nxt, prob, pf, cold, hot, (a, b, e), tail)


def _hot_line(cold: Any, hot: Any, p: Any, pf: float, forced: bool) -> tuple[float, float, float]:
    """Above the cap the hot-dice state is worth ``a T + b + e F``.

    Bank (1, 0, 0) when all D dice can farkle and banking is allowed; when they
    cannot (Zilch), throw on: ``b = A``, the fixed point of
    ``A = E[max(best keep leaving dice, best keep of all dice + A)]``. When the
    throw is forced and can farkle: the keep leaving dice whenever there is one,
    else all of them and throw again, a line with ``a < 1``.
    """
    if forced:
        only_hot = cold == NEG
        p_hot = float(p[only_hot].sum())
        a = float(p[~only_hot].sum()) / (1 - p_hot)
        b = (float(p[~only_hot] @ cold[~only_hot]) + a * float(p[only_hot] @ hot[only_hot])) / (1 - p_hot)
        return a, b, pf / (1 - p_hot)
    if pf > 0:
        return 1.0, 0.0, 0.0
    bonus = 0.0
    for _ in range(10_000):
        new = float(np.maximum(cold, hot + bonus) @ p)
        if abs(new - bonus) < 1e-12:
            break
        bonus = new
    return 1.0, new, 0.0


@lru_cache(maxsize=16)
def cached_tables(rules: Rules) -> Tables:
    """:func:`build_tables`, memoised per rule set."""
    return build_tables(rules)


def single_die(tables: Tables, throws: int) -> tuple[float, float]:
    """``(G, q**throws)`` for a single die thrown up to ``throws`` times: success weight and farkle chance."""
    q = float(tables.pf[1])
    return sum(q**i for i in range(throws)), q**throws


def caps(rules: Rules, tables: Tables, bank_minimums: list[int]) -> tuple[int, int]:
    """``(cap, top)`` total indices: the full DP runs below ``cap``, closed forms hold from ``top``.

    From ``cap`` on, banking beats one more throw in every state that may bank
    (``alpha T + gamma + phi F < T`` with ``F <= 0``). Normally ``top == cap``.
    When throws after hot dice are forced (and can farkle), the forced state is
    a line only once a keep that leaves dice (then a bank) beats the forced
    throw whenever a roll offers one: between ``cap`` and ``top`` only that
    state is solved (:func:`_forced_region`).
    """
    d = rules.dice
    g, qk = single_die(tables, rules.single_die_throws)
    gamma, phi = tables.tail[1].copy(), tables.tail[2].copy()  # 1 - alpha == phi (exactly, unlike 1 - alpha)
    gamma[1], phi[1] = g * gamma[1], g * (phi[1] - tables.pf[1]) + qk
    a, b, e = tables.hot
    threshold = float(max(0, *bank_minimums))
    for n in range(1, d if e > 0 else d + 1):  # a forced hot-dice state never banks
        if phi[n] > 0:
            threshold = max(threshold, float(gamma[n] / phi[n]))
    cap = int(np.ceil(threshold / STEP)) + 2
    both = (tables.cold > NEG) & (tables.hot_pts > NEG)
    if e == 0 or not both.any():
        return cap, cap
    line = float(((a * tables.hot_pts[both] + b - tables.cold[both]) / e).max())
    return cap, max(cap, int(np.ceil(line / STEP)) + 2)


def sweep(
    rules: Rules,
    tables: Tables,
    farkle_values: list[float],
    bank_minimums: list[int],
    cap: int,
    top: int | None = None,
    *,
    bank_tail: bool = False,
    dead_tail: bool = False,
    track_slope: bool = True,
) -> tuple[Any, Any, Any]:
    """Backward DP for a batch of scenarios (see :func:`caps` for ``cap`` and ``top``).

    ``bank_tail`` replaces the closed-form tail by "the turn ends with a bank at
    the cap" (Farkler's truncation at the target; tests compare against it).
    ``dead_tail`` makes every total from the cap on worth a farkle (``exact_target``:
    a bank past the target scores nothing for the banker; see :mod:`farklecam.scoring.solver`).

    Returns:
        ``W`` (K, top, D + 1): value of throwing n dice at total index t (n = 1: all single-die throws);
        ``S1`` (K, top): success part of one single-die throw (for throws left < the maximum);
        ``slope`` (K,): d W[k, 0, D] / d F_k, the probability the turn ends in a farkle
        (zeros unless ``track_slope``).
    """
    d = rules.dice
    top = cap if top is None or bank_tail or dead_tail else top
    k_count = len(farkle_values)
    f = np.asarray(farkle_values, dtype=float)
    bmin = np.asarray([-(-b // STEP) for b in bank_minimums])  # bank allowed iff t >= bmin
    pad = int(tables.pts.max()) + 1
    states = d + 1
    dec = np.full((k_count, top + pad, states), NEG)
    dec_b = np.zeros((k_count, top + pad, states))
    t_tail = np.arange(cap, top + pad) * float(STEP)
    dec[:, cap:, 1:d] = t_tail[None, :, None]
    a, b, e = (1.0, 0.0, 0.0) if bank_tail else tables.hot
    dec[:, cap:, 0] = a * t_tail[None, :] + b + e * f[:, None]
    dec_b[:, cap:, 0] = e
    if dead_tail:
        dec[:, cap:, :d] = f[:, None, None]
        dec_b[:, cap:, :d] = 1.0
    w_out = np.zeros((k_count, top, d + 1))
    s1_out = np.zeros((k_count, top))
    if top > cap:
        _forced_region(rules, tables, f, dec, dec_b, w_out, s1_out, cap, top)
    flat = dec.reshape(k_count, -1)
    flat_b = dec_b.reshape(k_count, -1)
    used = tables.nxt < d  # options of each roll, flattened row by row
    base = (tables.pts * states + tables.nxt)[used]
    starts = np.concatenate(([0], np.cumsum(used.sum(axis=1))[:-1]))
    owner = np.repeat(np.arange(used.shape[0]), used.sum(axis=1))
    prob, pf = tables.prob, tables.pf
    g1, q1 = single_die(tables, rules.single_die_throws)
    extra_throws = rules.single_die_throws > 1
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
        bank = np.where(t >= bmin, t * float(STEP), NEG)[:, None]
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


def _forced_region(
    rules: Rules, tables: Tables, f: Any, dec: Any, dec_b: Any, w_out: Any, s1_out: Any, cap: int, top: int
) -> None:
    """Totals in ``[cap, top)`` with forced throws after hot dice: every other state banks there.

    A roll is then worth ``T + best keep leaving dice`` or, if it has a keep of
    every die, possibly ``X(T + that keep)``, where ``X`` (the forced throw of
    all D dice) is solved by a backward recursion over the D-dice rolls alone;
    the throws of fewer dice follow in one vectorised pass. Fills ``dec``/``dec_b``
    (hot column) and ``w_out``/``s1_out`` in place.
    """
    d = rules.dice
    hot = tables.hot_pts > NEG
    steps = (np.where(hot, tables.hot_pts, 0.0) // STEP).astype(np.int64)[hot]
    plain = np.where(hot[:, None], 0.0, tables.prob)  # rolls without a keep of every die: T + cold
    p_plain, c_plain = plain.sum(axis=0), np.where(hot, 0.0, tables.cold) @ plain
    p_hot, cold_hot = tables.prob[hot], tables.cold[hot]
    of_d = p_hot[:, d] > 0
    p_d, cold_d, step_d = p_hot[of_d, d], cold_hot[of_d], steps[of_d]
    pf_d = float(tables.pf[d])
    for t in range(top - 1, cap - 1, -1):  # X: the forced throw of all dice
        total = t * float(STEP)
        forced = dec[:, t + step_d, 0]
        take = forced > total + cold_d
        dec[:, t, 0] = total * p_plain[d] + c_plain[d] + np.where(take, forced, total + cold_d) @ p_d + pf_d * f
        dec_b[:, t, 0] = np.where(take, dec_b[:, t + step_d, 0], 0.0) @ p_d + pf_d
    totals = np.arange(cap, top) * float(STEP)
    g1, q1 = single_die(tables, rules.single_die_throws)
    for k in range(len(f)):  # every throw, all totals at once
        forced = dec[k, np.arange(cap, top)[:, None] + steps[None, :], 0]
        succ = np.maximum(totals[:, None] + cold_hot[None, :], forced) @ p_hot
        succ += totals[:, None] * p_plain[None, :] + c_plain[None, :]
        w_out[k, cap:top] = succ + tables.pf[None, :] * f[k]
        if rules.single_die_throws > 1:
            w_out[k, cap:top, 1] = succ[:, 1] * g1 + q1 * f[k]
        s1_out[k, cap:top] = succ[:, 1]
