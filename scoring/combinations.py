"""Counting dice as combinations: the best points a set of dice from one roll is worth.

Dice are handled as face counts (``counts[f - 1]`` dice showing ``f``), which
makes "the same dice in another order" one value. :func:`best_score` finds the
best way to count *all* the given dice as combinations of the rule table, or
``None`` if some die cannot score; every other part (the set-aside enumerator,
the solver, the game) asks this one function.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from itertools import combinations

from farklecam.scoring.rules import Rules

__all__ = ["Combination", "Counts", "Scored", "best_score", "counts_of", "faces_of"]

Counts = tuple[int, int, int, int, int, int]
_WORDS = {1: "1s", 2: "2s", 3: "3s", 4: "4s", 5: "5s", 6: "6s"}
_KIND_NAMES = {3: "three", 4: "four", 5: "five", 6: "six"}


@dataclass(frozen=True, slots=True)
class Combination:
    """One scoring combination: which dice it uses and what it is worth."""

    name: str
    counts: Counts
    points: int


@dataclass(frozen=True, slots=True)
class Scored:
    """The best way to count a set of dice: total points and the combinations used."""

    points: int
    combinations: tuple[Combination, ...]


def counts_of(faces: Iterable[int]) -> Counts:
    """Face counts of some dice (faces assumed already validated to 1..6)."""
    c = [0] * 6
    for f in faces:
        c[f - 1] += 1
    return (c[0], c[1], c[2], c[3], c[4], c[5])


def faces_of(counts: Counts) -> tuple[int, ...]:
    """Sorted faces of a count vector."""
    return tuple(f for f in range(1, 7) for _ in range(counts[f - 1]))


def _vec(pairs: Iterable[tuple[int, int]]) -> Counts:
    c = [0] * 6
    for face, n in pairs:
        c[face - 1] += n
    return (c[0], c[1], c[2], c[3], c[4], c[5])


@cache
def _table(rules: Rules) -> tuple[Combination, ...]:
    """Every combination the rules score, most dice first (the order only affects speed)."""
    table: list[Combination] = []
    if rules.straight:
        table.append(Combination("straight", (1, 1, 1, 1, 1, 1), rules.straight))
    for a, b, c in combinations(range(1, 7), 3):
        if rules.three_pairs:
            table.append(Combination("three pairs", _vec([(a, 2), (b, 2), (c, 2)]), rules.three_pairs))
    for a in range(1, 7):
        for b in range(1, 7):
            if a == b:
                continue
            if rules.four_kind_with_pair:
                table.append(
                    Combination("four of a kind with a pair", _vec([(a, 4), (b, 2)]), rules.four_kind_with_pair)
                )
            if rules.two_triplets and a < b:
                table.append(Combination("two triplets", _vec([(a, 3), (b, 3)]), rules.two_triplets))
    for n in (6, 5, 4, 3):
        for face in range(1, 7):
            points = rules.kind(face, n)
            if points:
                table.append(Combination(f"{_KIND_NAMES[n]} {_WORDS[face]}", _vec([(face, n)]), points))
    table.append(Combination("single 1", _vec([(1, 1)]), rules.single_one))
    table.append(Combination("single 5", _vec([(5, 1)]), rules.single_five))
    return tuple(table)


def best_score(counts: Counts, rules: Rules) -> Scored | None:
    """Best way to count every one of these dice (all from one roll) as combinations.

    Args:
        counts: face counts of the dice kept.
        rules: the rule configuration.

    Returns:
        The best total and its combinations, or ``None`` when some die cannot be
        part of any combination (the keep is illegal), or when no dice are given.
    """
    if sum(counts) == 0:
        return None
    return _best(counts, rules)


@cache
def _best(counts: Counts, rules: Rules) -> Scored | None:
    if sum(counts) == 0:
        return Scored(0, ())
    # The lowest face still present must be used by some combination: branching only on
    # combinations that contain it enumerates every partition once instead of in every order.
    first = next(i for i, n in enumerate(counts) if n)
    best: Scored | None = None
    for combo in _table(rules):
        if combo.counts[first] == 0 or any(c > n for c, n in zip(combo.counts, counts, strict=True)):
            continue
        if not rules.split_kinds and _splits_a_kind(combo, counts):
            continue
        rest = _best(_sub(counts, combo.counts), rules)
        if rest is None:
            continue
        total = combo.points + rest.points
        if best is None or total > best.points:
            best = Scored(total, (combo, *rest.combinations))
    return best


def _splits_a_kind(combo: Combination, counts: Counts) -> bool:
    """True when ``combo`` uses only part of a group of three or more equal dice.

    With ``split_kinds`` off, a group of 3+ equal dice must be counted whole
    (four 1s are four of a kind, not three 1s plus a single 1).
    """
    return any(0 < used < have and have >= 3 for used, have in zip(combo.counts, counts, strict=True))


def _sub(a: Counts, b: Counts) -> Counts:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5])
