"""An independent, deliberately naive scorer used to check farklecam.scoring.combinations.

It tries every set partition of the kept dice into groups and checks each group
against the rule table directly, sharing no code with the engine except the
``Rules`` value itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from functools import cache

from farklecam.scoring.rules import Rules


def set_partitions(items: Sequence[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]
        yield [[first], *part]


def group_points(group: Sequence[int], rules: Rules) -> int:
    c = Counter(group)
    n = len(group)
    if n == 1:
        return {1: rules.single_one, 5: rules.single_five}.get(group[0], 0)
    if len(c) == 1 and n >= 3:
        return rules.kind(group[0], n)
    if n == 6:
        shape = sorted(c.values())
        if shape == [1, 1, 1, 1, 1, 1]:
            return rules.straight
        if shape == [2, 2, 2]:
            return rules.three_pairs
        if shape == [2, 4]:
            return rules.four_kind_with_pair
        if shape == [3, 3]:
            return rules.two_triplets
    return 0


@cache
def brute_best(keep: tuple[int, ...], rules: Rules) -> int | None:
    """Best points counting every die of ``keep`` (sorted), or None."""
    counts = Counter(keep)
    best = None
    for partition in set_partitions(list(keep)):
        points = [group_points(g, rules) for g in partition]
        if not all(points):
            continue
        if not rules.split_kinds and any(counts[f] >= 3 and sum(1 for g in partition if f in g) > 1 for f in counts):
            continue
        if best is None or sum(points) > best:
            best = sum(points)
    return best
