"""The last round, exactly: the chance to win of each play when someone has reached the target.

Once a score reaches the target (with ``last_round`` on), every other player has one
last turn, in turn order; then the highest score wins (:mod:`farklecam.scoring.play`).
Each of those turns is a race against a known best score, so the chance to win is
computed here without any table, for any number of players:

* The scores are given in turn order from the player to move. The first of the
  others at or past the target reached it first (the *trigger*); the players between
  the mover and the trigger still have their last turn, in that order
  (:func:`read_seats`). Those after the trigger have played theirs.
* Every player plays to maximise their own chance to win, knowing who is still to
  play: the last one only has to beat the best score; one with others after them
  weighs a bigger lead against the risk of throwing on. The mover's chance of each
  play is computed against those players (:mod:`farklecam.scoring.last_round_dp`).
* Leaders tied at the end share the win: each counts ``1 / leaders`` (``tie =
  shared``). With ``tie = extra_round`` a tie is valued as that same even share of
  the tie-break, an approximation (:func:`approximation`).
* Piggyback (progressive): a bank passes its dice and total to the next player, who
  takes them when that is worth more to them than a fresh turn.
* Exact target: only a bank landing on the target ties the leader; overshooting
  loses. Where later players remain, the overshoot's gift to the lowest score is not
  followed (an approximation, :func:`approximation`).

Conventions where a player is indifferent: a bank that is worth at least throwing on
is taken (never one worth nothing to them); among equally good keeps, the one with
the most points, then the most dice left; a pass is taken only when strictly better.
A turn whose total reaches the cut (:func:`farklecam.scoring.last_round_dp.cut_units`,
reached with a chance below 1e-13; for the mover, that far past what they hold now)
banks at once and counts as the cut, so every chance here is exact to about 1e-12.
``tests/scoring/last_round_brute.py`` plays the same game by plain recursion.

Scores below 0 (farkle penalties) count as they are; "on the board" is read from a
score above 0, and for the mover from ``on_board``.

Speed (two shared cores, house, elizabethan, zilch and progressive): what the players
after the mover do is solved once per set of scores and kept; then each turn total
takes about 2 ms. Once: 0.1 s with one player still to play, 0.4-1.1 s with two (a
table of four), 1.2-1.8 s with three.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from farklecam.errors import IllegalActionError
from farklecam.scoring import last_round_dp as dp
from farklecam.scoring.rules import Rules, TieRule

__all__ = ["LastRoundSeats", "MoverTurn", "approximation", "is_exact", "mover_turn", "read_seats"]

STEP = dp.STEP


@dataclass(frozen=True, slots=True)
class LastRoundSeats:
    """Who still plays in a last round, from the mover's point of view (points).

    Attributes:
        mover: the banked score of the player to move.
        later: the scores of the players still to take their last turn after the mover, in turn order.
        best: the best score of the others (at or past the target).
        leaders: how many of the others hold ``best``.
    """

    mover: int
    later: tuple[int, ...]
    best: int
    leaders: int


def read_seats(rules: Rules, scores: Sequence[int]) -> LastRoundSeats | None:
    """The last round that ``scores`` (turn order, the mover first) describe, or ``None`` before it.

    The first of the others at the target (past it too, unless the target is exact)
    triggered the last round; the players before that one still play theirs.
    """
    reached = [k for k in range(1, len(scores)) if _at_target(rules, scores[k])]
    if not reached or not rules.last_round:
        return None
    others = scores[1:]
    best = max(others)
    return LastRoundSeats(scores[0], tuple(scores[1 : reached[0]]), best, sum(1 for s in others if s == best))


def _at_target(rules: Rules, score: int) -> bool:
    return score == rules.target if rules.exact_target else score >= rules.target


def approximation(rules: Rules, seats: LastRoundSeats) -> str | None:
    """What :func:`mover_turn`'s chances leave out for these rules and seats, in words (``None``: exact)."""
    if rules.tie is TieRule.EXTRA_ROUND:
        return "a tie is valued as an even share of the tie-break"
    if rules.exact_target and seats.later:
        return "an overshoot's points given to the lowest score are not followed"
    return None


def is_exact(rules: Rules, seats: LastRoundSeats) -> bool:
    """Whether :func:`mover_turn`'s chances are exact for these rules and seats (see the module docstring)."""
    return approximation(rules, seats) is None


@dataclass(frozen=True, eq=False)
class MoverTurn:
    """The mover's chance to win from each state of this last turn (built by :func:`mover_turn`)."""

    rules: Rules
    seats: LastRoundSeats
    turn_total: int
    on_board: bool
    _bank: Any  # (top, dice) own chance of banking at turn total t (units) with m dice left
    _dec: Any  # (top, dice) own chance after a keep, best of bank and throw
    _throw: Any  # (span, dice + 1) own chance of throwing n dice at turn total t
    _s1: Any  # (span,) success part of one single-die throw
    _q: float  # chance one die scores nothing

    def bank_allowed(self, total: int, dice_left: int) -> bool:
        """Whether the rules let the mover bank ``total`` points with ``dice_left`` dice left (0: hot dice)."""
        if dice_left == 0 and self.rules.must_roll_after_hot_dice:
            return False
        return total >= self.rules.bank_minimum(self.on_board)

    def bank(self, total: int, dice_left: int) -> float | None:
        """Chance to win by banking a turn total of ``total`` points now (``None`` where banking is not allowed)."""
        if not self.bank_allowed(total, dice_left):
            return None
        return float(self._bank[total // STEP, dice_left])

    def kept(self, total: int, dice_left: int) -> float:
        """Chance to win after a keep leaving ``total`` set aside and ``dice_left`` dice (bank or throw, the better)."""
        return float(self._dec[min(total // STEP, self._dec.shape[0] - 1), dice_left])

    def roll(self, total: int, dice_left: int) -> float:
        """Chance to win by throwing on with ``total`` set aside and ``dice_left`` dice left (0: all dice).

        Past the cut the turn banks at once (module docstring): then this is that bank's worth.
        """
        t = total // STEP
        if t >= self._throw.shape[0]:
            return float(self._dec[t, dice_left])
        return float(self._throw[t, self.rules.dice if dice_left == 0 else dice_left])

    def throw_again(self, throws_left: int) -> float:
        """A missed single die with ``throws_left`` throws still allowed: the chance to win throwing it again."""
        weight = sum(self._q**i for i in range(throws_left))
        return float(self._s1[self.turn_total // STEP]) * weight


def mover_turn(
    rules: Rules, scores: Sequence[int], *, turn_total: int = 0, on_board: bool | None = None, cut: int | None = None
) -> MoverTurn:
    """The exact last-round chances of the player to move (``scores`` in turn order, the mover first).

    Args:
        rules: the rule set (its ``target``, ``exact_target``, ``tie`` and ``piggyback`` matter).
        scores: banked scores in turn order, the mover first; someone else has reached the target.
        turn_total: points the mover has set aside this turn (a multiple of 50).
        on_board: whether the mover is on the board (default: a score above 0).
        cut: points a turn may add before it ends at once, counted as exactly that
            (default: where one turn gets with a chance below 1e-13; the mover's from ``turn_total``).

    Raises:
        IllegalActionError: not a last round, or a turn total that is not a non-negative multiple of 50.
    """
    seats = read_seats(rules, scores)
    if seats is None:
        raise IllegalActionError("nobody has reached the target: this is not the last round")
    if isinstance(turn_total, bool) or not isinstance(turn_total, int) or turn_total < 0 or turn_total % STEP:
        raise IllegalActionError(f"a turn total is a multiple of {STEP} and at least 0, got {turn_total!r}")
    board = seats.mover > 0 if on_board is None else on_board
    units = dp.cut_units(rules) if cut is None else -(-cut // STEP)
    return _mover_turn(rules, seats, turn_total, board, units)


@lru_cache(maxsize=64)
def _mover_turn(rules: Rules, seats: LastRoundSeats, turn_total: int, on_board: bool, cut: int) -> MoverTurn:
    throws = dp.throws_for(rules)
    d = rules.dice
    base, low = seats.mover // STEP, seats.best // STEP
    mover = dp.Player(base, _bmin(rules, on_board), turn_total // STEP + cut)
    worth = _worths(rules, seats, cut)
    bank = _bank_values(rules, mover, throws, worth, low, seats.leaders)
    must_roll = rules.must_roll_after_hot_dice
    up = dp.above(throws, mover, must_roll, bank)
    need = low - base  # units the mover's turn must make to tie the best score
    if need > mover.cut:  # out of reach
        top = mover.sizes(throws)[1]
        dec, throw, s1 = np.zeros((top, d)), np.zeros((mover.cut + 1, d + 1)), np.zeros(mover.cut + 1)
    else:
        dec, throw, s1, _, _ = dp.below(throws, mover, must_roll, rules.exact_target, up, need, bank[need])
    return MoverTurn(rules, seats, turn_total, on_board, bank, dec, throw, s1, float(throws.pf[1]))


def _bank_values(rules: Rules, player: dp.Player, throws: dp.Throws, after: Any, low: int, leaders: int) -> Any:
    """``bank[t, m]``: the player's own chance of banking at turn total ``t`` with ``m`` dice left.

    ``after`` is a leader's worth once this turn ends (:func:`_worths`), bars from ``low``
    (the best score, shared by ``leaders``: banking on it makes one more). A total past
    the cut counts as the cut.
    """
    top = player.sizes(throws)[1]
    bars = player.base + np.minimum(np.arange(top), player.cut) - low
    bank = np.zeros((top, rules.dice))
    width = after.shape[2]
    for m in range(rules.dice):
        p = _passed(rules, m)
        if not rules.exact_target:
            lone = np.where(bars < width, after[1, p, np.clip(bars, 0, width - 1)], 1.0)
            bank[:, m] = np.where(bars > 0, lone, 0.0)
        bank[:, m] = np.where(bars == 0, after[leaders + 1, p, 0], bank[:, m])
    return bank


def _bmin(rules: Rules, on_board: bool) -> int:
    return -(-rules.bank_minimum(on_board) // STEP)


def _passed(rules: Rules, dice_left: int) -> int:
    """The pass index a bank with ``dice_left`` dice left makes: dice passed (all after hot dice), 0 for none."""
    if not rules.piggyback:
        return 0
    return rules.dice if dice_left == 0 else dice_left


def _worths(rules: Rules, seats: LastRoundSeats, cut: int) -> Any:
    """``W[c, p, B - best]``: a leader's worth, one of ``c`` at bar ``B`` (units), once the mover's turn ends.

    ``p``: dice the mover's bank passes (0: none). Bars span the best score up to the
    last a later player can reach; past them nobody can beat a leader.
    """
    low = seats.best // STEP
    width = 1 if rules.exact_target else max([low, *(s // STEP + cut for s in seats.later)]) - low + 1
    return _worths_cached(rules, seats, cut, width)


@lru_cache(maxsize=16)
def _worths_cached(rules: Rules, seats: LastRoundSeats, cut: int, width: int) -> Any:
    d = rules.dice
    low = seats.best // STEP
    bases = [seats.mover // STEP, *(s // STEP for s in seats.later)]
    count = len(seats.later)
    c_max = seats.leaders + count + 1
    worth = np.zeros((c_max + 2, d + 1, width))
    for c in range(1, c_max + 2):
        worth[c] = 1.0 / c  # after the last player: the leaders share the win
    for j in range(count, 0, -1):  # later players, the last first
        player = dp.Player(bases[j], _bmin(rules, bases[j] > 0), cut)
        worth = _one_player(rules, seats, worth, player, bases[j - 1], j, low, last=j == count)
    return worth


def _one_player(
    rules: Rules, seats: LastRoundSeats, after: Any, player: dp.Player, before: int, j: int, low: int, last: bool
) -> Any:
    """A leader's worth when later player ``j`` (1: right after the mover) is about to play, from ``after``.

    ``before`` is the base of the player whose bank passes its dice (piggyback).
    """
    throws = dp.throws_for(rules)
    width = after.shape[2]
    must_roll = rules.must_roll_after_hot_dice
    up = dp.above(throws, player, must_roll, _bank_values(rules, player, throws, after, low, 0))
    worth = np.full_like(after, np.nan)
    wanted = [(c, np.arange(width)) for c in range(1, j + 1)]  # a bar past the best: the mover and those since
    wanted += [(c, np.array([0])) for c in range(seats.leaders + 1, seats.leaders + j + 1) if c > j]
    for c, ks in wanted:
        needs = low + ks - player.base
        far = ks[needs > player.cut]
        worth[c, :, far] = after[c, 0, far][:, None]  # out of this player's reach: they fail
        ks = ks[needs <= player.cut]
        if ks.size:
            rows = _rows(rules, after, player, ks, c, low, before)
            if last and not (must_roll or rules.exact_target):
                _ladder(throws, player, up, rows)
            else:
                dp.bars(throws, player, must_roll, rules.exact_target, up, rows)
            _choose_start(rules, worth, rows, c, ks)
    return worth


def _rows(rules: Rules, after: Any, player: dp.Player, ks: Any, c: int, low: int, before: int) -> dp.Bars:
    """The per-bar inputs for bars ``low + ks``: tie and fail worths, and the start states (fresh, each pass)."""
    d = rules.dice
    starts = 1 + (d if rules.piggyback else 0)
    start_t = np.zeros((ks.size, starts), dtype=np.int64)
    start_n = np.full((ks.size, starts), d, dtype=np.int64)
    if rules.piggyback:
        start_t[:, 1:] = np.minimum(low + ks - before, player.cut)[:, None]  # a pass counts at most the cut
        start_n[:, 1:] = np.arange(1, d + 1)[None, :]
    return dp.Bars(
        need=(low + ks - player.base).astype(np.int64),
        tie=np.stack([after[c + 1, _passed(rules, m), ks] for m in range(d)], axis=1),
        fail=after[c, 0, ks].copy(),
        start_t=start_t,
        start_n=start_n,
        own=np.zeros((ks.size, starts)),
        lead=np.zeros((ks.size, starts)),
    )


def _ladder(throws: dp.Throws, player: dp.Player, up: tuple[Any, ...], rows: dp.Bars) -> None:
    """The last player's bars: below the cut and past the bank minimum, one sweep serves every bar.

    The last player only races to beat the bar: their tie and fail worths are the same
    at every bar, a bank past the bar always wins, so a state's worth depends only on
    how far below the bar it is. Bars nearer than the bank minimum, or on the cut, are swept alone.
    """
    shared = (rows.need >= player.bmin) & (rows.need < player.cut)
    alone = ~shared
    if alone.any():
        part = dp.Bars(
            rows.need[alone], rows.tie[alone], rows.fail[alone], rows.start_t[alone], rows.start_n[alone],
            np.zeros_like(rows.own[alone]), np.zeros_like(rows.lead[alone]),
        )  # fmt: skip
        dp.bars(throws, player, False, False, up, part)
        rows.own[alone], rows.lead[alone] = part.own, part.lead
    if not shared.any():
        return
    first = int(np.nonzero(shared)[0][0])
    top_need = player.cut - 1
    _, w, _, _, w_lead = dp.below(throws, player, False, False, up, top_need, rows.tie[first], float(rows.fail[first]))
    _, up_w, _, up_w_far, _ = up
    for k in np.nonzero(shared)[0]:
        shift = top_need - int(rows.need[k])
        for s in range(rows.start_t.shape[1]):
            t, n = int(rows.start_t[k, s]), int(rows.start_n[k, s])
            if t > rows.need[k]:  # a pass that starts past the bar
                rows.own[k, s] = up_w[t, n] if t < up_w.shape[0] else 0.0
                rows.lead[k, s] = up_w_far[t, n] * rows.fail[k] if t < up_w.shape[0] else rows.fail[k]
            else:
                rows.own[k, s], rows.lead[k, s] = w[t + shift, n], w_lead[t + shift, n]


def _choose_start(rules: Rules, worth: Any, rows: dp.Bars, c: int, ks: Any) -> None:
    """A leader's worth per pass: the player takes the passed dice only where that is worth more to them."""
    worth[c, 0, ks] = rows.lead[:, 0]
    for p in range(1, rules.dice + 1):
        if rules.piggyback:
            take = rows.own[:, p] > rows.own[:, 0]
            worth[c, p, ks] = np.where(take, rows.lead[:, p], rows.lead[:, 0])
        else:
            worth[c, p, ks] = rows.lead[:, 0]
