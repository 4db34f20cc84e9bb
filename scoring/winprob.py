"""Advice that plays to win: the exact two-player chance of winning, and the keep and bank/roll that maximise it.

:func:`solve_win` returns a :class:`WinTable` for a rule set: the chance that the
player about to start a turn wins, for every pair of banked scores below the
target, solved by value iteration in 50-point units as in Busche & Neller,
"Optimal Play of the Farkle Dice Game" (ACG 2017); see :mod:`farklecam.scoring.winprob_dp`
for the model and its documented approximations (with a farkle penalty, both players' streaks
are in the state). Under progressive rules the table follows every pass: each bank passes its
total and dice, and the next player takes them where that wins more often (not with a farkle
penalty or an exact target, where the passes are left out and the advice says so:
:func:`table_approximation`). A "chance to win" counts a tie after the last
round (whatever the ``tie`` rule) as one half. It is
computed once per rule set and cached on disk next to the turn policies
(:mod:`farklecam.scoring.policy_cache`) and in memory; the presets' tables ship solved
in the package (``scoring/tables``, written by :mod:`farklecam.scoring.bundle_tables`), so
their win advice is there from the first request.

:func:`advise_win` ranks the keeps of a roll by the chance to win from the
players' banked scores and names what maximising points (:func:`farklecam.scoring.advisor.advise`)
would do where that differs. A score at or past the target among the others
means this is the player's last turn (``last_round``): the chances are then exact
for any number of players, counting every player still to take their last turn
(:mod:`farklecam.scoring.last_round`; ties there follow the ``tie`` rule). Otherwise, with more than two players,
each keep is valued against each opponent alone by the two-player table and the
chances are combined as Bradley-Terry strengths (:func:`combine_opponents`): an
approximation (under progressive rules a bank's pass counted against the next player only).
Whether to take a pass at all: :mod:`farklecam.scoring.pass_win`.
``python bench/winprob_multiplayer.py --games 300 --players 3 --target 10000`` measured it
calibrated (it gave the player to move 0.338 on average where they won 0.339; Brier 0.160),
where the best opponent alone had been over-confident (0.408 against 0.340; Brier 0.171); one seat playing it won
0.360 of games against two points maximisers (0.343 before). With four players
to 2,000 (``--games 600 --players 4``): 0.274 against 0.286 (0.403 before), and
its seat won 0.402 (0.423 before; the even share is 0.25).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from farklecam.errors import IllegalActionError
from farklecam.scoring import last_round, policy_cache, win_offers, winprob_dp
from farklecam.scoring.risk import next_throw_farkle
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import SetAside, legal_set_asides, validate_roll

__all__ = [
    "BUNDLED_DIR",
    "WIN_VERSION",
    "WinAdvice",
    "WinOption",
    "WinTable",
    "advise_win",
    "bundled_path",
    "chance_now",
    "check_scores",
    "clear_memory_cache",
    "combine_opponents",
    "context",
    "fair_head_start",
    "ready",
    "solve_arrays",
    "solve_wait",
    "solve_win",
    "table_approximation",
    "take_or_fresh",
]

#: Bumped whenever the model or the file layout changes; part of every cache key.
WIN_VERSION = 2
#: The presets' tables, solved ahead and shipped (a farkle penalty's takes minutes):
# :mod:`farklecam.scoring.bundle_tables`.
BUNDLED_DIR = Path(__file__).resolve().with_name("tables")  # resolved: an editable install links each file

STEP = winprob_dp.STEP
_MEMORY: dict[str, WinTable] = {}
_MEMORY_SIZE = 8


class WinTable:
    """A solved rule set: the chance to win at the start of a turn, for two players.

    Build one with :func:`solve_win`. Scores are points, multiples of 50.
    """

    def __init__(self, rules: Rules, values: Any, offers: Any = None) -> None:
        """``values`` as :attr:`streak_values`; ``offers``, where the table follows passes, as :attr:`offers`.

        Raises:
            ValueError: arrays that do not fit ``rules`` (a table of other rules, or one solved without
                the passes these rules' table follows).
        """
        goal = rules.target // STEP
        k = streak_states(rules)
        if values.shape != (k, k, goal, goal) or not np.isfinite(values).all():
            raise ValueError("win table does not match these rules")
        passing = winprob_dp.passing_modelled(rules)
        if passing and (offers is None or offers.shape != winprob_dp.offers_shape(rules)):
            raise ValueError("win table lacks the passed dice these rules' table follows")
        self.rules = rules
        self._v = values
        self._offers = offers.astype(np.uint16, copy=False) if passing else None

    @property
    def passing(self) -> bool:
        """Whether the chances follow progressive's passes (:func:`farklecam.scoring.winprob_dp.passing_modelled`).

        False under piggyback rules with a farkle penalty or an exact target: there every turn is
        valued as if it started with all dice and nothing passed on.
        """
        return self._offers is not None

    @property
    def offers(self) -> Any:
        """With passing: what each pass on offer adds to a turn start (uint16, read-only); else ``None``.

        In steps of :data:`farklecam.scoring.win_offers.SCALE`; the layout is
        :func:`farklecam.scoring.winprob_dp.offers_shape`'s.
        """
        if self._offers is None:
            return None
        view = self._offers.view()
        view.flags.writeable = False
        return view

    @property
    def streak_values(self) -> Any:
        """``V[a, b, i, j]``: the mover's farkle streak ``a``, the opponent's ``b`` (numpy, read-only).

        Without a farkle penalty the streaks are not in the state: both axes have length 1.
        """
        view = self._v.view()
        view.flags.writeable = False
        return view

    @property
    def values(self) -> Any:
        """``V[i, j]``: the player to start a turn with ``50 i`` banked wins against ``50 j``, no farkles in a row."""
        return self.streak_values[0, 0]

    @property
    def first_player_win(self) -> float:
        """Chance the first player wins when both play to win from 0 to 0."""
        return float(self._v[0, 0, 0, 0])

    def start_chance(
        self, mine: int, other: int, streaks: tuple[int, int] = (0, 0), passed: tuple[int, int] | None = None
    ) -> float:
        """Chance to win for the player about to start a turn with ``mine`` against ``other`` (both below target).

        ``streaks``: the two players' farkles in a row (read only where the rules have a penalty).
        ``passed``: ``(total, dice)`` the opponent's bank, now in ``other``, passed on (with passing);
        the player takes it where that is better.

        Raises:
            IllegalActionError: scores off the table, or a pass this table cannot hold.
        """
        i, j = _units(mine, self.rules), _units(other, self.rules)
        a, b = _streaks(streaks, self.rules)
        value = float(self._v[a, b, i, j])
        if passed is None or self._offers is None:
            return value
        total, dice = passed
        if total % STEP or not 0 < total <= other or not 1 <= dice <= self.rules.dice:
            raise IllegalActionError(f"a pass is 50..{other} points (the banker's score) and 1-{self.rules.dice} dice")
        gain = self._offers[i, winprob_dp.offer_index(j, total // STEP), dice - 1]
        return value + float(gain) * win_offers.SCALE

    def compensation(self) -> int:
        """Points given to the second player at the start that bring the game closest to even (a multiple of 50).

        The second player's head start counts as being on the board (the opening minimum is then waived).
        """
        row = self._v[0, 0, 0]
        return int(np.argmin(np.abs(row - 0.5))) * STEP


def fair_head_start(rules: Rules, players: Sequence[str], first_player: str | None) -> dict[str, int]:
    """The head start that makes a two-player game closest to even, by the player's name.

    :meth:`WinTable.compensation` points for the player who throws second (none where it is 0).
    Solves the rules' win table if needed (see :func:`ready`).

    Raises:
        IllegalActionError: not two players, or no ``first_player`` (a roll-off decides who throws second).
    """
    if len(players) != 2:
        raise IllegalActionError(
            f"a fair head start is worked out for two players, not {len(players)}: give each player's points instead"
        )
    if first_player not in players:
        raise IllegalActionError("a fair head start needs the first player: it goes to the player who throws second")
    second = players[1] if first_player == players[0] else players[0]
    points = solve_win(rules).compensation()
    return {second: points} if points else {}


def streak_states(rules: Rules) -> int:
    """Farkle streaks a player can carry in the win state: ``farkle_penalty_streak``, or 1 without a penalty."""
    return rules.farkle_penalty_streak if rules.farkle_penalty else 1


def _streaks(streaks: Sequence[int], rules: Rules) -> tuple[int, int]:
    """The mover's and the opponent's streak as table indices (0 where the rules have no penalty)."""
    k = streak_states(rules)
    for value in streaks:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (k > 1 and value >= k):
            top = f"0..{k - 1}" if k > 1 else "at least 0"
            raise IllegalActionError(f"a farkle streak (farkles in a row) is {top}, got {value!r}")
    return (streaks[0], streaks[1]) if k > 1 else (0, 0)


def _units(score: int, rules: Rules) -> int:
    if isinstance(score, bool) or not isinstance(score, int) or score % STEP:
        raise IllegalActionError(f"a banked score is a multiple of {STEP}, got {score!r}")
    if not 0 <= score < rules.target:
        raise IllegalActionError(f"a score for the win table must be 0..{rules.target - STEP}, got {score}")
    return score // STEP


# ---------------------------------------------------------------------- solving and caching
def _name(rules: Rules) -> str:
    return f"win-{rules.key()}-v{WIN_VERSION}"


def bundled_path(rules: Rules) -> Path:
    """Where the package ships the solved table of ``rules`` (the presets': :mod:`farklecam.scoring.bundle_tables`)."""
    return BUNDLED_DIR / f"{_name(rules)}.npz"


def _cached(rules: Rules) -> WinTable | None:
    """The table from memory, the disk cache or the package's solved presets (kept in memory then), or ``None``.

    A cache file that does not make a table (corrupt, or from before the passes were followed) gives way
    to the package's.
    """
    key = _name(rules)
    table = _MEMORY.pop(key, None)
    if table is not None:
        _MEMORY[key] = table  # most recently used last: the first entry is the one to forget
        return table
    table = _table_from(rules, policy_cache.load_arrays(key, ("V", "meta")))
    if table is None:  # the package's file is read only where the cache has no table
        table = _table_from(rules, policy_cache.read_arrays(bundled_path(rules), ("V", "meta")))
    if table is not None:
        _remember(key, table)
    return table


def _table_from(rules: Rules, arrays: dict[str, Any] | None) -> WinTable | None:
    """The :class:`WinTable` a cache or package file's arrays hold for ``rules``, or ``None`` where they do not."""
    if arrays is None:
        return None
    try:
        meta = json.loads(str(arrays["meta"]))
        if meta.get("version") != WIN_VERSION or meta.get("key") != rules.key():
            return None
        offers = None
        if winprob_dp.passing_modelled(rules):  # a file from before the passes were followed lacks them
            offers = win_offers.decode(arrays["offers"], winprob_dp.offers_shape(rules))
        return WinTable(rules, np.asarray(arrays["V"], dtype=float), offers)
    except (ValueError, KeyError, TypeError):
        return None


def _remember(key: str, table: WinTable) -> None:
    if len(_MEMORY) >= _MEMORY_SIZE:
        _MEMORY.pop(next(iter(_MEMORY)))
    _MEMORY[key] = table


def solve_wait(rules: Rules) -> str:
    """How long solving ``rules``' table takes on two cores, in words (what the CLI and the server tell a player)."""
    if rules.farkle_penalty:
        return "about a minute and a half: a farkle penalty"
    return "under a minute: the passed dice" if winprob_dp.passing_modelled(rules) else "a few seconds"


def ready(rules: Rules, scores: Sequence[int]) -> bool:
    """Whether :func:`advise_win` answers at once: a last turn (no table needed) or a table already solved.

    Lets a server answer a request without solving a table first (3 to 7 s; half a minute with passes, about a
    minute and a half with a farkle penalty on two cores: :mod:`farklecam.scoring.winprob_dp`).
    """
    last = len(scores) > 1 and max(scores[1:]) >= rules.target
    return last or _cached(rules) is not None


def solve_win(rules: Rules) -> WinTable:
    """The two-player win table for ``rules``: from memory, else from the disk cache, else computed (and stored)."""
    table = _cached(rules)
    if table is None:
        key = _name(rules)
        table, arrays = solve_arrays(rules)
        policy_cache.store_arrays(key, arrays)
        _remember(key, table)
    return table


def solve_arrays(rules: Rules, **meta: Any) -> tuple[WinTable, dict[str, Any]]:
    """Solve ``rules``' table: the :class:`WinTable` and the arrays a cache or package file holds (``meta`` added).

    With passing the offers are kept as the file holds them (:mod:`farklecam.scoring.win_offers`), so a table
    answers the same whether just solved or read back.
    """
    ctx, passes = winprob_dp.solve_context(rules)
    offers = win_offers.quantize(ctx.w) if ctx.passing else None
    table = WinTable(rules, ctx.v, offers)
    about = {"version": WIN_VERSION, "key": rules.key(), "passes": passes, "passing": table.passing, **meta}
    arrays: dict[str, Any] = {"V": ctx.v, "meta": np.array(json.dumps(about))}
    if offers is not None:
        arrays["offers"] = win_offers.encode(offers)
    return table, arrays


def clear_memory_cache() -> None:
    """Forget every win table and turn held in memory (the disk cache stays)."""
    _MEMORY.clear()
    context.cache_clear()
    _turn.cache_clear()


@lru_cache(maxsize=8)
def context(rules: Rules, passes_on: bool = True) -> winprob_dp.Context:
    """The sweeps' context from the solved table; ``passes_on`` off: a bank passes nothing to this opponent.

    Off is how several players are weighed: a bank's pass reaches only the next player, so
    against every other opponent alone the mover's banks are valued as passing nothing.
    """
    ctx = winprob_dp.make_context(rules)
    table = solve_win(rules)
    ctx.v = table.streak_values
    if passes_on and table.passing:
        ctx.w, ctx.w_scale = table.offers, win_offers.SCALE
    return ctx


@lru_cache(maxsize=256)
def _turn(rules: Rules, i: int, j: int, a: int, b: int, passes_on: bool = True) -> winprob_dp.Sweep:
    """Every state of one turn from ``(i, j)`` (units), streaks ``(a, b)``: a few ms, memoised.

    Under piggyback rules the throws are valued at every total below the target, so a pass
    of any total can be looked up (:func:`take_or_fresh`).
    """
    ctx = context(rules, passes_on)
    f = _farkle_worth(ctx, i, j, a, b)
    return winprob_dp.sweep(
        ctx, np.array([i]), np.array([j]), np.array([f]), b=np.array([b]), keep_throw=True, slopes=False,
        offers=ctx.goal if rules.piggyback else 0,
    )  # fmt: skip


def chance_now(
    rules: Rules,
    scores: Sequence[int],
    *,
    turn_total: int = 0,
    dice: int | None = None,
    kept: bool = False,
    streaks: tuple[int, int] = (0, 0),
    passed: tuple[int, int] | None = None,
) -> float:
    """The chance to win of the player to move in a two-player game, between the throws of a turn.

    Args:
        rules: the rules played.
        scores: the two banked scores, the player to move first.
        turn_total: points set aside this turn.
        dice: the dice the mover throws next (all of them: hot dice, or a fresh turn); with ``kept``, the dice
            left after the keep (0: hot dice).
        kept: the mover has just kept dice and chooses between banking and throwing on (the better counts).
        streaks: both players' farkles in a row.
        passed: at a fresh turn under progressive rules, the ``(total, dice)`` on offer (the better choice counts).

    Raises:
        IllegalActionError: not two players, scores off the table, or a game already decided.
    """
    if len(scores) != 2:
        raise IllegalActionError(f"the chance to win between throws is worked out for two players, not {len(scores)}")
    mine, other, last = check_scores(rules, scores, turn_total)
    d = rules.dice
    left = d if dice is None else dice
    if last:
        final = last_round.mover_turn(rules, scores, turn_total=turn_total)
        if kept:
            return final.kept(turn_total, left)
        return final.roll(turn_total, 0 if left == d else left)
    if turn_total == 0 and not kept and left == d:
        return solve_win(rules).start_chance(mine, other, streaks, passed)
    ctx = context(rules)
    i, j = mine // STEP, other // STEP
    turn = _turn(rules, i, j, *streaks)
    t = turn_total // STEP
    top = turn.dec.shape[0] - 1
    cap = int(winprob_dp.bank_caps(ctx, np.array([i]), np.array([j]))[0])
    if kept or t >= cap:  # past the cap a turn banks at once: the state after a keep says what it is worth
        return float(turn.dec[min(t, top), 0 if left == d else left, 0])
    return float(turn.throw[t, left, 0])


def take_or_fresh(
    rules: Rules,
    mine: int,
    other: int,
    total: int,
    dice: int,
    *,
    passes_on: bool = True,
    streaks: Sequence[int] = (0, 0),
) -> tuple[float, float]:
    """Against one opponent, before the last round: the chance to win taking a pass and starting fresh.

    ``mine`` and ``other`` are banked scores below the target, ``total`` (points, below the
    target) and ``dice`` the pass on offer, ``streaks`` the two players' farkles in a row,
    ``passes_on`` as :func:`context`. Exact for two players where the table follows passes:
    taking is throwing ``dice`` dice with ``total`` set aside in the same turn the table solves.

    Raises:
        IllegalActionError: scores, a total or streaks the table cannot hold.
    """
    i, j = _units(mine, rules), _units(other, rules)
    t = _units(total, rules)
    turn = _turn(rules, i, j, *_streaks(streaks, rules), passes_on)
    return float(turn.throw[t, dice, 0]), float(turn.start[0])


def _farkle_worth(ctx: winprob_dp.Context, i: int, j: int, a: int, b: int) -> float:
    return float(winprob_dp.farkle_worth(ctx, np.array(i), np.array(j), np.array(a), np.array(b)))


# ---------------------------------------------------------------------- advice
@dataclass(frozen=True, slots=True)
class WinOption:
    """One legal keep valued by the chance to win.

    Attributes:
        keep: faces set aside, sorted.
        points: what they score.
        dice_left: dice left to throw (0 on hot dice).
        action: "bank" or "roll", whichever wins more often ("bank" wins ties).
        win: chance to win after this keep and that action, under play to win from then on.
        bank_win: chance to win if the player banks now (``None`` when banking is not allowed).
        roll_win: chance to win if the player throws on.
        farkle_chance: chance that throwing on, the next throw scores nothing
            (:func:`farklecam.scoring.risk.next_throw_farkle`).
    """

    keep: tuple[int, ...]
    points: int
    dice_left: int
    action: str
    win: float
    bank_win: float | None
    roll_win: float
    farkle_chance: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "keep": list(self.keep),
            "points": self.points,
            "dice_left": self.dice_left,
            "action": self.action,
            "win_probability": self.win,
            "bank_probability": self.bank_win,
            "roll_probability": self.roll_win,
            "farkle_probability": self.farkle_chance,
        }


@dataclass(frozen=True, slots=True)
class WinAdvice:
    """The play that maximises the chance to win, for one roll.

    Attributes:
        scores: the banked scores, the player to move first.
        opponent: the score played against (the best other score).
        last_turn: this is the player's last turn (someone reached the target).
        farkle: nothing scores; ``win`` is the chance to win after the farkle.
        keep, points, dice_left, action: the best keep and bank/roll (empty / ``None`` on a farkle).
        win: the chance to win with that play.
        alternatives: the other keeps, best first.
        points_keep, points_action: what maximising points would do, when it differs (else ``None``).
        points_win: the chance to win of that points play (``None`` when it does not differ); the gap
            to ``win`` is what playing for points costs.
        approximation: what the chances leave out, in words (``None``: exact): more than two players before
            the last round (:func:`combine_opponents`), or what :func:`farklecam.scoring.last_round.approximation`
            names.
        throw_again: a missed single die with throws to spare (Elizabethan): throw it again; ``win`` is
            the chance to win doing so.
        bank_win, roll_win: the advised keep's chance to win by banking (``None``: not allowed) and by
            throwing on (``None`` on a farkle).
        farkle_chance: chance that throwing on after the advised keep the next throw scores nothing
            (after a miss thrown again: that every throw left misses; on a farkle: 1).
    """

    scores: tuple[int, ...]
    opponent: int
    last_turn: bool
    farkle: bool
    keep: tuple[int, ...]
    points: int
    dice_left: int
    action: str | None
    win: float
    alternatives: tuple[WinOption, ...] = ()
    points_keep: tuple[int, ...] | None = None
    points_action: str | None = None
    approximation: str | None = None
    throw_again: bool = False
    points_win: float | None = None
    bank_win: float | None = None
    roll_win: float | None = None
    farkle_chance: float = 1.0

    @property
    def approximate(self) -> bool:
        """Whether the chances are approximate (see ``approximation``)."""
        return self.approximation is not None

    def to_dict(self) -> dict[str, Any]:
        """The ``win`` block of the CLI's and the API's advice."""
        differs = self.points_keep is not None
        points = {
            "keep": list(self.points_keep or ()),
            "action": self.points_action,
            "win_probability": self.points_win,
            "cost": None if self.points_win is None else self.win - self.points_win,
        }
        return {
            "scores": list(self.scores),
            "opponent": self.opponent,
            "last_turn": self.last_turn,
            "farkle": self.farkle,
            "keep": list(self.keep),
            "points": self.points,
            "dice_left": self.dice_left,
            "action": self.action,
            "win_probability": self.win,
            "bank_probability": self.bank_win,
            "roll_probability": self.roll_win,
            "farkle_probability": self.farkle_chance,
            "alternatives": [o.to_dict() for o in self.alternatives],
            "points_advice": points if differs else None,
            "approximate": self.approximate,
            "approximation": self.approximation,
            "throw_again": self.throw_again,
        }


def advise_win(
    roll: Sequence[int],
    rules: Rules,
    scores: Sequence[int],
    *,
    turn_total: int = 0,
    streaks: Sequence[int] | None = None,
    throws_left: int | None = None,
) -> WinAdvice:
    """Best keep and bank/roll by the chance to win.

    Args:
        roll: the faces just thrown.
        rules: the rule configuration (its ``target``, ``exact_target`` and ``last_round`` matter).
        scores: banked scores in turn order, the player to move first, then the others (at least one).
            Before the last round negative scores (after farkle penalties) are read as 0.
        turn_total: points set aside this turn before this roll.
        streaks: farkles in a row per player, in the order of ``scores`` (default none); read only
            where the rules have a farkle penalty.
        throws_left: a single die only: throws allowed for it, this one included (default
            ``rules.single_die_throws``); a miss with throws to spare is thrown again, not a farkle.

    Raises:
        InvalidDiceError: a bad roll.
        IllegalActionError: fewer than two scores, scores or a turn total that are not multiples
            of 50, the player to move already at or past the target, a game that is over, or
            ``throws_left`` out of range or given for several dice.
    """
    from farklecam.scoring.advisor import single_die_throws  # imported here as it imports the solver

    faces = validate_roll(roll, rules)
    throws = single_die_throws(faces, rules, throws_left)
    mine, best, last = check_scores(rules, scores, turn_total)
    if streaks is not None and len(streaks) != len(scores):
        raise IllegalActionError(f"give a farkle streak for each of the {len(scores)} players, got {len(streaks)}")
    told = list(streaks) if streaks is not None else [0] * len(scores)
    points_keep, points_action = _points_view(faces, rules, mine, turn_total)
    if last:  # exact: every later player's last turn counted (farklecam.scoring.last_round)
        turn = last_round.mover_turn(rules, scores, turn_total=turn_total)
        options = [_last_round_option(option, turn, turn_total) for option in legal_set_asides(faces, rules)]
        approximation = last_round.approximation(rules, turn.seats)
        farkle, again = 0.0, turn.throw_again(throws - 1)
    else:  # each opponent's table, the chances combined (see the module)
        rivals = [(max(scores[k], 0), _streaks((told[0], told[k]), rules), k == 1) for k in range(1, len(scores))]
        valued = [_valued_options(faces, rules, mine, o, turn_total, pair, nxt) for o, pair, nxt in rivals]
        options = [_combined(alone) for alone in zip(*valued, strict=True)]
        approximation = table_approximation(rules, len(scores))
        farkle = combine_opponents([_farkle_value(rules, mine, other, pair) for other, pair, _ in rivals])
        again = combine_opponents(
            [_again_value(rules, mine, o, turn_total, pair, throws - 1, nxt) for o, pair, nxt in rivals]
        )
    if not options:
        if len(faces) == 1 and throws > 1:
            risk = next_throw_farkle(rules, 1, throws - 1)
            return WinAdvice(
                tuple(scores), best, last, False, (), 0, 1, "roll", again, approximation=approximation,
                throw_again=True, roll_win=again, farkle_chance=risk,
            )  # fmt: skip
        return WinAdvice(tuple(scores), best, last, True, (), 0, 0, None, farkle, approximation=approximation)
    options.sort(key=lambda o: (-o.win, -o.points, len(o.keep), o.keep))
    top = options[0]
    differs = (points_keep, points_action) != (top.keep, top.action)
    played = next((o for o in options if o.keep == points_keep), None)
    points_win = None if played is None else played.bank_win if points_action == "bank" else played.roll_win
    return WinAdvice(
        scores=tuple(scores),
        opponent=best,
        last_turn=last,
        farkle=False,
        keep=top.keep,
        points=top.points,
        dice_left=top.dice_left,
        action=top.action,
        win=top.win,
        alternatives=tuple(options[1:]),
        points_keep=points_keep if differs else None,
        points_action=points_action if differs else None,
        approximation=approximation,
        points_win=points_win if differs else None,
        bank_win=top.bank_win,
        roll_win=top.roll_win,
        farkle_chance=top.farkle_chance,
    )


def _last_round_option(option: SetAside, turn: last_round.MoverTurn, turn_total: int) -> WinOption:
    """One keep in the last round, valued exactly: bank (where allowed) or throw on."""
    total = turn_total + option.points
    left = 0 if option.hot_dice else option.dice_left
    bank, roll = turn.bank(total, left), turn.roll(total, left)
    take_bank = bank is not None and bank >= roll
    return WinOption(
        keep=option.keep,
        points=option.points,
        dice_left=option.dice_left,
        action="bank" if take_bank else "roll",
        win=bank if bank is not None and take_bank else roll,
        bank_win=bank,
        roll_win=roll,
        farkle_chance=next_throw_farkle(turn.rules, left),
    )


def table_approximation(rules: Rules, players: int) -> str | None:
    """What chances from the two-player table leave out before the last round, in words (``None``: exact).

    Several players: each opponent is weighed alone (:func:`combine_opponents`), a bank's pass
    counted against the next player only. Piggyback rules the table does not follow the passes
    of (:func:`farklecam.scoring.winprob_dp.passing_modelled`): every later turn starts fresh.
    """
    parts = []
    if players > 2:
        alone = "each opponent weighed alone, the chances combined"
        parts.append(f"{alone}; a bank's pass counted against the next player only" if rules.piggyback else alone)
    if rules.piggyback and not winprob_dp.passing_modelled(rules):
        parts.append("later passes left out (the table follows none with a farkle penalty or an exact target)")
    return "; ".join(parts) or None


def combine_opponents(chances: Sequence[float]) -> float:
    """The chance to win against several opponents from the chances against each one alone.

    Each chance ``p`` is read as the odds of two Bradley-Terry strengths, ``p / (1 - p)``
    (mine against theirs), and the field's winner drawn in proportion to strength:
    ``1 / (1 + sum((1 - p) / p))``. One opponent gives ``p`` back; equal players each get
    ``1 / players``; a certain loss to anyone is 0.
    """
    if len(chances) == 1:
        return chances[0]
    total = 0.0
    for p in chances:
        if p <= 0.0:
            return 0.0
        total += (1.0 - p) / p
    return 1.0 / (1.0 + total)


def _combined(alone: Sequence[WinOption]) -> WinOption:
    """One keep valued against the field: its bank and roll chances against each opponent, combined."""
    first = alone[0]
    roll = combine_opponents([o.roll_win for o in alone])
    bank = None if first.bank_win is None else combine_opponents([o.bank_win or 0.0 for o in alone])
    take_bank = bank is not None and bank >= roll
    return WinOption(
        keep=first.keep,
        points=first.points,
        dice_left=first.dice_left,
        action="bank" if take_bank else "roll",
        win=bank if bank is not None and take_bank else roll,
        bank_win=bank,
        roll_win=roll,
        farkle_chance=first.farkle_chance,
    )


def check_scores(rules: Rules, scores: Sequence[int], turn_total: int = 0) -> tuple[int, int, bool]:
    """Validate the scores :func:`advise_win` is given; ``(mine, best other, last turn)``, negatives read as 0.

    Raises:
        IllegalActionError: see :func:`advise_win`.
    """
    if len(scores) < 2:
        raise IllegalActionError("--scores needs the player's score and at least one other, e.g. 2500,4000")
    for value in (*scores, turn_total):
        if isinstance(value, bool) or not isinstance(value, int) or value % STEP:
            raise IllegalActionError(f"scores and turn totals are multiples of {STEP}, got {value!r}")
    if turn_total < 0:
        raise IllegalActionError(f"a turn total is at least 0, got {turn_total}")
    mine, others = max(scores[0], 0), [max(s, 0) for s in scores[1:]]
    goal = rules.target
    if mine >= goal:
        raise IllegalActionError(f"the player to move has {mine}, at or past the target {goal}: no turn to advise")
    best = max(others)
    if rules.exact_target and best > goal:
        raise IllegalActionError(f"with exact_target no score passes the target {goal}, got {best}")
    if best >= goal and not rules.last_round:
        raise IllegalActionError(f"a player has reached the target {goal}: the game is over (last_round is off)")
    return mine, best, best >= goal


def _points_view(faces: tuple[int, ...], rules: Rules, mine: int, turn_total: int) -> tuple[tuple[int, ...], str]:
    from farklecam.scoring.advisor import advise  # the points advisor; imported here as it imports the solver

    found = advise(faces, rules, turn_total=turn_total, on_board=mine > 0)
    return found.keep, found.action or ""


def _farkle_value(rules: Rules, mine: int, best: int, streaks: tuple[int, int]) -> float:
    return _farkle_worth(context(rules), mine // STEP, best // STEP, *streaks)


def _again_value(
    rules: Rules, mine: int, other: int, turn_total: int, streaks: tuple[int, int], throws: int, passes_on: bool
) -> float:
    """A missed single die thrown again with ``throws`` throws still allowed after this one, against one opponent."""
    ctx = context(rules, passes_on)
    i, j = mine // STEP, other // STEP
    turn = _turn(rules, i, j, *streaks, passes_on)
    chance, t = ctx.chance, turn_total // STEP
    last = turn.dec.shape[0] - 1
    success = 0.0
    for r in np.nonzero(chance.row_size == 1)[0]:
        keeps = range(chance.row_start[r], chance.row_start[r + 1])
        best = max(float(turn.dec[min(t + chance.pts[o], last), chance.nxt[o], 0]) for o in keeps)
        success += float(chance.row_prob[r]) * best
    q = float(chance.pf[1])
    return success * sum(q**k for k in range(throws)) + q**throws * _farkle_value(rules, mine, other, streaks)


def _valued_options(
    faces: tuple[int, ...],
    rules: Rules,
    mine: int,
    best: int,
    turn_total: int,
    streaks: tuple[int, int],
    passes_on: bool = True,
) -> list[WinOption]:
    """Each keep of ``faces`` against one opponent with ``best``; ``passes_on`` as :func:`context`."""
    d = rules.dice
    ctx = context(rules, passes_on)
    i, j = mine // STEP, best // STEP
    turn = _turn(rules, i, j, *streaks, passes_on)
    cap = int(winprob_dp.bank_caps(ctx, np.array([i]), np.array([j]))[0])
    f = np.array([[_farkle_worth(ctx, i, j, *streaks)]])
    out = []
    for option in legal_set_asides(faces, rules):
        total = turn_total + option.points
        t = total // STEP
        m = option.dice_left if not option.hot_dice else 0
        allowed = total >= max(rules.bank_minimum(mine > 0), STEP) and not (
            option.hot_dice and rules.must_roll_after_hot_dice
        )
        if t < cap:
            roll = float(turn.throw[t, d if m == 0 else m, 0])
        else:  # past the cap: the closed form (bank, or the farkle worth past an exact target)
            roll = float(turn.dec[min(t, turn.dec.shape[0] - 1), m, 0])
        if ctx.passing:  # the bank passes its total and the dice left
            bank = float(winprob_dp.pass_bank_values(ctx, np.array([[i]]), np.array([[j]]), np.array([[t]]))[0, m, 0])
        else:
            bank_at = winprob_dp.bank_values(ctx, np.array([[i]]), np.array([[j]]), f, np.array([[t]]), streaks[1])
            bank = float(bank_at[0][0, 0])
        bank_win = bank if allowed else None
        take_bank = bank_win is not None and bank_win >= roll
        out.append(
            WinOption(
                keep=option.keep,
                points=option.points,
                dice_left=option.dice_left,
                action="bank" if take_bank else "roll",
                win=bank if take_bank else roll,
                bank_win=bank_win,
                roll_win=roll,
                farkle_chance=next_throw_farkle(rules, m),
            )
        )
    return out
