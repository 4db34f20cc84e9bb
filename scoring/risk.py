"""The risk of throwing on: the chance that the next throw of the dice left scores nothing.

Every piece of advice shows it next to each keep (points advice, win advice, CLI and
API), so a player sees what throwing on puts at stake, whichever action is advised.
"""

from __future__ import annotations

from farklecam.scoring.rules import Rules
from farklecam.scoring.turn_dp import cached_tables

__all__ = ["next_throw_farkle"]


def next_throw_farkle(rules: Rules, dice_left: int, throws: int | None = None) -> float:
    """Chance that throwing the dice left after a keep ends the turn in a farkle.

    Args:
        rules: the rule set.
        dice_left: dice left to throw (0: hot dice, all of them come back).
        throws: a single die only: throws it still has to score (default ``rules.single_die_throws``);
            it farkles only when every one of them misses (Elizabethan rules).
    """
    n = rules.dice if dice_left == 0 else dice_left
    miss = float(cached_tables(rules).pf[n])
    if n == 1:
        return miss ** (rules.single_die_throws if throws is None else throws)
    return miss
