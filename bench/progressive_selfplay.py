"""Progressive, two players, both playing the win advisor: how often the first player wins, against the table.

The two-player win table follows progressive's passes (``farklecam.scoring.winprob_dp``): it
says the first player wins ``first_player_win``. This plays the games and counts. Two ways:

* fast (default): the advisor's decisions read once into arrays, as ``advise_win`` and
  ``advise_pass_win`` read them (every turn swept from the table: its keeps, bank or throw
  on, take or start fresh; the last turn from the one-turn tables that also value a bank
  reaching the target), then the games played by a compiled loop from fair random dice;
  each keep is chosen among the legal keeps of the thrown faces (``legal_set_asides``);
* ``--engine``: each game a ``farklecam.scoring.game.Game``, every decision asked of
  ``advise_pass_win`` and ``advise_win`` themselves (the last turn through ``last_round``):
  the advisor as a player meets it, a few games a second.

``--check N`` first compares N random decisions of the arrays with the advisor's answers.

Run (the figures in the report):

    python bench/progressive_selfplay.py --games 100000 --seed 1 --check 200
    python bench/progressive_selfplay.py --engine --games 300 --set target=2000
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.scoring import win_offers, winprob, winprob_dp
from farklecam.scoring.actions import Bank, Keep, PassedRoll, Roll
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.pass_win import advise_pass_win
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides

STEP = winprob_dp.STEP


@dataclass(frozen=True)
class Policy:
    """The advisor's two-player decisions under one rule set, as arrays (units of 50 points).

    ``dec[i, j, t, m]``: worth of the state after a keep at turn total ``t`` with ``m`` dice
    left (0: hot dice) for a mover with ``i`` against ``j``; ``bank[i, j, t, m]``: bank there;
    ``take[i, j, T, n - 1]``: take a pass of ``n`` dice with ``T``; ``caps[i]``: the total
    from which a turn banks at once. The last turn reads the one-turn tables (``tie_dec``,
    ``reach_dec`` from row ``low``, starts ``tie0`` and ``reach0``). The dice: ``ms_of``
    maps a throw (faces as base-6 digits, offset ``ms_off[n]``) to its multiset, whose keeps
    are ``opt_pts``/``opt_left`` from ``opt_start``.
    """

    rules: Rules
    first_player_win: float
    goal: int
    caps: Any
    dec: Any
    bank: Any
    take: Any
    tie_dec: Any
    reach_dec: Any
    tie0: Any
    reach0: Any
    low: int
    bmin_on: int
    bmin_off: int
    ms_off: Any
    ms_of: Any
    opt_start: Any
    opt_pts: Any
    opt_left: Any


def _dice_tables(rules: Rules) -> tuple[Any, Any, Any, Any, Any]:
    """Every throw of 1..dice dice mapped to its multiset, and each multiset's keeps ``(units, dice left)``."""
    d = rules.dice
    ids: dict[tuple[int, ...], int] = {}
    starts, pts, left = [0], [], []
    offsets = np.zeros(d + 2, dtype=np.int64)
    codes: list[int] = []
    for n in range(1, d + 1):
        offsets[n + 1] = offsets[n] + 6**n
        for code in range(6**n):
            faces = tuple(sorted((code // 6**k) % 6 + 1 for k in range(n)))
            if faces not in ids:
                ids[faces] = len(ids)
                keeps = sorted(
                    {(o.points // STEP, 0 if o.hot_dice else o.dice_left) for o in legal_set_asides(faces, rules)}
                )
                pts += [p for p, _ in keeps]
                left += [m for _, m in keeps]
                starts.append(len(pts))
            codes.append(ids[faces])
    return (
        offsets,
        np.asarray(codes, dtype=np.int64),
        np.asarray(starts, dtype=np.int64),
        np.asarray(pts, dtype=np.int64),
        np.asarray(left, dtype=np.int64),
    )


def build_policy(rules: Rules) -> Policy:
    """Sweep every turn of ``rules``' solved table once, as the advisor does, and keep its decisions."""
    table = winprob.solve_win(rules)
    if not table.passing:
        raise SystemExit("these rules' table does not follow passes (piggyback, no penalty, no exact target)")
    ctx = winprob_dp.make_context(rules)
    ctx.v, ctx.w, ctx.w_scale = table.streak_values, table.offers, win_offers.SCALE
    goal, d = ctx.goal, rules.dice
    everyone = np.arange(goal)
    caps = np.asarray(winprob_dp.bank_caps(ctx, everyone, np.zeros(goal, dtype=np.int64)), dtype=np.int64)
    width = max(int(caps.max()), goal) + ctx.chance.max_pts + 1
    dec = np.zeros((goal, goal, width, d), dtype=np.float32)
    bank = np.zeros((goal, goal, width, d), dtype=np.uint8)
    take = np.zeros((goal, goal, goal, d), dtype=np.uint8)
    bmin = winprob_dp.bmin_units(rules, everyone)
    for i in range(goal):
        mine = np.full(goal, i)
        f = 1.0 - table.values[everyone, i]  # a farkle: the opponent's turn, nothing passed
        swept = winprob_dp.sweep(ctx, mine, everyone, f, keep_throw=True, slopes=False, offers=goal)
        rows = swept.dec.shape[0]
        after = swept.dec.transpose(2, 0, 1)  # (j, t, m)
        totals = np.arange(rows)[None, :]
        banks = winprob_dp.pass_bank_values(ctx, mine[:, None], everyone[:, None], totals).transpose(0, 2, 1)
        allowed = (totals >= max(int(bmin[i]), 1))[:, :, None]
        forced = (totals >= caps[i])[:, :, None]
        dec[i, :, :rows] = after
        bank[i, :, :rows] = forced | (allowed & (banks == after))
        take[i] = swept.throw[:goal, 1:, :].transpose(2, 0, 1) > swept.start[:, None, None]
    offsets, codes, starts, pts, left = _dice_tables(rules)
    last = ctx.last
    return Policy(
        rules, table.first_player_win, goal, caps, dec, bank, take, last.tie_dec, last.reach_dec, last.tie,
        last.reach, last.low, int(winprob_dp.bmin_units(rules, 1)), int(winprob_dp.bmin_units(rules, 0)),
        offsets, codes, starts, pts, left,
    )  # fmt: skip


@numba.njit(cache=False)
def _throw(n: int, ms_off: Any, ms_of: Any) -> int:
    code, place = 0, 1
    for _ in range(n):
        code += np.random.randint(0, 6) * place
        place *= 6
    return int(ms_of[ms_off[n] + code])


@numba.njit(cache=False)
def _last_turn(
    mine: int, bar: int, offer_t: int, offer_n: int, d: int, tie_dec: Any, reach_dec: Any, tie0: Any, reach0: Any,
    low: int, bm: int, ms_off: Any, ms_of: Any, opt_start: Any, opt_pts: Any, opt_left: Any,
) -> int:  # fmt: skip
    """The last player's turn (``mine`` against ``bar``, a pass on offer): the units it banks (0: nothing)."""
    gap = bar - mine
    rows = tie_dec.shape[0] - 1
    fresh = tie0[min(gap, tie0.shape[0] - 1)] if gap >= bm else reach0[min(bm, reach0.shape[0] - 1)]
    need, floor = gap - offer_t, max(bm - offer_t, 1)
    col = 0 if offer_n == d else offer_n
    taken = 0.0
    if offer_t > 0:
        if need >= floor:
            taken = tie_dec[min(max(low + need, 0), rows), col]
        else:
            taken = reach_dec[min(max(low + floor, 0), rows), col]
    t, n = (offer_t, offer_n) if offer_t > 0 and taken > fresh else (0, d)
    while True:
        ms = _throw(n, ms_off, ms_of)
        if opt_start[ms] == opt_start[ms + 1]:
            return 0
        best, best_p, best_m = -1.0, 0, 0
        for o in range(opt_start[ms], opt_start[ms + 1]):
            u, m = t + opt_pts[o], opt_left[o]
            if gap >= bm:
                value = tie_dec[min(max(low + gap - u, 0), rows), m]
            else:
                value = reach_dec[min(max(low + bm - u, 0), rows), m]
            if value > best:
                best, best_p, best_m = value, opt_pts[o], m
        t += best_p
        if t >= bm and t > gap:
            return t
        if t >= bm and t == gap and tie_dec[low, best_m] <= 0.5:  # a tie in hand is worth more than a throw
            return t
        n = best_m if best_m > 0 else d


@numba.njit(cache=False)
def _play(
    games: int, seed: int, goal: int, d: int, caps: Any, dec: Any, bank: Any, take: Any, tie_dec: Any,
    reach_dec: Any, tie0: Any, reach0: Any, low: int, bmin_on: int, bmin_off: int, ms_off: Any, ms_of: Any,
    opt_start: Any, opt_pts: Any, opt_left: Any, out: Any,
) -> None:  # fmt: skip
    """Play ``games`` games from ``seed``; ``out[g]``: the first player's result (1 win, 1/2 tie, 0 loss)."""
    np.random.seed(seed)
    scores = np.zeros(2, dtype=np.int64)
    for g in range(games):
        scores[:] = 0
        mover, offer_t, offer_n = 0, 0, 0
        while True:
            i, j = scores[mover], scores[1 - mover]
            t, n = 0, d
            if offer_t > 0 and take[i, j, offer_t, offer_n - 1]:
                t, n = offer_t, offer_n
            banked, left = False, 0
            while True:
                ms = _throw(n, ms_off, ms_of)
                if opt_start[ms] == opt_start[ms + 1]:
                    break  # a farkle: nothing banked, nothing passed
                best, best_p, best_m = -1.0, 0, 0
                for o in range(opt_start[ms], opt_start[ms + 1]):
                    value = dec[i, j, t + opt_pts[o], opt_left[o]]
                    if value > best:
                        best, best_p, best_m = value, opt_pts[o], opt_left[o]
                t, left = t + best_p, best_m
                if t >= caps[i] or bank[i, j, t, left]:
                    banked = True
                    break
                n = left if left > 0 else d
            if not banked:
                offer_t, offer_n = 0, 0
                mover = 1 - mover
                continue
            scores[mover] += t
            offer_t, offer_n = t, left if left > 0 else d
            if scores[mover] >= goal:  # the other player's last turn, the pass on offer
                other = scores[1 - mover]
                bm = bmin_on if other > 0 else bmin_off
                gain = _last_turn(
                    other, scores[mover], offer_t, offer_n, d, tie_dec, reach_dec, tie0, reach0, low, bm, ms_off,
                    ms_of, opt_start, opt_pts, opt_left,
                )  # fmt: skip
                final = other + gain
                result = 0.5 if final == scores[mover] else (1.0 if final < scores[mover] else 0.0)
                out[g] = result if mover == 0 else 1.0 - result
                break
            mover = 1 - mover


def play_fast(policy: Policy, games: int, seed: int) -> Any:
    """The first player's result in each of ``games`` games of the policy against itself."""
    out = np.zeros(games)
    p = policy
    _play(
        games, seed, p.goal, p.rules.dice, p.caps, p.dec, p.bank, p.take, p.tie_dec, p.reach_dec, p.tie0,
        p.reach0, p.low, p.bmin_on, p.bmin_off, p.ms_off, p.ms_of, p.opt_start, p.opt_pts, p.opt_left, out,
    )  # fmt: skip
    return out


# ---------------------------------------------------------------------- the advisor itself
def play_engine(rules: Rules, seed: int) -> float:
    """One game through :class:`Game`, each decision the advisor's; the first player's result."""
    game = Game(rules, ("A", "B"), first_player="A")
    dice = random.Random(seed)
    action = "roll"
    while not game.is_over:
        state = game.state
        me = state.current or ""
        order = (me, "B" if me == "A" else "A")
        scores = [game.scores[p] for p in order]
        if state.phase is Phase.AWAITING_KEEP:
            advice = winprob.advise_win(state.roll or (), rules, scores, turn_total=state.turn_total)
            game.apply(Keep(advice.keep))
            action = advice.action or "roll"
        elif state.phase is Phase.CAN_BANK_OR_ROLL and action == "bank":
            game.apply(Bank())
        elif state.phase is Phase.CAN_BANK_OR_ROLL:
            game.apply(Roll(tuple(dice.randint(1, 6) for _ in range(state.dice_to_throw))))
        else:
            offer = state.passed
            if offer is not None and advise_pass_win(rules, scores, offer.total, offer.dice).take:
                game.apply(PassedRoll(tuple(dice.randint(1, 6) for _ in range(offer.dice))))
            else:
                game.apply(Roll(tuple(dice.randint(1, 6) for _ in range(state.dice_to_throw))))
    winners = game.winners
    return 1.0 / len(winners) if "A" in winners else 0.0


# ---------------------------------------------------------------------- the arrays against the advisor
def check(policy: Policy, samples: int, seed: int) -> dict[str, Any]:
    """Compare random decisions of the arrays with ``advise_pass_win`` and ``advise_win``; the disagreements.

    A keep agrees where its worth equals the advisor's best (ties between keeps are equal
    choices); bank or throw on agrees where the advisor's chances of the two differ by
    more than the arrays' float32 rounding.
    """
    rules, goal, d = policy.rules, policy.goal, policy.rules.dice
    rng = random.Random(seed)
    worst, takes, banks = 0.0, 0, 0
    for _ in range(samples):
        i, j = rng.randrange(goal), rng.randrange(1, goal)
        total, dice = rng.randint(1, j), rng.randint(1, d)
        found = advise_pass_win(rules, (i * STEP, j * STEP), total * STEP, dice)
        takes += found.take != bool(policy.take[i, j, total, dice - 1])
        n = rng.randint(1, d)
        roll = tuple(rng.randint(1, 6) for _ in range(n))
        t = rng.randrange(0, min(int(policy.caps[i]), 60))
        advice = winprob.advise_win(roll, rules, (i * STEP, j * STEP), turn_total=t * STEP)
        if advice.farkle:
            continue
        values = [
            (float(policy.dec[i, j, t + o.points // STEP, 0 if o.hot_dice else o.dice_left]), o)
            for o in legal_set_asides(roll, rules)
        ]
        value, option = max(values, key=lambda v: v[0])
        worst = max(worst, abs(value - advice.win))
        u, m = t + option.points // STEP, 0 if option.hot_dice else option.dice_left
        chosen = next(o for o in (advice, *advice.alternatives) if o.keep == option.keep)
        clear = chosen.bank_win is None or abs(chosen.bank_win - (chosen.roll_win or 0.0)) > 1e-6
        banks += clear and (chosen.action == "bank") != bool(u >= policy.caps[i] or policy.bank[i, j, u, m])
    return {"samples": samples, "take_disagreements": takes, "bank_disagreements": banks, "keep_worth_gap": worst}


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="progressive")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", action="store_true", help="play through Game, asking the advisor each time")
    parser.add_argument("--check", type=int, default=0, metavar="N", help="first compare N decisions with the advisor")
    args = parser.parse_args()
    rules = get_rules(args.rules).with_settings(args.set)
    start = time.perf_counter()
    report: dict[str, Any] = {"rules": args.rules, "set": args.set, "games": args.games, "seed": args.seed}
    if args.engine:
        table_win = winprob.solve_win(rules).first_player_win
        results = np.array([play_engine(rules, args.seed * 1_000_003 + g) for g in range(args.games)])
    else:
        policy = build_policy(rules)
        table_win = policy.first_player_win
        report["build_s"] = round(time.perf_counter() - start, 1)
        if args.check:
            report["check"] = check(policy, args.check, args.seed)
        results = play_fast(policy, args.games, args.seed)
    mean = float(results.mean())
    error = float(results.std(ddof=1) / math.sqrt(len(results)))
    report.update(
        mode="engine" if args.engine else "fast",
        table_first_player_win=round(table_win, 5),
        simulated_first_player_win=round(mean, 5),
        standard_error=round(error, 5),
        difference=round(mean - table_win, 5),
        seconds=round(time.perf_counter() - start, 1),
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
