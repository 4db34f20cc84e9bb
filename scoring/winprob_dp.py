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

Passing (progressive; :func:`passing_modelled`): a bank of ``t`` with ``m`` dice
left offers the opponent those dice (all after hot dice) with ``t`` set aside, and
they take them where that is worth more to them than a fresh turn. So a turn
start is ``(i, j)`` with a pass on offer or none: ``V[i, j]`` is the fresh
start (the first turn, and after a farkle, which passes nothing), and the offers
table ``w`` holds what each pass adds, ``max(0, take - V[i, j])``. Taking is
throwing the passed dice at total ``T`` in the very turn the sweep of ``(i, j)``
solves, so one sweep gives every pass of that turn start at once (its throws at
every total below the target: :func:`sweep`'s ``offers``), and a bank reads the
opponent's start with that pass (:func:`pass_bank_values`); in the last turn the
opponent weighs the pass by the one-turn tables (:func:`taken_beat_chance`).
Banks still reach larger sums only, so the levels are solved as before; the
table is exact (``tests/scoring/winprob_brute.py``'s :func:`brute_pass_table`
plays the same game by plain recursion). A bigger bank passes a bigger total, so
values no longer grow with the turn total and the keeps are not pruned.

Approximations (documented where the tables are used):

* with a farkle penalty a score below 0 counts as 0 (the state keeps both
  players' streaks: :func:`_solve_streaks`);
* "on the board" is read from the score (0: not yet);
* with ``last_round`` on, a turn is cut at ``target + LAST_ROUND_MARGIN`` points,
  where the player must bank; ties count one half whatever the tie rule.
* piggyback with a farkle penalty or an exact target: the passes are not
  followed (every turn starts with all dice; :func:`passing_modelled` says why).

Speed (``python bench/winprob_speed.py --rules R [--set ...]``, 2 cores, load average
1.6, 2026-12-03): a 10,000-point table takes 6.2 s on the boxed rules (their last
round; 31.9 s with the last build's numpy sweep in the same run: ``--against
8409f6f``), 6.1 on house, 6.3 on elizabethan, 2.6 on busche-neller without a last
round, and on zilch, whose farkle penalty puts both streaks in the state
(:func:`_solve_streaks`: eight Gauss-Seidel passes over nine streak pairs), 70.4 s
(load average 1.5, 2026-12-08). Two things brought zilch there from 135 s, measured
in one run against the build before (``--against``, load average 2.4: 75.6 s
against 135.2 s, 1.79x; house with a 500-point penalty 82.0 s against 119.4 s, 1.46x):
a solve sweep stops where the states past the target no longer depend on the farkle
worth (:class:`Settled`; about half of each sweep ran there), and the passes stop when
the distance left, not the last move, is under ``_TOL`` (:func:`_distance_left`: one
pass fewer). Over-relaxing the passes (0.1 or 0.4 past each new value: 21 passes or
divergence), Anderson mixing of the last three passes (one pass fewer at 4,000
points, none of the rest) and float32 sweeps (the kernel no faster) did not help.
Progressive, passes followed: 15.1 s (load average 1.2), its
offers 193 MB of float64 while solving, stored in 7.6 MB
(:mod:`farklecam.scoring.win_offers`). The presets' tables ship solved
(:mod:`farklecam.scoring.bundle_tables`): only a customised rule set waits.
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
    not with ``last_round``, whose turns are cut (a forced bank at the cut
    can be worth less than rolling on just below it), and not with ``piggyback``
    (a bigger bank also passes a bigger total to the opponent).
    """
    tables = turn_dp.build_tables(rules, prune=not (rules.exact_target or rules.last_round or rules.piggyback))
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
    reach_dec: Any = None


def last_turn(rules: Rules, chance: Chance, length: int) -> LastTurn:
    """The three one-turn tables of :func:`reach_values`, ``length`` units long."""
    tie, tie_dec = reach_values(rules, chance, length, "tie")
    reach, reach_dec = reach_values(rules, chance, length, "reach")
    exact, exact_dec = reach_values(rules, chance, length, "exact")
    return LastTurn(tie, reach, exact, tie_dec, exact_dec, chance.max_pts + 1, reach_dec)


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


def taken_beat_chance(rules: Rules, last: LastTurn, score: Any, lead: Any, carried: Any, dice: int) -> Any:
    """The last-round opponent's worth (win 1, tie 1/2) taking a pass: ``dice`` dice thrown with ``carried`` set aside.

    ``score`` and ``lead`` as in :func:`beat_chance`. The passed total counts toward the
    lead and toward the bank minimum, but the dice must be thrown (and score) before any bank.
    """
    need = np.asarray(lead) - np.asarray(carried)  # further points that tie
    floor = np.maximum(bmin_units(rules, score) - np.asarray(carried), 1)  # fewest further points that may bank
    col = 0 if dice == rules.dice else dice
    rows = last.tie_dec.shape[0] - 1
    tie = last.tie_dec[np.clip(last.low + need, 0, rows), col]
    above = last.reach_dec[np.clip(last.low + floor, 0, rows), col]
    return np.where(need >= floor, tie, above)


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
    w: Any = None  # with passing: (goal, offers, dice) what a pass on offer adds to a turn start (offer_index)
    w_scale: float = 1.0  # ``w`` times this is a chance (``w`` may be stored as whole numbers)
    past: Any = None  # (goal, span) worth of a bank reaching ``goal + x`` against ``j``: :func:`_past_banks`
    settled: Settled | None = None  # past the target, the states no farkle worth changes: :func:`_settle`

    @property
    def passing(self) -> bool:
        """Whether a bank passes its total and dice to the opponent here (:func:`passing_modelled`)."""
        return self.w is not None


def passing_modelled(rules: Rules) -> bool:
    """Whether the table follows progressive's passed dice: piggyback without a farkle penalty or an exact target.

    Why not those two: a penalty already puts both players' streaks in the state, and every pass
    would multiply it again (gigabytes at 10,000 points); an exact target's overshoot hands the bank
    to the opponent, whose pass would have to follow it too. There the passes are left out
    (every turn starts with all dice), and the advice says so.
    """
    return rules.piggyback and not rules.farkle_penalty and not rules.exact_target


def offer_index(banked: Any, total: Any) -> Any:
    """Row of the offers table for a pass of ``total`` units by a banker who now has ``banked`` (``total <= banked``).

    The rows of one banked score sit together, so a mover's own banks (the banker
    ``i + t`` passing ``t``) read a diagonal, and a solved turn writes one block.
    """
    return banked * (banked + 1) // 2 + total


def offers_shape(rules: Rules) -> tuple[int, int, int]:
    """``(goal, offers, dice)``: the offers table's shape (mover's score, :func:`offer_index`, dice passed - 1).

    ``w[i, offer_index(a, T), n - 1]`` is what a turn start at ``(i, a)`` gains from a pass of
    ``n`` dice with ``T`` units on offer: ``max(0, take - V[i, a])``, ``take`` the worth of
    throwing them with ``T`` set aside (the mover takes the pass where that is positive).
    """
    goal = rules.target // STEP
    return goal, goal * (goal + 1) // 2, rules.dice


def make_context(rules: Rules, *, settle: bool = False) -> Context:
    """Build the chance node and the one-turn tables for ``rules``; ``v`` zeros and no offers, for a solve to fill.

    ``settle`` lays out :class:`Settled` (a third of a second on house), which only a solve's sweeps
    read: without it every solve sweep runs to the cut, with the same values bit for bit (a test
    checks), and advice, which sweeps whole turns, never waits for it.
    """
    chance = chance_for(rules)
    goal = rules.target // STEP
    a_max = goal + LAST_ROUND_MARGIN // STEP
    last = last_turn(rules, chance, a_max + chance.max_pts + 2)
    streak = rules.farkle_penalty_streak if rules.farkle_penalty else 1
    penalty = -(-rules.farkle_penalty // STEP)
    v = np.zeros((streak, streak, goal, goal))
    ctx = Context(rules, chance, goal, a_max, last, v, streak, penalty, past=_past_banks(rules, last, goal))
    if settle and rules.last_round and not rules.exact_target:
        ctx.settled = _settle(ctx)
    return ctx


#: Farkle worths at which :func:`_settle` finds where the states past the target stop depending on it.
SETTLE_GRID = np.array([0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 1.0])


@dataclass(frozen=True)
class Settled:
    """The states past the target that no farkle worth up to a bound changes, laid out once per opponent score.

    Why: with a last round a turn is swept up to the cut, ``LAST_ROUND_MARGIN`` past the
    target, about half of every solve sweep; but there a state (score ``goal + x``, ``m``
    dice left, against ``j``) depends only on ``x``, ``j`` and the farkle worth ``F``, and
    from a few hundred points past the target on it banks, or throws dice that cannot
    farkle, whatever ``F`` is up to about 0.9. ``values[j, x, m]`` is that state at
    ``F = 0``; ``start[j, g]`` the ``x`` from which every state is the same at
    ``F = SETTLE_GRID[g]``. A turn's value is non-decreasing in ``F`` (each step of the
    sweep is), so the same values hold for every ``F`` between, to the last bit, and a
    solve sweep of a scenario whose ``F`` is below ``SETTLE_GRID[g]`` stops there and
    reads them as closed forms (:func:`solve_caps`).
    """

    values: Any  # (goal, a_max - goal, dice)
    start: Any  # (goal, len(SETTLE_GRID)) int64, units past the target


def _settle(ctx: Context) -> Settled:
    """Sweep the states past the target for every opponent score at ``F = 0`` and at each :data:`SETTLE_GRID` worth."""
    goal, span = ctx.goal, ctx.a_max - ctx.goal
    i, j = np.full(goal, goal), np.arange(goal)
    low = sweep(ctx, i, j, np.zeros(goal), keep_throw=True, slopes=False).dec[:span]
    floor = int(bmin_units(ctx.rules, goal))  # below it the sweep at ``goal`` may not bank: never read from there
    start = np.empty((goal, SETTLE_GRID.size), dtype=np.int64)
    for g, worth in enumerate(SETTLE_GRID):
        high = sweep(ctx, i, j, np.full(goal, worth), keep_throw=True, slopes=False).dec[:span]
        differs = np.any(low != high, axis=1)  # (span, goal)
        last = np.where(differs.any(axis=0), span - np.argmax(differs[::-1], axis=0), 0)
        start[:, g] = np.maximum(last, floor)
    return Settled(np.ascontiguousarray(low.transpose(2, 0, 1)), start)


def solve_caps(ctx: Context, i: Any, j: Any, f: Any) -> Any:
    """Turn total from which a solve sweep reads closed forms: :func:`bank_caps`, lowered by :class:`Settled`."""
    cap = bank_caps(ctx, i, j)
    settled = ctx.settled
    if settled is None or ctx.passing:
        return cap
    g = np.minimum(np.searchsorted(SETTLE_GRID, f, side="left"), SETTLE_GRID.size - 1)
    lowered = np.maximum(ctx.goal - i + settled.start[j, g], bmin_units(ctx.rules, i))
    return np.where(f <= SETTLE_GRID[-1], np.minimum(cap, lowered), cap)


def _past_banks(rules: Rules, last: LastTurn, goal: int) -> Any:
    """``past[j, x]``: worth of a bank that reaches ``goal + x`` units against an opponent with ``j``.

    What :func:`bank_values` gives there (the opponent's last turn, or a win without a
    last round), laid out once so the compiled sweep reads it instead of numpy building
    it for every sweep; past its last column the worth no longer changes (the one-turn
    tables end there). ``None`` with an exact target, whose banks there depend on ``F``.
    """
    if rules.exact_target:
        return None
    span = len(last.tie) + 1
    if not rules.last_round:
        return np.ones((goal, span))
    j = np.arange(goal)[:, None]
    reached = goal + np.arange(span)[None, :]
    return 1.0 - beat_chance(rules, last, j, np.maximum(reached - j, 1))


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


def bank_caps(ctx: Context, i: Any, j: Any) -> Any:
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


def pass_bank_values(ctx: Context, i: Any, j: Any, t: Any) -> Any:
    """With passing: worth of banking turn total ``t`` (units) with ``m`` dice left, ``(K, dice, T)``.

    ``i``, ``j`` are (K, 1) and ``t`` (1, T); ``m`` 0 is hot dice, which passes all
    dice. Below the target the opponent starts a turn with the pass on offer (the
    offers table, which already holds their better of taking it and starting fresh);
    at or past it they take their last turn, the pass or a fresh one, whichever
    gives them the better chance (:func:`taken_beat_chance`). No slope: nothing here
    depends on this level's ``F``.
    """
    rules, goal, d = ctx.rules, ctx.goal, ctx.rules.dice
    a = i + t
    below = a < goal
    inside_a = np.minimum(a, goal - 1)
    rows = offer_index(inside_a, np.minimum(t, inside_a))
    jj = np.broadcast_to(j, rows.shape)
    passed = np.array([d, *range(1, d)]) - 1  # dice left m -> dice passed - 1 (hot dice pass all)
    fresh_start = ctx.v[0, 0, jj, inside_a][..., None]
    inside = 1.0 - fresh_start - ctx.w_scale * ctx.w[jj, rows][..., passed]  # (K, T, dice)
    if not rules.last_round:
        return np.moveaxis(np.where(below[..., None], inside, 1.0), -1, 1)
    lead = np.maximum(a - j, 1)
    fresh = beat_chance(rules, ctx.last, j, lead)
    out = np.empty(inside.shape)
    tt = np.broadcast_to(t, a.shape)
    for m in range(d):
        take = taken_beat_chance(rules, ctx.last, j, lead, tt, d if m == 0 else m)
        out[..., m] = np.where(below, inside[..., m], 1.0 - np.maximum(fresh, take))
    return np.moveaxis(out, -1, 1)


@dataclass
class Sweep:
    """A solved turn for a batch of scenarios: turn-start value and slope, and every state's value.

    With ``keep_throw`` (else both ``None``): ``dec[t, m, k]``, worth of scenario ``k`` after a
    keep at total ``t`` with ``m`` dice left (0: hot dice); ``throw[t, n, k]``, worth of
    throwing ``n`` dice at ``t``.
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
    offers: int = 0,
) -> Sweep:
    """Solve the turns of scenarios ``(i[k], j[k])`` with farkle values ``f[k]``, down to total ``t_min``.

    ``b[k]`` is the opponent's farkle streak (default 0): what a bank leaves them.

    ``slopes`` off skips the derivatives in ``F`` (advice only reads values: about half the work).

    ``offers`` (with ``keep_throw``): also value throwing at every total below it, past a
    scenario's cap too (there every keep lands on a closed form), since a pass of that
    total may be taken there. A scenario's states past its cap are never changed.

    Scenarios sit on the last (contiguous) axis, sorted by their cap so that the
    ones still below it at total ``t`` are a prefix; the bank values and the closed
    forms past each cap are laid out first (:func:`_fill_plain`, or numpy where a bank
    passes dice or an exact target makes it depend on ``F``: :func:`_numpy_layout`),
    and :func:`_sweep_kernel` runs the steps.
    """
    rules, ch = ctx.rules, ctx.chance
    d = rules.dice
    settled = ctx.settled if not keep_throw and not offers and not ctx.passing else None
    cap0 = bank_caps(ctx, i, j) if settled is None else solve_caps(ctx, i, j, f)
    order = np.argsort(-cap0, kind="stable")
    b = np.zeros(i.size, dtype=np.int64) if b is None else b
    i, j, f, b, cap = i[order], j[order], f[order], b[order], cap0[order]
    k_count = len(i)
    top = max(int(cap.max()), offers)
    width = top + ch.max_pts + 1
    if ctx.past is not None and not ctx.passing:
        flat = np.empty((width * d, k_count))
        bank_v = np.empty((top, 1, k_count))
        reach = width if keep_throw else max(offers - int(cap.min()), 0) + ch.max_pts + 1  # rows a throw reads
        _fill_plain(
            ctx.v, i.astype(np.int64), j.astype(np.int64), b.astype(np.int64), ctx.past, ctx.goal,
            np.maximum(bmin_units(rules, i), 1).astype(np.int64), cap.astype(np.int64), rules.last_round,
            rules.must_roll_after_hot_dice, ch.hot_then_bank, d, reach, flat, bank_v,
            _NO_SETTLED if settled is None else settled.values,
        )  # fmt: skip
        flatb = np.zeros((width * d, k_count)) if slopes else np.zeros((1, 1))
        bank_b = np.zeros((top, 1, k_count))
    else:
        flat, flatb, bank_v, bank_b = _numpy_layout(ctx, i, j, f, b, top, width, slopes)
    g1, q1 = _single(ch, rules)
    start = np.zeros(k_count)
    slope = np.zeros(k_count)
    throw = np.zeros((top, d + 1, k_count)) if keep_throw else np.zeros((1, 1, 1))
    active = np.searchsorted(-cap, -np.arange(top), side="left")  # rows with cap > t
    thrown = np.where(np.arange(top) < offers, k_count, active) if keep_throw else active
    args = (
        flat, flatb, bank_v, bank_b, active, thrown, ch.row_start, ch.base, ch.row_size, ch.row_prob, ch.pf, f,
        g1, q1 - float(ch.pf[1]), rules.single_die_throws > 1, rules.must_roll_after_hot_dice, d, t_min,
        slopes, keep_throw, throw, start, slope,
    )  # fmt: skip
    _sweep_kernel(*args)
    back = np.empty_like(order)
    back[order] = np.arange(k_count)
    if not keep_throw:  # a solve reads the starts only: no reordered copy of every state
        return Sweep(start[back], slope[back], None, None)
    return Sweep(start[back], slope[back], flat.reshape(width, d, k_count)[:, :, back], throw[:, :, back])


def _numpy_layout(
    ctx: Context, i: Any, j: Any, f: Any, b: Any, top: int, width: int, slopes: bool
) -> tuple[Any, Any, Any, Any]:
    """``(flat, flatb, bank_v, bank_b)`` for :func:`_sweep_kernel`, built with numpy (scenarios sorted by cap).

    For banks that pass dice (:func:`pass_bank_values`: a value per dice left) and for an
    exact target (:func:`bank_values`: overshoots worth ``F``, with slopes); the rows past
    each cap hold the closed forms, the kernel overwrites those below it.
    """
    rules, ch = ctx.rules, ctx.chance
    d, k_count = rules.dice, len(i)
    i2, j2, f2 = i[:, None], j[:, None], f[:, None]
    totals = np.arange(width)[None, :]
    if ctx.passing:  # the bank's worth depends on the dice it passes: (K, dice, width)
        banks = pass_bank_values(ctx, i2, j2, totals)
        banks_b = np.zeros((k_count, 1, width))
    else:
        found = bank_values(ctx, i2, j2, f2, totals, b[:, None])
        banks, banks_b = found[0][:, None, :], found[1][:, None, :]
    shape = (width, d, k_count)
    decb: Any
    if rules.exact_target:
        dec, decb = np.repeat(f[None, None, :], width * d, axis=0).reshape(shape), np.ones(shape)
    elif rules.last_round:
        dec = np.array(np.broadcast_to(banks, (k_count, d, width)).transpose(2, 1, 0), order="C")
        decb = np.array(np.broadcast_to(banks_b, (k_count, d, width)).transpose(2, 1, 0), order="C")
    else:
        dec, decb = np.ones(shape), np.zeros(shape)
    if rules.must_roll_after_hot_dice and not rules.exact_target and not rules.last_round:
        dec[:, 0, :] = ch.hot_then_bank
    allowed = np.arange(top)[None, None, :] >= np.maximum(bmin_units(rules, i), 1)[:, None, None]
    bank_v = np.ascontiguousarray(np.where(allowed, banks[:, :, :top], NEG).transpose(2, 1, 0))
    bank_b = np.ascontiguousarray(banks_b[:, :, :top].transpose(2, 1, 0))
    flatb = decb.reshape(width * d, k_count) if slopes else np.zeros((1, 1))
    return dec.reshape(width * d, k_count), flatb, bank_v, bank_b


@numba.njit(cache=True, nogil=True)
def _fill_plain(
    v: Any, i: Any, j: Any, b: Any, past: Any, goal: int, bmin: Any, cap: Any, last_round: bool, must_roll: bool,
    hot_then_bank: float, d: int, reach: int, flat: Any, bank_v: Any, settled: Any,
) -> None:  # fmt: skip
    """Bank values ``bank_v[t, 0, k]`` (``-inf`` below the bank minimum) and each scenario's closed forms past its cap.

    A bank of ``t`` is worth ``1 - v[b, 0, j, i + t]`` below the target (the opponent
    starts a turn, the mover's streak gone), ``past[j, i + t - goal]`` at or past it.
    Past the cap the turn banks at once (``last_round``) or has won (1; with
    ``must_roll`` the hot-dice state's forced throw is ``hot_then_bank``): as
    :func:`bank_values` and :func:`sweep` lay them out; with a last round, between a
    cap that :class:`Settled` lowered and the cut, its ``settled[j, a - goal]``. Rows more than ``reach`` past a
    scenario's cap are never read and stay unwritten; scenarios on the inner loop keep
    the writes contiguous.
    """
    width = flat.shape[0] // d
    top = bank_v.shape[0]
    span = past.shape[1]
    for t in range(width):
        for k in range(flat.shape[1]):
            if t >= cap[k] + reach:
                continue
            a = i[k] + t
            bank = 1.0 - v[b[k], 0, j[k], a] if a < goal else past[j[k], min(a - goal, span - 1)]
            if t < top:
                bank_v[t, 0, k] = bank if t >= bmin[k] else -np.inf
            if t >= cap[k]:
                closed = bank if last_round else 1.0
                if a - goal < settled.shape[1]:  # before the cut: the settled states (a >= goal here)
                    for m in range(d):
                        flat[t * d + m, k] = settled[j[k], a - goal, m]
                    continue
                for m in range(d):
                    flat[t * d + m, k] = closed
                if must_roll and not last_round:
                    flat[t * d, k] = hot_then_bank


_NO_SETTLED = np.zeros((1, 0, 1))  # for :func:`_fill_plain`: nothing settled
_THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
_POOL = ThreadPoolExecutor(_THREADS, thread_name_prefix="winprob") if _THREADS > 1 else None
_MIN_SPLIT = 4000  # turn totals (all scenarios') below which one thread sweeps alone


def turn_starts(
    ctx: Context, i: Any, j: Any, f: Any, *, slopes: bool, b: Any = None, offers: Any = None
) -> tuple[Any, Any]:
    """Turn-start values and (with ``slopes``) slopes in ``F`` of many scenarios: :func:`sweep`, on every core.

    ``offers``, where given, an array ``(K, goal, dice)``, receives each scenario's worth of
    taking a pass: ``offers[k, T, n - 1]``, throwing ``n`` dice with ``T`` units set aside.

    The scenarios are independent, and the compiled sweep holds no GIL, so the
    threads take shares of about equal work (a scenario's work is its number of
    turn totals); few states are swept by one thread, whose hand-off costs less.
    """
    steps = bank_caps(ctx, i, j) if offers is not None else solve_caps(ctx, i, j, f)
    order = np.argsort(-steps, kind="stable")
    total = int(steps.sum())
    b = np.zeros(i.size, dtype=np.int64) if b is None else b
    wanted = 0 if offers is None else ctx.goal

    def run(part: Any) -> Sweep:
        return sweep(ctx, i[part], j[part], f[part], b=b[part], slopes=slopes, keep_throw=wanted > 0, offers=wanted)

    if _POOL is None or total < _MIN_SPLIT:
        parts = [np.arange(i.size)]
        swept: Any = [run(parts[0])]
    else:
        cuts = np.searchsorted(np.cumsum(steps[order]), total * np.arange(1, _THREADS) / _THREADS) + 1
        parts = [part for part in np.split(order, cuts) if part.size]
        swept = _POOL.map(run, parts)
    start, slope = np.empty(i.size), np.empty(i.size)
    for part, found in zip(parts, swept, strict=True):
        start[part], slope[part] = found.start, found.slope
        if offers is not None:
            offers[part] = found.throw[:wanted, 1:, :].transpose(2, 0, 1)
    return start, slope


@numba.njit(cache=True, nogil=True)
def _sweep_kernel(
    flat: Any, flatb: Any, bank_v: Any, bank_b: Any, active: Any, thrown: Any, row_start: Any, base: Any,
    row_size: Any, row_prob: Any, pf: Any, f: Any, g1: float, q1_extra: float, extra: bool, must_roll: bool, d: int,
    t_min: int, slopes: bool, keep_throw: bool, throw: Any, start: Any, slope: Any,
) -> None:  # fmt: skip
    """The turn's backward sweep, compiled: each state's best keep per roll, the throw, then bank or throw on.

    Writes the states of ``flat`` (``(total * D + dice left, scenario)``; rows past each
    scenario's cap hold its closed forms) from the top total down to ``t_min``, and
    ``start`` (and with ``slopes`` the slopes in ``F``, from ``flatb``). At total ``t``
    the first ``active[t]`` scenarios' states are written and the first ``thrown[t]``
    (at least as many) scenarios' throws valued (into ``throw`` with ``keep_throw``).
    ``bank_v[t, m, k]`` is a bank's worth with ``m`` dice left, or the same for every
    ``m`` where its middle axis has length 1. Each step reads only states of larger
    totals (a keep scores at least one unit), and scenarios sit on the inner,
    contiguous axis, so the loops vectorise. Why compiled: a step is about a thousand
    keeps over a few dozen scenarios, too fine for numpy calls, whose fixed cost was
    half of the solve.

    Ties between keeps go to the first (any one gives a valid Newton step, see :func:`_newton`).
    """
    k_all = flat.shape[1]
    by_dice = bank_v.shape[1] > 1
    best = np.empty(k_all)
    best_b = np.empty(k_all)
    w = np.empty((d + 1, k_all))
    wb = np.empty((d + 1, k_all))
    for t in range(active.shape[0] - 1, t_min - 1, -1):
        n = active[t]
        nt = thrown[t]
        if nt == 0:
            continue
        off = t * d
        w[:, :nt] = 0.0
        if slopes:
            wb[:, :nt] = 0.0
        for r in range(row_start.shape[0] - 1):
            row = off + base[row_start[r]]
            for k in range(nt):
                best[k] = flat[row, k]
            if slopes:
                for k in range(nt):
                    best_b[k] = flatb[row, k]
            for o in range(row_start[r] + 1, row_start[r + 1]):
                row = off + base[o]
                if slopes:
                    for k in range(nt):
                        if flat[row, k] > best[k]:
                            best[k] = flat[row, k]
                            best_b[k] = flatb[row, k]
                else:
                    for k in range(nt):
                        best[k] = max(best[k], flat[row, k])
            m, p = row_size[r], row_prob[r]
            for k in range(nt):
                w[m, k] += p * best[k]
            if slopes:
                for k in range(nt):
                    wb[m, k] += p * best_b[k]
        for k in range(nt):
            if extra:  # a single die may be thrown again: its farkles are rethrows first
                w[1, k] = w[1, k] * g1 + q1_extra * f[k]
            for m in range(d + 1):
                w[m, k] += pf[m] * f[k]
            if keep_throw:
                for m in range(d + 1):
                    throw[t, m, k] = w[m, k]
            if k >= n:  # past this scenario's cap: only its throws were wanted
                continue
            for m in range(1, d):  # bank or throw on
                bank = bank_v[t, m if by_dice else 0, k]
                flat[off + m, k] = max(bank, w[m, k])
            bank = bank_v[t, 0, k]
            flat[off, k] = w[d, k] if must_roll else max(bank, w[d, k])
            if slopes:
                if extra:
                    wb[1, k] = wb[1, k] * g1 + q1_extra
                for m in range(d + 1):
                    wb[m, k] += pf[m]
                for m in range(1, d):
                    mm = m if by_dice else 0
                    flatb[off + m, k] = bank_b[t, mm, k] if bank_v[t, mm, k] >= w[m, k] else wb[m, k]
                hot_bank = not must_roll and bank >= w[d, k]
                flatb[off, k] = bank_b[t, 0, k] if hot_bank else wb[d, k]
            if t == t_min:
                start[k] = w[d, k]
                if slopes:
                    slope[k] = wb[d, k]


# ---------------------------------------------------------------------- the whole table
def solve_table(rules: Rules) -> tuple[Any, LastTurn, int]:
    """Every turn-start value ``V[i, j]`` for ``rules`` (units below the target); also the one-turn tables.

    Returns ``(V, last, passes)``: ``passes`` is the number of batch sweeps run.
    """
    ctx, passes = solve_context(rules)
    return ctx.v, ctx.last, passes


def solve_context(rules: Rules) -> tuple[Context, int]:
    """The solved :class:`Context` of ``rules`` (its ``v``, and with passing its offers ``w``) and the sweeps run."""
    ctx = make_context(rules, settle=True)
    if passing_modelled(rules):
        ctx.w = np.zeros(offers_shape(rules))
    passes = _solve_pairs(ctx) if ctx.streak == 1 else _solve_streaks(ctx)
    return ctx, passes


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
        take = np.zeros((i.size, ctx.goal, ctx.rules.dice)) if ctx.passing else None
        c, b, f, todo, runs = _secant(ctx, i, j, partner, f, b, take)
        passes += runs
        if todo.size:
            passes += _newton(ctx, i, j, partner, f, c, b, todo, take)
        v[i, j] = c + b * f
        slopes[i, j] = b
        if take is not None:
            _store_offers(ctx, i, j, take)
    return passes


def _store_offers(ctx: Context, i: Any, j: Any, take: Any) -> None:
    """Write a solved level's offers: mover ``i[k]`` after banker ``j[k]`` passed ``T <= j[k]``, taken or not.

    The last sweep of each turn ran at an ``F`` within ``_TOL`` of the solution, so
    its throws are the solved worths of taking each pass.
    """
    v = ctx.v[0, 0]
    for k in range(i.size):
        rows = offer_index(j[k], 0)
        ctx.w[i[k], rows : rows + j[k] + 1] = np.maximum(take[k, : j[k] + 1] - v[i[k], j[k]], 0.0)


def _sweep_rows(ctx: Context, i: Any, j: Any, f: Any, rows: Any, take: Any, *, slopes: bool = False) -> tuple[Any, Any]:
    """:func:`turn_starts` of the turns ``rows`` of a level at farkle worths ``f`` (theirs), keeping their offers."""
    if take is None:
        return turn_starts(ctx, i[rows], j[rows], f, slopes=slopes)
    offers = np.empty((rows.size, *take.shape[1:]))
    found = turn_starts(ctx, i[rows], j[rows], f, slopes=slopes, offers=offers)
    take[rows] = offers
    return found


def _solve_streaks(ctx: Context) -> int:
    """With a farkle penalty: Gauss-Seidel passes over the whole table until no value moves.

    Within a sum a farkle moves the state to a larger streak total ``a + b``
    (the opponent's turn, the mover's streak one up), so the streak totals are
    solved from the largest down, each with its ``F`` known: one sweep each, no
    secant. Only the penalty reaches back, to a smaller sum (``i - penalty``):
    those values are last pass's, so passes repeat until none moves by more
    than ``_TOL``. Returns the sweeps run.

    Each sweep takes one streak total of several sums at once (:func:`_wavefront`).
    """
    k, v = ctx.streak, ctx.v
    sweeps = _solve_pairs(ctx)  # the table without the penalty: the first guess
    v[...] = v[0, 0]
    pairs = [(a, g - a) for g in range(2 * k - 2, -1, -1) for a in range(k) if 0 <= g - a < k]
    groups = [[(a, b) for a, b in pairs if a + b == g] for g in range(2 * k - 2, -1, -1)]
    batches = _wavefront(ctx, groups)
    moves: list[float] = []
    for _ in range(_MAX_PASSES * 4):
        moved = 0.0
        for a, b, i, j in batches:
            start, _ = turn_starts(ctx, i, j, farkle_worth(ctx, i, j, a, b), b=b, slopes=False)
            moved = max(moved, float(np.abs(start - v[a, b, i, j]).max()))
            v[a, b, i, j] = start
            sweeps += 1
        moves.append(moved)
        if _distance_left(moves) <= _TOL:
            break
    return sweeps


def _distance_left(moves: list[float]) -> float:
    """How far the last pass may still be from the fixed point, from the largest moves of the passes so far.

    A pass contracts the distance to the fixed point by some ``rho < 1``, so after a move
    ``m`` at most ``m * rho / (1 - rho)`` is left. ``rho`` is read from the moves: the
    larger of the last two ratios (on zilch they run 0.01-0.1, with no trend); while it
    is not yet known, or above one half, the move itself is the bound, as a plain
    stopping rule would take it. Why: the last pass of the plain rule (a move under
    ``_TOL``) only confirms what the one before already held to about ``_TOL / 20``.
    """
    if len(moves) < 3 or moves[-1] == 0.0:
        return moves[-1]
    rho = max(moves[-1] / max(moves[-2], 1e-300), moves[-2] / max(moves[-3], 1e-300))
    return moves[-1] * rho / (1.0 - rho) if rho < 0.5 else moves[-1]


def _wavefront(ctx: Context, groups: list[list[tuple[int, int]]]) -> list[tuple[Any, Any, Any, Any]]:
    """One pass's sweeps ``(a, b, i, j)``: sweep ``w`` takes streak total ``groups[g]`` of the ``(w - g)``-th sum.

    Why: one sweep per sum and streak total made about 2,000 small sweeps a pass; this
    makes 400 larger ones (about a fifth less work in all, from fewer set-ups). A turn
    reads the larger streak total of its own sum (swept one sweep earlier), the
    penalty's smaller sum (last pass's, as before) and banks, at least the bank
    minimum larger in sum with the mover's streak gone. Where every bank is more
    units than the largest streak total (zilch's 300) those too were swept earlier,
    so the values are those of one sweep per sum and streak total, to the last bit;
    where a bank can be smaller, a few of the nearest sums' are last pass's, which
    changes the way to the fixed point, not the fixed point: passes go on until none
    moves by more than ``_TOL`` (house with a 500 penalty: the same ten passes,
    values within 3e-13).
    """
    levels = list(_levels(ctx.goal))
    batches = []
    for w in range(len(levels) + len(groups) - 1):
        parts = []
        for g, group in enumerate(groups):
            if 0 <= w - g < len(levels):
                i, j = levels[w - g]
                parts += [(np.full(i.size, a), np.full(i.size, b), i, j) for a, b in group]
        a, b, i, j = (np.concatenate(column) for column in zip(*parts, strict=True))
        batches.append((a, b, i, j))
    return batches


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


def _secant(
    ctx: Context, i: Any, j: Any, partner: Any, f: Any, b: Any, take: Any = None
) -> tuple[Any, Any, Any, Any, int]:
    """Solve a level by sweeps of values alone, each turn's line through its last two points (secant).

    A values-only sweep costs about 0.4 of one that also tracks slopes. The line
    starts at the guessed slope ``b``. A pair is solved when neither of its
    ``F`` moves: each line then passes through the turn's value at its ``F``, so
    the pair's values are the exact fixed point. Returns ``(c, b, f, todo, sweeps)``,
    ``todo`` the turns (whole pairs) still unsolved after ``_SECANT_STEPS``. ``take``, with
    passing, receives each turn's offers from its last sweep.
    """
    g, _ = _sweep_rows(ctx, i, j, f, np.arange(i.size), take)
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
        found, _ = _sweep_rows(ctx, i, j, new_f[todo], todo, take)
        step = new_f[todo] - f[todo]
        wide = np.abs(step) > _MIN_STEP  # too short a step gives no slope worth its rounding
        secant = np.divide(found - g[todo], step, out=b[todo].copy(), where=wide)
        b[todo] = np.clip(secant, 0.0, _MAX_SLOPE)
        c[todo] = found - b[todo] * new_f[todo]
        f[todo], g[todo] = new_f[todo], found
    return c, b, f, todo, runs


def _newton(ctx: Context, i: Any, j: Any, partner: Any, f: Any, c: Any, b: Any, todo: Any, take: Any = None) -> int:
    """Finish the turns ``todo`` of a level by Newton's method; ``f``, ``c``, ``b`` updated in place.

    Each sweep tracks the exact slope; a values-only sweep at the new ``F`` then
    checks that both turns of a pair are still on their lines. Returns the sweeps run.
    """
    runs = 0
    for _ in range(_MAX_PASSES):
        runs += 1
        start, b[todo] = _sweep_rows(ctx, i, j, f[todo], todo, take, slopes=True)
        c[todo] = start - b[todo] * f[todo]
        new_f = _pair_solution(c, b, partner)
        moved = np.abs(new_f - f) > _TOL
        f[:] = new_f
        if not moved.any():
            break
        check = np.nonzero(moved | moved[partner])[0]
        runs += 1
        found, _ = _sweep_rows(ctx, i, j, f[check], check, take)
        on_line = np.ones(i.size, dtype=bool)
        on_line[check] = np.abs(found - (c[check] + b[check] * f[check])) <= _TOL
        todo = np.nonzero(~(on_line & on_line[partner]))[0]
        if todo.size == 0:
            break
    return runs
