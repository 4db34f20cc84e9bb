"""The numeric core of the win-probability solver: two-player Farkle as value iteration (numpy, one numba kernel).

Everything here is internal to :mod:`farklecam.scoring.winprob` (which wraps it in a typed
:class:`~farklecam.scoring.winprob.WinTable`).

The model
---------
Scores are counted in 50-point units (Busche & Neller, ACG 2017). ``V[i, j]`` is
the chance that the player about to start a turn with ``i`` banked wins against an
opponent with ``j`` (ties after a last round count one half). Inside that turn the
state is the turn total ``t`` and the dice to throw, exactly as in
:mod:`farklecam.scoring.turn_dp`; only the terminal values differ:

* a bank of ``t`` is worth ``1 - V[j, i + t]`` (the opponent starts a turn), or,
  at or past the target, 1 (``last_round`` off) or one minus the opponent's
  chance to beat it in one last turn (``last_round`` on: :func:`reach_values`);
* a farkle is worth ``F = 1 - V[j, i]``.

A bank moves the game to a larger score sum ``i + j + t``; a farkle keeps the
sum (a farkle penalty is the exception: see :func:`_solve_streaks`). So the
sums are solved from the largest down, and within one sum only the pairs
``(i, j)`` and ``(j, i)`` depend on each other, through ``F``. For a fixed
policy a turn's value is linear in ``F`` (the slope is the chance the turn ends
in a farkle), and the turn's optimal value is convex and piecewise linear in
``F``. Each sum is solved with sweeps of values alone (:func:`_secant`): guess
``F`` and the slope from the sums already solved, sweep, solve the two linear
equations of each pair, sweep again at the new ``F``, and put each turn's line
through its last two points, until no ``F`` moves: each line then passes
through its turn's value, so the pair's values are the exact fixed point
(three sweeps on average). Pairs still moving after a few steps finish by
Newton's method with exact slopes (:func:`_newton`; on six presets to 3,000
or 4,000 points no pair needed it).

Exact target: banking past the target gives the turn total to the opponent
(``1 - V[j + t, i]``) or to nobody (worth ``F``); only a bank landing on the
target reaches it. Values then do not grow with the turn total, so the keeps
are not pruned (:func:`farklecam.scoring.turn_dp.build_tables` with ``prune=False``).

Approximations (documented where the tables are used):

* with a farkle penalty a score below 0 counts as 0 (the state keeps both
  players' streaks: :func:`_solve_streaks`);
* "on the board" is read from the score (0: not yet);
* with ``last_round`` on, a turn is cut at ``target + LAST_ROUND_MARGIN`` points,
  where the player must bank; ties count one half whatever the tie rule.
* piggyback offers are not modelled (every turn starts with all dice).

Speed (``python bench/winprob_speed.py --rules R [--set ...]``, 2 cores, load average
1.6, 2026-12-03): a 10,000-point table takes 6.2 s on the boxed rules (their last
round; 31.9 s with the last build's numpy sweep in the same run: ``--against
8409f6f``), 6.1 on house, 6.3 on elizabethan, 2.6 on busche-neller without a last
round, and 116 s on zilch, whose farkle penalty puts both streaks in the state
(:func:`_solve_streaks`: about nine Gauss-Seidel passes over nine streak pairs). The
presets' tables ship solved (:mod:`farklecam.scoring.bundle_tables`): only a customised rule set waits.
Advice from a solved table, median of 30 positions for a turn's first roll: 0.75 ms
(2.0 ms with four players, ``--players 4``); the first call in a process builds the
chance node (about 50 ms).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from farklecam.scoring import turn_dp
from farklecam.scoring.rules import Rules

STEP = turn_dp.STEP
NEG = -np.inf
#: With ``last_round`` on, a turn must bank once it is this many points past the target.
LAST_ROUND_MARGIN = 5000
_TOL = 1e-11
_MAX_PASSES = 40
_SECANT_STEPS = 8
_MIN_STEP = 1e-9
_MAX_SLOPE = 1.0 - 1e-9


@dataclass(frozen=True)
class Chance:
    """The chance node of a throw, with rolls that offer the same keeps merged.

    ``base[o]`` indexes option ``o`` (``pts * D + dice left``) in a flattened
    (turn total, dice) array; ``starts`` and ``owner`` map options to merged rows;
    ``prob[r, n]`` is the chance of row ``r`` when throwing ``n`` dice. Each row is
    a roll of one number of dice: ``row_size[r]`` and ``row_prob[r]`` say which and
    how likely (what the compiled sweep reads), ``row_start`` is ``starts`` closed
    by the number of options.
    """

    dice: int
    pts: Any
    nxt: Any
    base: Any
    starts: Any
    owner: Any
    prob: Any
    pf: Any
    max_pts: int
    hot_only: float  # chance that a throw of all dice offers only keeps of every die
    hot_then_bank: float  # value of a forced throw of all dice when any keep leaving dice wins
    row_start: Any
    row_size: Any
    row_prob: Any


def chance_for(rules: Rules) -> Chance:
    """Merge the exact roll table of ``rules``.

    The keeps are pruned (of those leaving the same dice, the most points) only
    when a state's value grows with the turn total: not with ``exact_target``,
    and not with ``last_round``, whose turns are cut (a forced bank at the cut
    can be worth less than rolling on just below it).
    """
    tables = turn_dp.build_tables(rules, prune=not (rules.exact_target or rules.last_round))
    d = rules.dice
    used = tables.nxt < d
    sizes = tables.prob.argmax(axis=1)
    groups: dict[tuple[int, tuple[tuple[int, int], ...]], float] = {}
    for r in range(used.shape[0]):
        options = tuple(
            sorted({(int(p), int(n)) for p, n in zip(tables.pts[r][used[r]], tables.nxt[r][used[r]], strict=True)})
        )
        key = (int(sizes[r]), options)
        groups[key] = groups.get(key, 0.0) + float(tables.prob[r, sizes[r]])
    keys = sorted(groups, key=lambda key: (len(key[1]), key))  # rows with as many keeps are contiguous
    prob = np.zeros((len(keys), d + 1))
    pts: list[int] = []
    nxt: list[int] = []
    starts: list[int] = []
    owner: list[int] = []
    for r, key in enumerate(keys):
        prob[r, key[0]] = groups[key]
        starts.append(len(pts))
        for p, n in key[1]:
            pts.append(p)
            nxt.append(n)
            owner.append(r)
    pts_a, nxt_a = np.asarray(pts, dtype=np.int64), np.asarray(nxt, dtype=np.int64)
    only_hot = np.asarray([all(n == 0 for _, n in key[1]) for key in keys])
    p_only_hot = float(prob[only_hot, d].sum())
    pf_d = float(tables.pf[d])
    hot_then_bank = (1.0 - pf_d - p_only_hot) / (1.0 - p_only_hot) if p_only_hot < 1 else 0.0
    base = pts_a * d + nxt_a
    row_size = np.asarray([key[0] for key in keys], dtype=np.int64)
    return Chance(
        d, pts_a, nxt_a, base, np.asarray(starts), np.asarray(owner), prob, tables.pf.copy(),
        int(pts_a.max()), p_only_hot, hot_then_bank, np.asarray([*starts, len(pts)], dtype=np.int64),
        row_size, prob[np.arange(len(keys)), row_size].copy(),
    )  # fmt: skip


def _single(chance: Chance, rules: Rules) -> tuple[float, float]:
    """``(G, q**throws)`` for one die thrown up to ``single_die_throws`` times (as :func:`turn_dp.single_die`)."""
    q = float(chance.pf[1])
    return sum(q**k for k in range(rules.single_die_throws)), q**rules.single_die_throws


# ---------------------------------------------------------------------- one last turn
def reach_values(rules: Rules, chance: Chance, length: int, mode: str) -> tuple[Any, Any]:
    """Chances, for each need ``x`` in ``0..length-1`` (units), of one turn that ends as ``mode`` says.

    ``mode`` "tie": ends above ``x`` (worth 1) or on it (worth 1/2; the last-round
    opponent); "reach": ends at ``x`` or more; "exact": banks exactly ``x``.
    Bank minimums are the caller's business (see :func:`last_turn`).

    Returns ``(start, dec)``: ``start[x]`` at the start of the turn; ``dec[x + low, m]``
    after a keep that leaves ``x`` to go (``x`` may be negative, down to ``-low``)
    with ``m`` dice to throw (0: hot dice), ``low = chance.max_pts + 1``.
    """
    d = rules.dice
    g1, q1 = _single(chance, rules)
    extra = rules.single_die_throws > 1
    low = chance.max_pts + 1
    dec = np.zeros((length + low, d))  # row low + r: r still needed (r <= 0: reached)
    for r in range(-chance.max_pts - 1, 1):
        row = low + r
        if mode == "exact":
            win = 1.0 if r == 0 else 0.0
            dec[row, :] = win
            if rules.must_roll_after_hot_dice:
                dec[row, 0] = 0.0
            continue
        if r < 0 or mode == "reach":
            dec[row, :] = 1.0
        else:  # a tie in hand: bank it or throw once more (any score then wins)
            p_ok = 1.0 - chance.pf[1:d]
            if extra:
                p_ok[0] = 1.0 - q1
            dec[row, 1:] = np.maximum(0.5, p_ok)
            dec[row, 0] = max(0.5, 1.0 - float(chance.pf[d]))
        if rules.must_roll_after_hot_dice:
            dec[row, 0] = chance.hot_then_bank
    flat = dec.reshape(-1)
    out = np.zeros(length)
    for r in range(1, length):
        idx = (low + r) * d - chance.pts * d + chance.nxt
        best = np.maximum.reduceat(flat[idx], chance.starts)
        succ = best @ chance.prob
        if extra:
            succ[1] *= g1
        dec[low + r, 1:] = succ[1:d]
        dec[low + r, 0] = succ[d]
        out[r] = succ[d]
    out[0] = dec[low, 0] if mode != "exact" else 1.0
    return out, dec


@dataclass(frozen=True)
class LastTurn:
    """One-turn chances used at the end of the game (arrays over the points needed, in units)."""

    tie: Any
    reach: Any
    exact: Any
    tie_dec: Any
    exact_dec: Any
    low: int


def last_turn(rules: Rules, chance: Chance, length: int) -> LastTurn:
    """The three one-turn tables of :func:`reach_values`, ``length`` units long."""
    tie, tie_dec = reach_values(rules, chance, length, "tie")
    reach, _ = reach_values(rules, chance, length, "reach")
    exact, exact_dec = reach_values(rules, chance, length, "exact")
    return LastTurn(tie, reach, exact, tie_dec, exact_dec, chance.max_pts + 1)


def bmin_units(rules: Rules, score: Any) -> Any:
    """Smallest bankable turn total (units) for players with ``score`` units (0: not on the board)."""
    on = -(-rules.bank_minimum(True) // STEP)
    off = -(-rules.bank_minimum(False) // STEP)
    return np.where(np.asarray(score) > 0, on, off)


def beat_chance(rules: Rules, last: LastTurn, score: Any, lead: Any) -> Any:
    """The last-round opponent's worth (win 1, tie 1/2) with ``score`` units, ``lead`` units behind (>= 1)."""
    need = bmin_units(rules, score)
    lead = np.asarray(lead)
    tie = last.tie[np.minimum(lead, len(last.tie) - 1)]
    above = last.reach[np.minimum(need, len(last.reach) - 1)]
    return np.where(lead >= need, tie, above)


def exact_chance(rules: Rules, last: LastTurn, score: Any, need: Any) -> Any:
    """Chance a player with ``score`` units banks exactly ``need`` units in one turn (minimums apply)."""
    need = np.asarray(need)
    ok = need >= bmin_units(rules, score)
    return np.where(ok, last.exact[np.clip(need, 0, len(last.exact) - 1)], 0.0)


# ---------------------------------------------------------------------- the turn, for many (i, j) at once
@dataclass
class Context:
    """What every sweep needs: rules, chance node, target, the one-turn tables and ``V`` so far.

    ``v[a, b, i, j]``: the turn-start value with the mover's farkle streak ``a``
    and the opponent's ``b`` (both 0 where the rules have no farkle penalty:
    ``streak`` is then 1).
    """

    rules: Rules
    chance: Chance
    goal: int  # target in units
    a_max: int  # last round: the cut (units)
    last: LastTurn
    v: Any  # (streak, streak, goal, goal) turn-start values
    streak: int  # farkles in a row that cost the penalty (1: no penalty, the streak is not in the state)
    penalty: int  # units the penalty costs


def make_context(rules: Rules) -> Context:
    """Build the chance node and the one-turn tables for ``rules``."""
    chance = chance_for(rules)
    goal = rules.target // STEP
    a_max = goal + LAST_ROUND_MARGIN // STEP
    last = last_turn(rules, chance, a_max + chance.max_pts + 2)
    streak = rules.farkle_penalty_streak if rules.farkle_penalty else 1
    penalty = -(-rules.farkle_penalty // STEP)
    return Context(rules, chance, goal, a_max, last, np.zeros((streak, streak, goal, goal)), streak, penalty)


def farkle_worth(ctx: Context, i: Any, j: Any, a: Any, b: Any) -> Any:
    """``F``: the mover's chance to win after a farkle, from ``(i, j)`` with streaks ``(a, b)``.

    The opponent moves next. The farkle adds one to the mover's streak; the
    ``streak``-th costs the penalty (a score below 0 counts as 0) and starts
    the streak again.
    """
    v = ctx.v
    more = a + 1 < ctx.streak
    fined = np.maximum(i - ctx.penalty, 0)
    return np.where(more, 1.0 - v[b, np.minimum(a + 1, ctx.streak - 1), j, i], 1.0 - v[b, 0, j, fined])


def _caps(ctx: Context, i: Any, j: Any) -> Any:
    """Turn total (units) from which each scenario's states have closed-form values."""
    rules, goal = ctx.rules, ctx.goal
    if rules.exact_target:
        return np.maximum(goal - i, goal - j) + 1
    top = ctx.a_max if rules.last_round else goal
    return np.maximum(top - i, bmin_units(rules, i))


def bank_values(ctx: Context, i: Any, j: Any, f: Any, t: Any, b: Any = 0) -> tuple[Any, Any]:
    """Worth of banking turn total ``t`` (units) for scenarios ``(i, j)``: value and slope in ``F``.

    Shapes broadcast: ``i``, ``j``, ``f`` and the opponent's streak ``b`` are (K, 1)
    and ``t`` is (1, T). A bank ends the mover's streak.
    """
    rules, goal, v = ctx.rules, ctx.goal, ctx.v
    a = i + t
    shape = np.broadcast_shapes(a.shape, np.shape(j))
    if not rules.exact_target:  # whole arrays and one choice: no masks (this runs for every sweep)
        inside = 1.0 - v[b, 0, j, np.minimum(a, goal - 1)]
        past = 1.0 - beat_chance(rules, ctx.last, j, np.maximum(a - j, 1)) if rules.last_round else 1.0
        return np.where(a < goal, inside, past), np.zeros(shape)
    value = np.zeros(shape)
    slope = np.zeros_like(value)
    below = a < goal
    jj = np.broadcast_to(j, value.shape)
    ii = np.broadcast_to(i, value.shape)
    aa = np.broadcast_to(a, value.shape)
    bb = np.broadcast_to(b, value.shape)
    value[below] = 1.0 - v[bb[below], 0, jj[below], aa[below]]
    on = aa == goal
    value[on] = 1.0 - 0.5 * exact_chance(rules, ctx.last, jj[on], goal - jj[on]) if rules.last_round else 1.0
    past = aa > goal
    gift = np.broadcast_to(j + t, value.shape)
    to_them = past & (gift < goal)
    value[to_them] = 1.0 - v[bb[to_them], 0, gift[to_them], ii[to_them]]
    they_reach = past & (gift == goal)
    value[they_reach] = (
        0.5 * exact_chance(rules, ctx.last, ii[they_reach], goal - ii[they_reach]) if (rules.last_round) else 0.0
    )
    lost = past & (gift > goal)
    ff = np.broadcast_to(f, value.shape)
    value[lost] = ff[lost]
    slope[lost] = 1.0
    return value, slope


@dataclass
class Sweep:
    """A solved turn for a batch of scenarios: turn-start value and slope, and every state's value.

    ``dec[t, m, k]``: worth of scenario ``k`` after a keep at total ``t`` with ``m`` dice
    left (0: hot dice); ``throw[t, n, k]`` (when asked for): worth of throwing ``n`` dice at ``t``.
    """

    start: Any  # (K,)
    slope: Any  # (K,)
    dec: Any
    throw: Any


def sweep(
    ctx: Context,
    i: Any,
    j: Any,
    f: Any,
    *,
    b: Any = None,
    t_min: int = 0,
    keep_throw: bool = False,
    slopes: bool = True,
) -> Sweep:
    """Solve the turns of scenarios ``(i[k], j[k])`` with farkle values ``f[k]``, down to total ``t_min``.

    ``b[k]`` is the opponent's farkle streak (default 0): what a bank leaves them.

    ``slopes`` off skips the derivatives in ``F`` (advice only reads values: about half the work).

    Scenarios sit on the last (contiguous) axis, sorted by their cap so that the
    ones still below it at total ``t`` are a prefix; numpy lays out the closed
    forms and the bank values, and :func:`_sweep_kernel` runs the steps.
    """
    rules, ch = ctx.rules, ctx.chance
    d = rules.dice
    cap0 = _caps(ctx, i, j)
    order = np.argsort(-cap0, kind="stable")
    b = np.zeros(i.size, dtype=np.int64) if b is None else b
    i, j, f, b, cap = i[order], j[order], f[order], b[order], cap0[order]
    k_count = len(i)
    i2, j2, f2 = i[:, None], j[:, None], f[:, None]
    top = int(cap.max())
    width = top + ch.max_pts + 1
    banks, banks_b = bank_values(ctx, i2, j2, f2, np.arange(width)[None, :], b[:, None])
    # closed forms from the cap on (rows below it are overwritten by the sweep)
    if rules.exact_target:
        term, termb = np.broadcast_to(f2, (k_count, width)), np.ones((k_count, width))
    elif rules.last_round:
        term, termb = banks, banks_b
    else:
        term, termb = np.ones((k_count, width)), np.zeros((k_count, width))
    dec = np.repeat(term.T[:, None, :], d, axis=1)
    decb = np.repeat(termb.T[:, None, :], d, axis=1) if slopes else None
    if rules.must_roll_after_hot_dice and not rules.exact_target and not rules.last_round:
        dec[:, 0, :] = ch.hot_then_bank
    bank_v, bank_b = banks[:, :top], banks_b[:, :top]
    allowed = np.arange(top)[None, :] >= np.maximum(bmin_units(rules, i), 1)[:, None]
    bank_v = np.ascontiguousarray(np.where(allowed, bank_v, NEG).T)
    bank_b = np.ascontiguousarray(bank_b.T)
    flat = dec.reshape(width * d, k_count)
    flatb = decb.reshape(width * d, k_count) if decb is not None else np.zeros((1, 1))
    g1, q1 = _single(ch, rules)
    start = np.zeros(k_count)
    slope = np.zeros(k_count)
    throw = np.zeros((top, d + 1, k_count)) if keep_throw else np.zeros((1, 1, 1))
    active = np.searchsorted(-cap, -np.arange(top), side="left")  # rows with cap > t
    args = (
        flat, flatb, bank_v, bank_b, active, ch.row_start, ch.base, ch.row_size, ch.row_prob, ch.pf, f,
        g1, q1 - float(ch.pf[1]), rules.single_die_throws > 1, rules.must_roll_after_hot_dice, d, t_min,
        decb is not None, keep_throw, throw, start, slope,
    )  # fmt: skip
    _sweep_kernel(*args)
    back = np.empty_like(order)
    back[order] = np.arange(k_count)
    return Sweep(start[back], slope[back], dec[:, :, back], throw[:, :, back] if keep_throw else None)


_THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
_POOL = ThreadPoolExecutor(_THREADS, thread_name_prefix="winprob") if _THREADS > 1 else None
_MIN_SPLIT = 4000  # turn totals (all scenarios') below which one thread sweeps alone


def turn_starts(ctx: Context, i: Any, j: Any, f: Any, *, slopes: bool, b: Any = None) -> tuple[Any, Any]:
    """Turn-start values and (with ``slopes``) slopes in ``F`` of many scenarios: :func:`sweep`, on every core.

    The scenarios are independent, and the compiled sweep holds no GIL, so the
    threads take shares of about equal work (a scenario's work is its number of
    turn totals); few states are swept by one thread, whose hand-off costs less.
    """
    steps = _caps(ctx, i, j)
    order = np.argsort(-steps, kind="stable")
    total = int(steps.sum())
    if _POOL is None or total < _MIN_SPLIT:
        found = sweep(ctx, i, j, f, b=b, slopes=slopes)
        return found.start, found.slope
    cuts = np.searchsorted(np.cumsum(steps[order]), total * np.arange(1, _THREADS) / _THREADS) + 1
    parts = [part for part in np.split(order, cuts) if part.size]
    start, slope = np.empty(i.size), np.empty(i.size)
    b = np.zeros(i.size, dtype=np.int64) if b is None else b
    swept = _POOL.map(lambda part: sweep(ctx, i[part], j[part], f[part], b=b[part], slopes=slopes), parts)
    for part, found in zip(parts, swept, strict=True):
        start[part], slope[part] = found.start, found.slope
    return start, slope


@numba.njit(cache=True, nogil=True)
def _sweep_kernel(
    flat: Any, flatb: Any, bank_v: Any, bank_b: Any, active: Any, row_start: Any, base: Any, row_size: Any,
    row_prob: Any, pf: Any, f: Any, g1: float, q1_extra: float, extra: bool, must_roll: bool, d: int,
    t_min: int, slopes: bool, keep_throw: bool, throw: Any, start: Any, slope: Any,
) -> None:  # fmt: skip
    """The turn's backward sweep, compiled: each state's best keep per roll, the throw, then bank or throw on.

    Writes the states of ``flat`` (``(total * D + dice left, scenario)``; rows past each
    scenario's cap hold its closed forms) from the top total down to ``t_min``, and
    ``start`` (and with ``slopes`` the slopes in ``F``, from ``flatb``). Each step
    reads only states of larger totals (a keep scores at least one unit), and
    scenarios sit on the inner, contiguous axis, so the loops vectorise. Why
    compiled: a step is about a thousand keeps over a few dozen scenarios, too fine
    for numpy calls, whose fixed cost was half of the solve.

    Ties between keeps go to the first (any one gives a valid Newton step, see :func:`_newton`).
    """
    k_all = flat.shape[1]
    best = np.empty(k_all)
    best_b = np.empty(k_all)
    w = np.empty((d + 1, k_all))
    wb = np.empty((d + 1, k_all))
    for t in range(active.shape[0] - 1, t_min - 1, -1):
        n = active[t]
        if n == 0:
            continue
        off = t * d
        w[:, :n] = 0.0
        if slopes:
            wb[:, :n] = 0.0
        for r in range(row_start.shape[0] - 1):
            row = off + base[row_start[r]]
            for k in range(n):
                best[k] = flat[row, k]
            if slopes:
                for k in range(n):
                    best_b[k] = flatb[row, k]
            for o in range(row_start[r] + 1, row_start[r + 1]):
                row = off + base[o]
                if slopes:
                    for k in range(n):
                        if flat[row, k] > best[k]:
                            best[k] = flat[row, k]
                            best_b[k] = flatb[row, k]
                else:
                    for k in range(n):
                        best[k] = max(best[k], flat[row, k])
            m, p = row_size[r], row_prob[r]
            for k in range(n):
                w[m, k] += p * best[k]
            if slopes:
                for k in range(n):
                    wb[m, k] += p * best_b[k]
        for k in range(n):
            if extra:  # a single die may be thrown again: its farkles are rethrows first
                w[1, k] = w[1, k] * g1 + q1_extra * f[k]
            for m in range(d + 1):
                w[m, k] += pf[m] * f[k]
            if keep_throw:
                for m in range(d + 1):
                    throw[t, m, k] = w[m, k]
            bank = bank_v[t, k]
            for m in range(1, d):  # bank or throw on
                flat[off + m, k] = max(bank, w[m, k])
            flat[off, k] = w[d, k] if must_roll else max(bank, w[d, k])
            if slopes:
                if extra:
                    wb[1, k] = wb[1, k] * g1 + q1_extra
                for m in range(d + 1):
                    wb[m, k] += pf[m]
                for m in range(1, d):
                    flatb[off + m, k] = bank_b[t, k] if bank >= w[m, k] else wb[m, k]
                hot_bank = not must_roll and bank >= w[d, k]
                flatb[off, k] = bank_b[t, k] if hot_bank else wb[d, k]
            if t == t_min:
                start[k] = w[d, k]
                if slopes:
                    slope[k] = wb[d, k]


# ---------------------------------------------------------------------- the whole table
def solve_table(rules: Rules) -> tuple[Any, LastTurn, int]:
    """Every turn-start value ``V[i, j]`` for ``rules`` (units below the target); also the one-turn tables.

    Returns ``(V, last, passes)``: ``passes`` is the number of batch sweeps run.
    """
    ctx = make_context(rules)
    passes = _solve_pairs(ctx) if ctx.streak == 1 else _solve_streaks(ctx)
    return ctx.v, ctx.last, passes


def _levels(goal: int) -> Any:
    """Each score sum's ``(i, j)``, the largest sum first (a bank only ever reaches larger sums)."""
    for s in range(2 * goal - 2, -1, -1):
        i = np.arange(max(0, s - goal + 1), min(s, goal - 1) + 1)
        yield i, s - i


def _solve_pairs(ctx: Context) -> int:
    """No farkle penalty: within a sum, ``(i, j)`` and ``(j, i)`` hang on each other through ``F`` (secant steps)."""
    v = ctx.v[0, 0]
    slopes = np.zeros_like(v)  # each turn's slope in F as last found: the next level's first guess
    passes = 0
    for i, j in _levels(ctx.goal):
        partner = j - i[0]  # index of (j, i) in this level
        f = 1.0 - np.clip(_extrapolate(v, j, i, 0.5), 0.0, 1.0)  # F = 1 - V[j, i]
        b = np.clip(_extrapolate(slopes, i, j, 0.0), 0.0, _MAX_SLOPE)
        c, b, f, todo, runs = _secant(ctx, i, j, partner, f, b)
        passes += runs
        if todo.size:
            passes += _newton(ctx, i, j, partner, f, c, b, todo)
        v[i, j] = c + b * f
        slopes[i, j] = b
    return passes


def _solve_streaks(ctx: Context) -> int:
    """With a farkle penalty: Gauss-Seidel passes over the whole table until no value moves.

    Within a sum a farkle moves the state to a larger streak total ``a + b``
    (the opponent's turn, the mover's streak one up), so the streak totals are
    solved from the largest down, each with its ``F`` known: one sweep each, no
    secant. Only the penalty reaches back, to a smaller sum (``i - penalty``):
    those values are last pass's, so passes repeat until none moves by more
    than ``_TOL``. Returns the sweeps run.
    """
    k, v = ctx.streak, ctx.v
    sweeps = _solve_pairs(ctx)  # the table without the penalty: the first guess
    v[...] = v[0, 0]
    pairs = [(a, g - a) for g in range(2 * k - 2, -1, -1) for a in range(k) if 0 <= g - a < k]
    groups = [[(a, b) for a, b in pairs if a + b == g] for g in range(2 * k - 2, -1, -1)]
    for _ in range(_MAX_PASSES * 4):
        moved = 0.0
        for i, j in _levels(ctx.goal):
            for group in groups:
                a = np.repeat([p[0] for p in group], i.size)
                b = np.repeat([p[1] for p in group], i.size)
                ii, jj = np.tile(i, len(group)), np.tile(j, len(group))
                start, _ = turn_starts(ctx, ii, jj, farkle_worth(ctx, ii, jj, a, b), b=b, slopes=False)
                moved = max(moved, float(np.abs(start - v[a, b, ii, jj]).max()))
                v[a, b, ii, jj] = start
                sweeps += 1
        if moved <= _TOL:
            break
    return sweeps


def _extrapolate(table: Any, i: Any, j: Any, edge: float) -> Any:
    """Guess ``table[i, j]`` from the larger sums already solved.

    The plane through ``[i + 1, j]``, ``[i, j + 1]`` and ``[i + 1, j + 1]``; a line
    along ``j`` where ``i + 1`` is past the table, ``edge`` in its corner. The
    closer the guess, the fewer sweeps a level takes.
    """
    goal = table.shape[0]
    up_i, up_j = np.minimum(i + 1, goal - 1), np.minimum(j + 1, goal - 1)
    plane = table[up_i, j] + table[i, up_j] - table[up_i, up_j]
    one, two = table[i, up_j], table[i, np.minimum(j + 2, goal - 1)]
    line = np.where(j + 2 < goal, 2 * one - two, np.where(j + 1 < goal, one, edge))
    return np.where((i + 1 < goal) & (j + 1 < goal), plane, line)


def _pair_solution(c: Any, b: Any, partner: Any) -> Any:
    """New ``F`` of each turn from the lines ``x = c + b F`` of a pair (``x = c + b (1 - x')``, and for ``x'``)."""
    cp, bp = c[partner], b[partner]
    x = (c + b - b * (cp + bp)) / (1.0 - b * bp)
    return 1.0 - x[partner]


def _secant(ctx: Context, i: Any, j: Any, partner: Any, f: Any, b: Any) -> tuple[Any, Any, Any, Any, int]:
    """Solve a level by sweeps of values alone, each turn's line through its last two points (secant).

    A values-only sweep costs about 0.4 of one that also tracks slopes. The line
    starts at the guessed slope ``b``. A pair is solved when neither of its
    ``F`` moves: each line then passes through the turn's value at its ``F``, so
    the pair's values are the exact fixed point. Returns ``(c, b, f, todo, sweeps)``,
    ``todo`` the turns (whole pairs) still unsolved after ``_SECANT_STEPS``.
    """
    g, _ = turn_starts(ctx, i, j, f, slopes=False)
    c = g - b * f
    runs = 1
    todo = np.arange(i.size)
    for _ in range(_SECANT_STEPS):
        new_f = _pair_solution(c, b, partner)
        moved = np.abs(new_f - f) > _TOL
        moved |= moved[partner]
        todo = np.nonzero(moved)[0]
        if todo.size == 0:
            break
        runs += 1
        found, _ = turn_starts(ctx, i[todo], j[todo], new_f[todo], slopes=False)
        step = new_f[todo] - f[todo]
        wide = np.abs(step) > _MIN_STEP  # too short a step gives no slope worth its rounding
        secant = np.divide(found - g[todo], step, out=b[todo].copy(), where=wide)
        b[todo] = np.clip(secant, 0.0, _MAX_SLOPE)
        c[todo] = found - b[todo] * new_f[todo]
        f[todo], g[todo] = new_f[todo], found
    return c, b, f, todo, runs


def _newton(ctx: Context, i: Any, j: Any, partner: Any, f: Any, c: Any, b: Any, todo: Any) -> int:
    """Finish the turns ``todo`` of a level by Newton's method; ``f``, ``c``, ``b`` updated in place.

    Each sweep tracks the exact slope; a values-only sweep at the new ``F`` then
    checks that both turns of a pair are still on their lines. Returns the sweeps run.
    """
    runs = 0
    for _ in range(_MAX_PASSES):
        runs += 1
        start, b[todo] = turn_starts(ctx, i[todo], j[todo], f[todo], slopes=True)
        c[todo] = start - b[todo] * f[todo]
        new_f = _pair_solution(c, b, partner)
        moved = np.abs(new_f - f) > _TOL
        f[:] = new_f
        if not moved.any():
            break
        check = np.nonzero(moved | moved[partner])[0]
        runs += 1
        found, _ = turn_starts(ctx, i[check], j[check], f[check], slopes=False)
        on_line = np.ones(i.size, dtype=bool)
        on_line[check] = np.abs(found - (c[check] + b[check] * f[check])) <= _TOL
        todo = np.nonzero(~(on_line & on_line[partner]))[0]
        if todo.size == 0:
            break
    return runs
