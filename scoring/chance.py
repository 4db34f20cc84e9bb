"""The dice as an explicit chance node: every distinct roll of n dice with its exact probability.

The solver and the tests consume the same table, so probabilities such as
P(farkle) can be compared as exact :class:`~fractions.Fraction` values.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from math import factorial, prod

__all__ = ["roll_outcomes"]


@cache
def roll_outcomes(n_dice: int) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """Every sorted roll of ``n_dice`` fair dice and its probability (they sum to exactly 1).

    Example:
        >>> len(roll_outcomes(6)), sum(p for _, p in roll_outcomes(6))
        (462, Fraction(1, 1))
    """
    if not 1 <= n_dice <= 6:
        raise ValueError(f"n_dice must be 1-6, got {n_dice}")
    total = 6**n_dice
    outcomes = []
    for roll in combinations_with_replacement(range(1, 7), n_dice):
        ways = factorial(n_dice) // prod(factorial(roll.count(f)) for f in set(roll))
        outcomes.append((roll, Fraction(ways, total)))
    return tuple(outcomes)
