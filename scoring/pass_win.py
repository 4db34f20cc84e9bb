"""Progressive by the chance to win: take the dice the last banker passed, or start fresh.

The house text's progressive rules let a player throw the dice the last banker left
("Bank 1600 with TWO to pass") and build on that total, or throw all six from zero,
and warn that "the more dice you pass to the next person increases their chances of
building on your score". :func:`advise_pass_win` weighs the two by the chance to win:

* two players, before the last round: exact. The two-player table follows every pass
  (:func:`farklecam.scoring.winprob_dp.passing_modelled`): taking is throwing the passed
  dice with their total set aside in the same turn the table solves, and whatever that
  turn banks is passed on in turn, to an opponent who takes it where that is better for them;
* three or four players, before the last round: each opponent weighed alone by that
  table, the chances combined (:func:`farklecam.scoring.winprob.combine_opponents`), the
  mover's own pass counted against the next player only: a labelled approximation, as the
  rest of the advisor does there;
* in the last round: exact for any number of players (:mod:`farklecam.scoring.last_round`).

Beside it stands what playing for points would do (:func:`farklecam.scoring.advisor.advise_piggyback`:
this turn's expected points, nothing weighed for the opponents) and what that choice costs.
A pass is taken only where it is strictly better.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from farklecam.errors import IllegalActionError
from farklecam.scoring import last_round
from farklecam.scoring.advisor import advise_piggyback
from farklecam.scoring.risk import next_throw_farkle
from farklecam.scoring.rules import Rules
from farklecam.scoring.winprob import STEP, check_scores, combine_opponents, table_approximation, take_or_fresh

__all__ = ["PassWinAdvice", "advise_pass_win", "check_pass"]


@dataclass(frozen=True, slots=True)
class PassWinAdvice:
    """Take the passed dice or start fresh, by the chance to win, with what playing for points would do.

    Attributes:
        scores: the banked scores in turn order, the player to move first.
        opponent: the best score of the others.
        last_turn: someone has reached the target: this is the player's last turn.
        passed_total: the total on offer.
        passed_dice: the dice on offer.
        take: throw the passed dice (building on their total) rather than all dice from zero.
        take_win: the chance to win taking the pass, playing to win from then on.
        fresh_win: the chance to win starting fresh.
        expected_take: this turn's expected points taking the pass, played for points.
        expected_fresh: the same starting fresh.
        farkle_chance: chance that the throw of the passed dice scores nothing (the pass is then lost).
        approximation: what the chances leave out, in words (``None``: exact).
    """

    scores: tuple[int, ...]
    opponent: int
    last_turn: bool
    passed_total: int
    passed_dice: int
    take: bool
    take_win: float
    fresh_win: float
    expected_take: float
    expected_fresh: float
    farkle_chance: float
    approximation: str | None = None

    @property
    def win(self) -> float:
        """The chance to win with the advised choice."""
        return self.take_win if self.take else self.fresh_win

    @property
    def points_take(self) -> bool:
        """What playing for this turn's points would choose: take where that expects more points."""
        return self.expected_take > self.expected_fresh

    @property
    def points_cost(self) -> float:
        """Chance to win that the points choice gives up (0 where both choose the same)."""
        return self.win - (self.take_win if self.points_take else self.fresh_win)

    @property
    def text(self) -> str:
        """One line for the players."""
        dice = f"{self.passed_dice} passed {'die' if self.passed_dice == 1 else 'dice'} for {self.passed_total}"
        if self.take:
            return f"take the {dice}: chance to win {self.take_win:.1%} (starting fresh: {self.fresh_win:.1%})"
        return f"start fresh: chance to win {self.fresh_win:.1%} (taking the {dice}: {self.take_win:.1%})"

    def to_dict(self) -> dict[str, Any]:
        """The ``win`` block of the pass advice (CLI ``--json`` and the API)."""
        return {
            "scores": list(self.scores),
            "opponent": self.opponent,
            "last_turn": self.last_turn,
            "take": self.take,
            "win_probability": self.win,
            "take_probability": self.take_win,
            "fresh_probability": self.fresh_win,
            "points_take": self.points_take,
            "points_cost": self.points_cost,
            "approximate": self.approximation is not None,
            "approximation": self.approximation,
            "text": self.text,
        }


def check_pass(rules: Rules, total: int, dice: int) -> None:
    """Refuse a pass these rules cannot offer.

    Raises:
        IllegalActionError: rules without piggyback, a total that is not a positive multiple of 50,
            or a number of dice outside 1..``rules.dice``.
    """
    if not rules.piggyback:
        raise IllegalActionError("these rules pass no dice (piggyback is off); try --rules progressive")
    if isinstance(total, bool) or not isinstance(total, int) or total < STEP or total % STEP:
        raise IllegalActionError(f"a passed total is a positive multiple of {STEP}, got {total!r}")
    if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= rules.dice:
        raise IllegalActionError(f"passed dice are 1-{rules.dice}, got {dice!r}")


def advise_pass_win(
    rules: Rules, scores: Sequence[int], total: int, dice: int, *, streaks: Sequence[int] | None = None
) -> PassWinAdvice:
    """Whether to throw the ``dice`` passed with ``total`` or start fresh, by the chance to win.

    Args:
        rules: a piggyback rule set (progressive).
        scores: banked scores in turn order, the player to move first; the last of them banked the pass.
        total: the passed total (points).
        dice: the passed dice.
        streaks: farkles in a row per player, as :func:`farklecam.scoring.winprob.advise_win` reads them.

    Raises:
        IllegalActionError: a pass :func:`check_pass` refuses, scores
            :func:`farklecam.scoring.winprob.check_scores` refuses, a total at or past the target
            before the last round (its banker would have reached it), or streaks that do not fit.
    """
    check_pass(rules, total, dice)
    mine, best, last = check_scores(rules, scores)
    left = 0 if dice == rules.dice else dice  # the turn's state: dice left to throw (0: all of them)
    if last:
        take = last_round.mover_turn(rules, scores, turn_total=total).roll(total, left)
        fresh_turn = last_round.mover_turn(rules, scores)
        fresh, approximation = fresh_turn.roll(0, 0), last_round.approximation(rules, fresh_turn.seats)
    else:
        if total >= rules.target:
            raise IllegalActionError(f"a pass of {total} before the last round: its banker would have reached it")
        told = list(streaks) if streaks is not None else [0] * len(scores)
        if len(told) != len(scores):
            raise IllegalActionError(f"give a farkle streak for each of the {len(scores)} players, got {len(told)}")
        alone = [
            take_or_fresh(rules, mine, max(scores[k], 0), total, dice, passes_on=k == 1, streaks=(told[0], told[k]))
            for k in range(1, len(scores))
        ]
        take = combine_opponents([t for t, _ in alone])
        fresh = combine_opponents([f for _, f in alone])
        approximation = table_approximation(rules, len(scores))
    points = advise_piggyback(rules, total, dice, on_board=mine > 0)
    return PassWinAdvice(
        scores=tuple(scores),
        opponent=best,
        last_turn=last,
        passed_total=total,
        passed_dice=dice,
        take=take > fresh,
        take_win=take,
        fresh_win=fresh,
        expected_take=points.expected_take,
        expected_fresh=points.expected_fresh,
        farkle_chance=next_throw_farkle(rules, left),
        approximation=approximation,
    )
