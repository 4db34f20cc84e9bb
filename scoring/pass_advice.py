"""Progressive play: take the dice the last banker passed, or start fresh.

The house text's progressive rules let a player throw the dice the last banker
left ("Bank 1600 with TWO to pass") and build on that total, or throw all six
from zero. :func:`advise_pass` gives the one answer every surface shows (the
``advise`` verb, the API, the camera table and its page):

* by points: this turn's expected points either way under the exact turn policy
  (:func:`farklecam.scoring.advisor.advise_piggyback`), and the chance that the
  throw of the passed dice scores nothing;
* with the players' scores, by the chance to win
  (:func:`farklecam.scoring.pass_win.advise_pass_win`): what each choice passes on
  to the others is in those chances, so this is the advice where it is given.

Six passed dice (after hot dice) are the same throw as a fresh one with points set
aside, and taking them is never worse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from farklecam.scoring.advisor import advise_piggyback
from farklecam.scoring.pass_win import PassWinAdvice, advise_pass_win, check_pass
from farklecam.scoring.risk import next_throw_farkle
from farklecam.scoring.rules import Rules

__all__ = ["PassAdvice", "advise_pass"]


@dataclass(frozen=True, slots=True)
class PassAdvice:
    """Take the passed dice or start fresh: by points, and with the scores by the chance to win.

    Attributes:
        total: the total on offer.
        dice: the dice on offer.
        points_take: taking expects more points this turn than starting fresh.
        expected_take: this turn's expected points taking the pass, played for points.
        expected_fresh: the same starting fresh.
        farkle_chance: chance that the throw of the passed dice scores nothing (the pass is then lost).
        win: the choice by the chance to win, where the scores were given.
    """

    total: int
    dice: int
    points_take: bool
    expected_take: float
    expected_fresh: float
    farkle_chance: float
    win: PassWinAdvice | None = None

    @property
    def take(self) -> bool:
        """The advice: by the chance to win where known, else by points."""
        return self.win.take if self.win is not None else self.points_take

    @property
    def text(self) -> str:
        """One line for the players."""
        if self.win is not None:
            return self.win.text
        dice = f"{self.dice} passed {'die' if self.dice == 1 else 'dice'} for {self.total}"
        worth = f"taking is worth {self.expected_take:.0f} points this turn, fresh {self.expected_fresh:.0f}"
        return f"{'take the ' + dice if self.points_take else 'start fresh'}: {worth}"

    def to_dict(self) -> dict[str, Any]:
        """The ``passed`` block of an answer (``win`` only where the scores were given)."""
        data: dict[str, Any] = {
            "total": self.total,
            "dice": self.dice,
            "take": self.take,
            "points_take": self.points_take,
            "expected_take": self.expected_take,
            "expected_fresh": self.expected_fresh,
            "farkle_probability": self.farkle_chance,
            "text": self.text,
        }
        if self.win is not None:
            data["win"] = {"available": True, **self.win.to_dict()}
        return data


def advise_pass(
    rules: Rules,
    total: int,
    dice: int,
    *,
    on_board: bool = True,
    scores: Sequence[int] | None = None,
    streaks: Sequence[int] | None = None,
) -> PassAdvice:
    """Whether to throw the ``dice`` passed with ``total`` or start fresh.

    Args:
        rules: a piggyback rule set (progressive).
        total: the passed total.
        dice: the passed dice.
        on_board: whether the player is on the board (read from ``scores`` where given).
        scores: banked scores in turn order, the player to move first; with them the advice
            is by the chance to win (the two-player tables must be solved: see
            :func:`farklecam.scoring.winprob.ready`).
        streaks: farkles in a row per player, with ``scores``.

    Raises:
        IllegalActionError: a pass :func:`farklecam.scoring.pass_win.check_pass` refuses, or scores
            and streaks :func:`farklecam.scoring.pass_win.advise_pass_win` refuses.
    """
    check_pass(rules, total, dice)
    win = None if scores is None else advise_pass_win(rules, scores, total, dice, streaks=streaks)
    board = on_board if scores is None else scores[0] > 0
    points = advise_piggyback(rules, total, dice, on_board=board)
    left = 0 if dice == rules.dice else dice
    return PassAdvice(
        total=total,
        dice=dice,
        points_take=points.take,
        expected_take=points.expected_take,
        expected_fresh=points.expected_fresh,
        farkle_chance=next_throw_farkle(rules, left),
        win=win,
    )
