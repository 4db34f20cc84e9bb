"""Exact advice for one roll: which dice to keep, then bank or roll, with expected values.

:func:`advise` looks every legal keep of the roll up in the solved policy
(:func:`farklecam.scoring.solver.solve`, cached) and ranks them. ``expected`` is always
the value of the turn *from here*, including the points already set aside,
under optimal play from now on:

* without a farkle penalty, the expected points this turn banks (a farkle is 0);
* with one, the relative value of the average-reward solution (see
  :mod:`farklecam.scoring.solver`): this turn's expected points plus the change in
  long-run prospects (a farkle is worth a negative amount once the run of
  farkles nears the penalty). At the start of a turn with no farkles behind it
  is the long-run average points per turn.

States the CLI cannot express are keywords: ``farkle_streak`` (farkles in a row
before this turn), ``throws_left`` (Elizabethan single die: throws still allowed,
this one included). Progressive/piggyback play is just ``turn_total`` (the
inherited total) with a roll of the passed dice; :func:`advise_piggyback` says
whether taking them beats starting fresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from farklecam.errors import IllegalActionError
from farklecam.scoring.risk import next_throw_farkle
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides, validate_roll
from farklecam.scoring.solver import solve

__all__ = ["Action", "Advice", "KeepOption", "PiggybackAdvice", "advise", "advise_piggyback", "single_die_throws"]

Action = Literal["bank", "roll"]


@dataclass(frozen=True, slots=True)
class KeepOption:
    """One legal keep with its best follow-up.

    Attributes:
        keep: faces set aside, sorted.
        points: what they score.
        dice_left: dice left to throw (0 on hot dice: all dice come back).
        hot_dice: every die has scored.
        action: the better of banking the new total and throwing on ("bank" wins ties).
        expected: value of the turn after this keep under optimal play (see the module docstring).
        roll_expected: value if the player throws on instead (equal to ``expected`` when rolling is best).
        bank_allowed: whether the rules let the player stop with this total.
        farkle_chance: chance that throwing on, the next throw of the dice left scores nothing
            (:func:`farklecam.scoring.risk.next_throw_farkle`): the risk that throwing on takes.
    """

    keep: tuple[int, ...]
    points: int
    dice_left: int
    hot_dice: bool
    action: Action
    expected: float
    roll_expected: float
    bank_allowed: bool
    farkle_chance: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: keep, points, action, expected, dice_left, hot_dice, farkle_probability."""
        return {
            "keep": list(self.keep),
            "points": self.points,
            "action": self.action,
            "expected": self.expected,
            "dice_left": self.dice_left,
            "hot_dice": self.hot_dice,
            "farkle_probability": self.farkle_chance,
        }


@dataclass(frozen=True, slots=True)
class Advice:
    """The best play for one roll.

    Attributes:
        roll: the roll, sorted.
        turn_total: points set aside before this roll.
        farkle: no keep is possible and the turn is over (``keep`` is empty, ``action`` is ``None``,
            ``expected`` is what the farkle is worth: 0 without a penalty).
        keep: the best keep (empty on a farkle, and on an Elizabethan single-die miss with throws left,
            where ``action`` is "roll": throw the die again).
        points: points of ``keep``.
        dice_left: dice left after ``keep`` (0 on hot dice).
        hot_dice: ``keep`` uses every die.
        action: "bank" or "roll" after ``keep``; ``None`` on a farkle.
        expected: value of the turn from here under optimal play (module docstring).
        alternatives: every other legal keep, best first, each with its own best action.
        throw_again: an Elizabethan single-die miss with throws left: throw the same die again.
        farkle_chance: chance that throwing on after ``keep`` the next throw scores nothing (after a
            miss thrown again: that every throw left misses; on a farkle: 1).
    """

    roll: tuple[int, ...]
    turn_total: int
    farkle: bool
    keep: tuple[int, ...]
    points: int
    dice_left: int
    hot_dice: bool
    action: Action | None
    expected: float
    alternatives: tuple[KeepOption, ...] = ()
    throw_again: bool = False
    farkle_chance: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """The CLI's ``advise`` JSON: farkle, keep, points, action, expected, farkle_probability, alternatives."""
        return {
            "farkle": self.farkle,
            "throw_again": self.throw_again,
            "keep": list(self.keep),
            "points": self.points,
            "action": self.action,
            "expected": self.expected,
            "dice_left": self.dice_left,
            "hot_dice": self.hot_dice,
            "farkle_probability": self.farkle_chance,
            "alternatives": [option.to_dict() for option in self.alternatives],
        }


@dataclass(frozen=True, slots=True)
class PiggybackAdvice:
    """Progressive/piggyback: throw the dice passed on (building on their total) or start fresh."""

    take: bool
    expected_take: float
    expected_fresh: float


def advise(
    roll: Sequence[int],
    rules: Rules,
    *,
    turn_total: int = 0,
    on_board: bool = True,
    farkle_streak: int = 0,
    throws_left: int | None = None,
) -> Advice:
    """Best keep and next action for ``roll``.

    Args:
        roll: the faces just thrown (any order); their number is the number of dice thrown.
        rules: the rule configuration.
        turn_total: points set aside this turn before this roll (or inherited when piggybacking).
        on_board: whether the player has banked a first score (``opening_minimum``).
        farkle_streak: farkles in a row before this turn (only matters with a farkle penalty).
        throws_left: single die only: throws allowed for it, this one included (default
            ``rules.single_die_throws``).

    Raises:
        InvalidDiceError: a bad roll (see :func:`farklecam.scoring.setasides.validate_roll`).
        IllegalActionError: a turn total that is not a non-negative multiple of 50, an impossible
            farkle streak, or ``throws_left`` out of range or given for several dice.
    """
    faces = validate_roll(roll, rules)
    throws = single_die_throws(faces, rules, throws_left)
    policy = solve(rules)
    policy.check_state(turn_total, farkle_streak=farkle_streak)
    options = []
    for option in legal_set_asides(faces, rules):
        total = turn_total + option.points
        action, value, roll_value = policy.decide(
            total, option.dice_left, on_board=on_board, farkle_streak=farkle_streak
        )
        options.append(
            KeepOption(
                keep=option.keep,
                points=option.points,
                dice_left=option.dice_left,
                hot_dice=option.hot_dice,
                action="bank" if action == "bank" else "roll",
                expected=value,
                roll_expected=roll_value,
                bank_allowed=policy.bank_allowed(total, on_board=on_board, hot_dice=option.hot_dice),
                farkle_chance=next_throw_farkle(rules, 0 if option.hot_dice else option.dice_left),
            )
        )
    if not options:
        if len(faces) == 1 and throws > 1:
            again = policy.roll_value(
                turn_total, 1, on_board=on_board, farkle_streak=farkle_streak, throws_left=throws - 1
            )
            risk = next_throw_farkle(rules, 1, throws - 1)
            return Advice(
                faces, turn_total, False, (), 0, 1, False, "roll", again, throw_again=True, farkle_chance=risk
            )
        lost = policy.farkle_value(on_board=on_board, farkle_streak=farkle_streak)
        return Advice(faces, turn_total, True, (), 0, 0, False, None, lost)
    options.sort(key=lambda o: (-o.expected, -o.points, len(o.keep), o.keep))
    best = options[0]
    return Advice(
        roll=faces,
        turn_total=turn_total,
        farkle=False,
        keep=best.keep,
        points=best.points,
        dice_left=best.dice_left,
        hot_dice=best.hot_dice,
        action=best.action,
        expected=best.expected,
        alternatives=tuple(options[1:]),
        farkle_chance=best.farkle_chance,
    )


def single_die_throws(faces: Sequence[int], rules: Rules, throws_left: int | None) -> int:
    """Throws still allowed for a single die, this one included: ``throws_left``, checked, or all of them.

    Every advisor reads a missed single die the same way: with throws to spare it is
    thrown again (Elizabethan rules), not a farkle.

    Raises:
        IllegalActionError: ``throws_left`` given for several dice, or outside ``1..single_die_throws``.
    """
    if throws_left is None:
        return rules.single_die_throws
    if isinstance(throws_left, bool) or not isinstance(throws_left, int):
        raise IllegalActionError(f"throws_left is a whole number, got {throws_left!r}")
    if len(faces) != 1:
        raise IllegalActionError("throws_left only applies to a single die")
    if not 1 <= throws_left <= rules.single_die_throws:
        raise IllegalActionError(f"throws_left must be 1-{rules.single_die_throws}, got {throws_left}")
    return throws_left


def advise_piggyback(
    rules: Rules, passed_total: int, passed_dice: int, *, on_board: bool = True, farkle_streak: int = 0
) -> PiggybackAdvice:
    """Whether to throw the ``passed_dice`` left by the last banker, building on ``passed_total``.

    Compares the value of throwing them with ``passed_total`` set aside against a
    fresh turn with all dice. Only the current player's turn is valued (what the
    choice passes on to the next player is not).
    """
    policy = solve(rules)
    take = policy.roll_value(passed_total, passed_dice, on_board=on_board, farkle_streak=farkle_streak)
    fresh = policy.start_value(on_board=on_board, farkle_streak=farkle_streak)
    return PiggybackAdvice(take > fresh, take, fresh)
