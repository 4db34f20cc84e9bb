"""Progressive play: take the dice passed on, or start fresh, weighing what the choice passes on in turn.

The house text's progressive rules let a player throw the dice the last banker
left ("Bank 1600 with TWO to pass") and build on that total, or throw all six
from zero; and it stresses that "the more dice you pass to the next person
increases their chances of building on your score". So :func:`advise_pass` values
each choice twice:

* ``expected_*``: this turn's expected points under the exact policy
  (:func:`farklecam.scoring.advisor.advise_piggyback`'s figures);
* ``gives_*``: what the turn is expected to hand the next player. A bank of
  ``T`` points with ``d`` dice left offers the next player ``max(0, V(T, d) - V0)``
  over a fresh turn (``V`` the value of throwing ``d`` dice with ``T`` set aside,
  ``V0`` a fresh turn's); a farkle passes nothing. The expectation follows the
  policy's own keeps and banks, over the exact roll probabilities.

The advice takes the pass when ``expected_take - gives_take`` beats
``expected_fresh - gives_fresh``: points for me, less what the next player
(one opponent) gains from my bank. Six passed dice (after hot dice) are the same
throw as a fresh one with more points, and the pass always wins.

The turn is modelled on the board, with no farkle streak and one throw for a
single die: the states a progressive table (house rules) plays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from farklecam.scoring.advisor import advise_piggyback
from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides
from farklecam.scoring.solver import Policy, solve

__all__ = ["PassAdvice", "advise_pass", "expected_gift"]


@dataclass(frozen=True, slots=True)
class PassAdvice:
    """Take the passed dice or start fresh, with what each choice is worth and gives away.

    Attributes:
        take: throw the passed dice (building on their total) rather than all dice from zero.
        passed_total: the total on offer.
        passed_dice: the dice on offer.
        expected_take: this turn's expected points taking the pass.
        expected_fresh: this turn's expected points starting fresh.
        gives_take: expected points the next player is offered by this turn's bank, taking the pass.
        gives_fresh: the same, starting fresh.
    """

    take: bool
    passed_total: int
    passed_dice: int
    expected_take: float
    expected_fresh: float
    gives_take: float
    gives_fresh: float

    @property
    def text(self) -> str:
        """One line for the players."""
        choice = f"take the {self.passed_dice} passed dice for {self.passed_total}" if self.take else "start fresh"
        return (
            f"{choice}: taking is worth {self.expected_take:.0f} and passes on {self.gives_take:.0f}; "
            f"fresh is worth {self.expected_fresh:.0f} and passes on {self.gives_fresh:.0f}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form (numbers rounded to 0.1 points)."""
        return {
            "take": self.take,
            "passed_total": self.passed_total,
            "passed_dice": self.passed_dice,
            "expected_take": round(self.expected_take, 1),
            "expected_fresh": round(self.expected_fresh, 1),
            "gives_take": round(self.gives_take, 1),
            "gives_fresh": round(self.gives_fresh, 1),
            "text": self.text,
        }


def advise_pass(rules: Rules, passed_total: int, passed_dice: int) -> PassAdvice:
    """Whether to throw the ``passed_dice`` left with ``passed_total``, weighing what each choice passes on.

    Raises:
        IllegalActionError: a total or dice count the solver cannot value.
    """
    own = advise_piggyback(rules, passed_total, passed_dice)
    gives_take = expected_gift(rules, passed_total, passed_dice)
    gives_fresh = expected_gift(rules, 0, rules.dice)
    take = (own.expected_take - gives_take, own.take) >= (own.expected_fresh - gives_fresh, False)
    if passed_dice == rules.dice and passed_total > 0:
        take = True  # the same throw with points already set aside
    return PassAdvice(take, passed_total, passed_dice, own.expected_take, own.expected_fresh, gives_take, gives_fresh)


def _offer(policy: Policy, total: int, dice_left: int) -> float:
    """What a bank of ``total`` with ``dice_left`` dice left (0: hot dice, all dice) offers the next player."""
    dice = dice_left or policy.rules.dice
    return max(0.0, policy.roll_value(total, dice) - policy.start_value())


def expected_gift(rules: Rules, total: int, dice: int) -> float:
    """Expected offer to the next player when throwing ``dice`` dice with ``total`` set aside, playing the policy."""
    return _gift(rules, total, dice)


@cache
def _choices(rules: Rules, dice: int) -> tuple[tuple[float, tuple[tuple[int, int], ...]], ...]:
    """Each distinct set of keeps a throw of ``dice`` dice offers, ``(points, dice left)``, with its probability."""
    grouped: dict[tuple[tuple[int, int], ...], float] = {}
    for roll, chance in roll_outcomes(dice):
        keeps = tuple(sorted({(o.points, 0 if o.hot_dice else o.dice_left) for o in legal_set_asides(roll, rules)}))
        if keeps:
            grouped[keeps] = grouped.get(keeps, 0.0) + float(chance)
    return tuple((p, keeps) for keeps, p in grouped.items())


@cache
def _gift(rules: Rules, total: int, dice: int) -> float:
    policy = solve(rules)
    gift = 0.0
    for chance, keeps in _choices(rules, dice):
        best = max(keeps, key=lambda k: policy.decide(total + k[0], k[1])[1])
        after, left = total + best[0], best[1]
        action, _, _ = policy.decide(after, left)
        if action == "bank" or after > policy.cap:
            gift += chance * _offer(policy, after, left)
        else:
            gift += chance * _gift(rules, after, left or rules.dice)
    return gift
