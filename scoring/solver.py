"""The exact turn solver: the policy that maximises a turn's expected score, per rule set.

:func:`solve` returns a :class:`Policy`, computed once per rule configuration by
dynamic programming over (turn total, dice to throw) on the exact roll table
(:mod:`farklecam.scoring.turn_dp`; no sampling), then cached in memory and on disk
(:mod:`farklecam.scoring.policy_cache`). It respects the opening and per-turn minimums
(:meth:`Rules.bank_minimum`), must-roll-after-hot-dice, the Elizabethan
``single_die_throws``, Zilch's no-score bonus (a keep like any other) and the
farkle penalty.

Exact target (``exact_target``): a turn total past the target can never be
banked for points by anyone (a player has at least 0), so when the target lies
below the point from which banking always wins, every total past it is worth a
farkle (:func:`farklecam.scoring.turn_dp.sweep` with ``dead_tail``) and the turn is solved
up to the target. The player's own score is not known here: advice that knows
it (``advise --scores``) comes from :mod:`farklecam.scoring.winprob`.

Values
------
Without a farkle penalty a value is the expected final score of the turn,
*including* the points already set aside (``turn_total``), under optimal play:
banking ``T`` is worth ``T`` and a farkle 0. The turn is not capped at the
target: beyond the point where banking beats throwing in every state that can
farkle, values are closed forms (see :mod:`farklecam.scoring.turn_dp`).

With a penalty (``farkle_penalty`` lost on the ``farkle_penalty_streak``-th
farkle in a row; the run then starts again) one turn's score is not the whole
story, because a farkle brings the penalty nearer. The solver maximises the
long-run average points per turn ``g`` (Busche 2010's criterion) by relative
value iteration over the run length ``s``: with ``h(0) = 0``,
``h(s) + g = best turn value when a bank is worth T + h(0) and a farkle h(s + 1)``
(the last one ``-penalty + h(0)``). Values are then *relative*: the expected
points of the turn plus the change in long-run prospects it leaves behind; at
the start of a turn with no farkles behind, that is ``g`` itself. The same
equations with ``opening_minimum`` give the values for a player not yet on the
board (banking puts them on it).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np

from farklecam.errors import IllegalActionError
from farklecam.scoring import policy_cache, turn_dp
from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides

__all__ = ["SOLVER_VERSION", "Policy", "clear_memory_cache", "farkle_probabilities", "solve", "solve_summary"]

#: Bumped whenever the model or the file layout changes; part of every cache key.
SOLVER_VERSION = 3

_ARRAYS = ("W", "S1", "F", "bmin", "pf", "tail", "meta")
_MEMORY: dict[str, Policy] = {}
_MEMORY_SIZE = 32
#: Most bytes of policies held in memory (the least recently used go first; the newest always stays).
_MEMORY_BYTES = 128 * 2**20


class Policy:
    """A solved rule set: values of every state of a turn, and the optimal decisions they imply.

    Build one with :func:`solve`. Turn totals are points (multiples of 50);
    ``dice`` is the number about to be thrown.
    """

    def __init__(self, rules: Rules, arrays: dict[str, Any]) -> None:
        meta = json.loads(str(arrays["meta"]))
        self.rules = rules
        self._w = arrays["W"]
        self._s1 = arrays["S1"]
        self._f = arrays["F"]
        self._bmin = arrays["bmin"]
        self._pf = arrays["pf"]
        self._tail = arrays["tail"]
        self._cap: int = int(meta["cap"])
        self._streaks: int = int(meta["streaks"])
        self._off_board: bool = bool(meta["off_board"])
        self._g = float(meta["g"])
        self._iterations = int(meta["iterations"])
        self._dead_tail = bool(meta.get("dead_tail", False))
        d = rules.dice
        k = self._streaks * (2 if self._off_board else 1)
        if (
            meta.get("version") != SOLVER_VERSION
            or meta.get("key") != rules.key()
            or self._w.shape != (k, self._cap, d + 1)
            or self._s1.shape != (k, self._cap)
            or self._f.shape != (k,)
            or self._bmin.shape != (k,)
            or self._pf.shape != (d + 1,)
            or self._tail.shape != (3, d + 1)
            or not np.isfinite(self._w).all()
        ):
            raise ValueError("policy arrays do not match these rules")

    @property
    def nbytes(self) -> int:
        """Memory held by this policy's arrays (what the in-memory cache bounds)."""
        return int(sum(a.nbytes for a in (self._w, self._s1, self._f, self._bmin, self._pf, self._tail)))

    # ------------------------------------------------------------------ summary values
    @property
    def expected_turn(self) -> float:
        """Expected points per turn for a player on the board (with a penalty: the long-run average ``g``)."""
        return self._g

    @property
    def cap(self) -> int:
        """Turn total from which banking beats throwing in every state that can farkle (values are closed forms)."""
        return self._cap * turn_dp.STEP

    @property
    def penalty_streaks(self) -> int:
        """Number of run-length states modelled (1 without a farkle penalty)."""
        return self._streaks

    def start_value(self, *, on_board: bool = True, farkle_streak: int = 0) -> float:
        """Value of a fresh turn (all dice, nothing set aside)."""
        return self.roll_value(0, self.rules.dice, on_board=on_board, farkle_streak=farkle_streak)

    def farkle_value(self, *, on_board: bool = True, farkle_streak: int = 0) -> float:
        """What a farkle now is worth: 0 without a penalty, else the relative value it leads to."""
        return float(self._f[self._scenario(on_board, farkle_streak)])

    def farkle_probability(self, dice: int) -> float:
        """Chance that throwing ``dice`` dice ends the turn (with one die: after every allowed throw)."""
        if dice == 1:
            return float(self._pf[1]) ** self.rules.single_die_throws
        return float(self._pf[dice])

    # ------------------------------------------------------------------ state values
    def check_state(self, turn_total: int, *, farkle_streak: int = 0) -> None:
        """Raise :class:`IllegalActionError` unless this turn total and run of farkles can occur."""
        _index(turn_total)
        self._scenario(True, farkle_streak)

    def bank_allowed(self, turn_total: int, *, on_board: bool = True, hot_dice: bool = False) -> bool:
        """May a player with this turn total (just set aside) stop now?"""
        if hot_dice and self.rules.must_roll_after_hot_dice:
            return False
        return turn_total >= self.rules.bank_minimum(on_board)

    def roll_value(
        self,
        turn_total: int,
        dice: int,
        *,
        on_board: bool = True,
        farkle_streak: int = 0,
        throws_left: int | None = None,
    ) -> float:
        """Value of throwing ``dice`` dice with ``turn_total`` set aside, then playing optimally.

        ``throws_left`` (one die only, Elizabethan rules): throws still allowed to make a 1
        or 5, this one included; default all of ``rules.single_die_throws``.
        """
        d = self.rules.dice
        if not 1 <= dice <= d:
            raise IllegalActionError(f"cannot throw {dice} dice under these rules (1-{d})")
        t = _index(turn_total)
        k = self._scenario(on_board, farkle_streak)
        f = float(self._f[k])
        throws = self.rules.single_die_throws if throws_left is None else throws_left
        if not 1 <= throws <= self.rules.single_die_throws:
            raise IllegalActionError(f"throws_left must be 1-{self.rules.single_die_throws}, got {throws_left}")
        if t < self._cap and (dice != 1 or throws == self.rules.single_die_throws):
            return float(self._w[k, t, dice])
        if self._dead_tail and t >= self._cap:  # past an exact target nothing more can be banked
            return f
        alpha, gamma, phi = (float(v) for v in self._tail[:, dice])
        if dice != 1:
            return alpha * turn_total + gamma + phi * f
        q = float(self._pf[1])  # a single die: up to `throws` throws, the turn goes on at the first 1 or 5
        weight, miss = sum(q**i for i in range(throws)), q**throws
        success = float(self._s1[k, t]) if t < self._cap else alpha * turn_total + gamma + (phi - q) * f
        return success * weight + miss * f

    def decide(
        self, turn_total: int, dice_left: int, *, on_board: bool = True, farkle_streak: int = 0
    ) -> tuple[str, float, float]:
        """Best action after a keep: ``(action, value, roll value)``; ``dice_left == 0`` is hot dice.

        ``action`` is "bank" or "roll"; banking wins ties (it is certain).
        """
        hot = dice_left == 0
        roll = self.roll_value(
            turn_total, self.rules.dice if hot else dice_left, on_board=on_board, farkle_streak=farkle_streak
        )
        bank = float(turn_total)
        if self.rules.exact_target and turn_total > self.rules.target:  # overshoots for anyone: worth a farkle
            bank = self.farkle_value(on_board=on_board, farkle_streak=farkle_streak)
        if self.bank_allowed(turn_total, on_board=on_board, hot_dice=hot) and bank >= roll:
            return "bank", bank, roll
        return "roll", roll, roll

    def bank_at(self, dice: int) -> int | None:
        """Smallest turn total (on the board, no farkles behind) from which banking beats throwing ``dice`` dice.

        Banking is at least as good at that total and at every larger one. ``None``
        when throwing is always better (the dice can never farkle, as six dice under
        Zilch's no-score bonus).
        """
        if self.farkle_probability(dice) == 0:
            return None
        minimum = self.rules.bank_minimum(True)
        k = self._scenario(True, 0)
        t_values = np.arange(self._cap) * turn_dp.STEP
        rolling_better = (self._w[k, :, dice] > t_values) | (t_values < minimum)
        later = np.nonzero(rolling_better)[0]
        first = int(later[-1]) + 1 if later.size else 0
        return max(first * turn_dp.STEP, _round_up(minimum))

    # ------------------------------------------------------------------ internals
    def _scenario(self, on_board: bool, farkle_streak: int) -> int:
        # Without a penalty a streak changes nothing (a game's log keeps counting it): any count is streak 0.
        tracked = self._streaks > 1
        if farkle_streak < 0 or (tracked and farkle_streak >= self._streaks):
            raise IllegalActionError(f"farkle_streak must be 0-{self._streaks - 1}, got {farkle_streak}")
        streak = farkle_streak if tracked else 0
        return streak + (self._streaks if self._off_board and not on_board else 0)

    def to_arrays(self) -> dict[str, Any]:
        """The arrays this policy was built from (the cache format)."""
        meta = {
            "version": SOLVER_VERSION,
            "key": self.rules.key(),
            "cap": self._cap,
            "streaks": self._streaks,
            "off_board": self._off_board,
            "g": self._g,
            "iterations": self._iterations,
            "dead_tail": self._dead_tail,
        }
        return {
            "W": self._w,
            "S1": self._s1,
            "F": self._f,
            "bmin": self._bmin,
            "pf": self._pf,
            "tail": self._tail,
            "meta": np.array(json.dumps(meta)),
        }


def _index(turn_total: int) -> int:
    if isinstance(turn_total, bool) or not isinstance(turn_total, int) or turn_total < 0 or turn_total % 50:
        raise IllegalActionError(f"a turn total is a multiple of 50 and at least 0, got {turn_total!r}")
    return turn_total // turn_dp.STEP


def _round_up(points: int) -> int:
    return -(-points // turn_dp.STEP) * turn_dp.STEP


# ---------------------------------------------------------------------- solving
def compute_policy(rules: Rules) -> Policy:
    """Solve ``rules`` from scratch (no cache): see the module docstring for the model."""
    tables = turn_dp.cached_tables(rules)
    streaks = rules.farkle_penalty_streak if rules.farkle_penalty else 1
    off_board = rules.bank_minimum(False) != rules.bank_minimum(True)
    boards = [True, False] if off_board else [True]
    bank_minimums = [rules.bank_minimum(on) for on in boards for _ in range(streaks)]
    cap, top = turn_dp.caps(rules, tables, bank_minimums)
    goal = rules.target // turn_dp.STEP
    dead = rules.exact_target and goal + 1 < top  # totals past an exact target are reached: they score nothing
    if dead:
        tables = turn_dp.build_tables(rules, prune=False)  # values drop past the target: no pruning
        cap = top = goal + 1
    penalty = float(rules.farkle_penalty)
    farkle = [float(-rules.farkle_penalty) if s == streaks - 1 else 0.0 for _ in boards for s in range(streaks)]
    iterations = 0
    while True:
        iterations += 1
        w, s1, slope = turn_dp.sweep(
            rules, tables, farkle, bank_minimums, cap, top, dead_tail=dead, track_slope=bool(penalty)
        )
        if cap < top:  # forced throws after hot dice: above the cap every other state must bank
            above = np.arange(cap, top)[None, :, None] * float(turn_dp.STEP)
            throws = np.nonzero((w[:, cap:top, 1 : rules.dice] > above + 1e-9).any(axis=(0, 2)))[0]
            if throws.size:  # the forced state is worth more there than its far line says: solve further up
                cap += int(throws[-1]) + 2
                continue
        if not penalty:
            break
        new = _policy_step(w[:, 0, rules.dice], slope, farkle, streaks, penalty, off_board)
        if max(abs(a - b) for a, b in zip(new, farkle, strict=True)) < 1e-9 or iterations >= 100:
            break  # the policy is stable: w holds its values (h_on(0) = 0, so a fresh turn is worth g)
        farkle = new
    g = float(w[0, 0, rules.dice])
    meta = {
        "version": SOLVER_VERSION,
        "key": rules.key(),
        "cap": top,
        "streaks": streaks,
        "off_board": off_board,
        "g": g,
        "iterations": iterations,
        "dead_tail": dead,
    }
    arrays = {
        "W": w,
        "S1": s1,
        "F": np.asarray(farkle, dtype=float),
        "bmin": np.asarray(bank_minimums, dtype=np.int64),
        "pf": tables.pf,
        "tail": tables.tail,
        "meta": np.array(json.dumps(meta)),
    }
    return Policy(rules, arrays)


def _policy_step(
    turn: Any, slope: Any, farkle: list[float], streaks: int, penalty: float, off_board: bool
) -> list[float]:
    """One policy-iteration step of the average-reward equations (exact for the current policies).

    Each scenario's turn value is linear in its farkle value for a fixed policy:
    ``turn = const + slope * F``. Solve ``h(s) + g = const_s + slope_s * F_s`` for
    ``g`` and the ``h`` (``h_on(0) = 0``), then return the new farkle values.
    """
    s_count = streaks
    const = [float(turn[k]) - float(slope[k]) * farkle[k] for k in range(len(farkle))]
    # on the board: unknowns g, h(1..S-1)
    a = np.zeros((s_count, s_count))
    rhs = np.zeros(s_count)
    for s in range(s_count):
        a[s, 0] = 1.0  # g
        if s >= 1:
            a[s, s] += 1.0
        if s + 1 < s_count:
            a[s, s + 1] -= float(slope[s])
            rhs[s] = const[s]
        else:
            rhs[s] = const[s] - float(slope[s]) * penalty
    x = np.linalg.solve(a, rhs)
    g = float(x[0])
    h_on = [0.0, *(float(v) for v in x[1:])]
    new = [h_on[s + 1] if s + 1 < s_count else -penalty for s in range(s_count)]
    if off_board:
        b = np.zeros((s_count, s_count))
        rhs_off = np.zeros(s_count)
        for s in range(s_count):
            k = s_count + s
            b[s, s] += 1.0
            b[s, (s + 1) % s_count] -= float(slope[k])
            rhs_off[s] = const[k] - g - (float(slope[k]) * penalty if s + 1 == s_count else 0.0)
        y = np.linalg.solve(b, rhs_off)
        new += [float(y[s + 1]) if s + 1 < s_count else -penalty + float(y[0]) for s in range(s_count)]
    return new


def solve(rules: Rules) -> Policy:
    """The optimal policy for ``rules``: from memory, else from the disk cache, else computed (and stored)."""
    key = f"{rules.key()}-v{SOLVER_VERSION}"
    policy = _MEMORY.pop(key, None)
    if policy is not None:
        _MEMORY[key] = policy  # most recently used last: the first entry is the one to forget
        return policy
    arrays = policy_cache.load_arrays(key, _ARRAYS)
    policy = None
    if arrays is not None:
        try:
            policy = Policy(rules, arrays)
        except (ValueError, KeyError, TypeError):
            policy = None
    if policy is None:
        policy = compute_policy(rules)
        policy_cache.store_arrays(key, policy.to_arrays())
    _MEMORY[key] = policy
    while len(_MEMORY) > 1 and (len(_MEMORY) > _MEMORY_SIZE or sum(p.nbytes for p in _MEMORY.values()) > _MEMORY_BYTES):
        _MEMORY.pop(next(iter(_MEMORY)))  # the least recently used
    return policy


def clear_memory_cache() -> None:
    """Forget every policy held in memory (the disk cache stays)."""
    _MEMORY.clear()


# ---------------------------------------------------------------------- summaries
def farkle_probabilities(rules: Rules) -> dict[int, Fraction]:
    """Exact chance that throwing n dice ends the turn, n = 1..dice (one die: after every allowed throw)."""
    result: dict[int, Fraction] = {}
    for n in range(1, rules.dice + 1):
        p = sum((p for roll, p in roll_outcomes(n) if not legal_set_asides(roll, rules)), Fraction(0))
        result[n] = p**rules.single_die_throws if n == 1 else p
    return result


def solve_summary(rules: Rules) -> dict[str, Any]:
    """The CLI's ``solve`` output for a player already on the board.

    ``expected_turn``: expected points per turn (the long-run average with a
    penalty). ``farkle_probability[n]``: chance a throw of n dice ends the turn.
    ``bank_at[n]``: smallest turn total from which banking beats throwing n dice
    (see :meth:`Policy.bank_at`; ``None`` when throwing is always better).
    """
    policy = solve(rules)
    probabilities = farkle_probabilities(rules)
    return {
        "expected_turn": policy.expected_turn,
        "farkle_probability": {str(n): float(p) for n, p in probabilities.items()},
        "bank_at": {str(n): policy.bank_at(n) for n in range(1, rules.dice + 1)},
    }
