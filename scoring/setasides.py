"""Every legal set-aside of a roll.

A set-aside (a "keep") is a choice of dice from one roll whose every die scores
in some combination of that roll. For each roll :func:`legal_set_asides` lists
every distinct keep with its best points, the dice left and whether it makes
hot dice; an empty list is a farkle. The Zilch rule "a scoreless throw of all
the dice is worth ``no_score_bonus``" appears here as one more keep (all dice,
hot), so that every consumer sees it the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import product
from typing import Any

from farklecam.errors import IllegalActionError, InvalidDiceError
from farklecam.scoring.combinations import Counts, best_score, counts_of, faces_of
from farklecam.scoring.rules import Rules

__all__ = ["NO_SCORE_BONUS", "SetAside", "is_farkle", "legal_set_asides", "score_keep", "validate_roll"]

#: Name of the pseudo-combination for Zilch's scoreless six-dice throw.
NO_SCORE_BONUS = "no-score throw"


@dataclass(frozen=True, slots=True)
class SetAside:
    """One legal keep of a roll.

    Attributes:
        keep: the faces kept, sorted.
        points: the best count of those dice as combinations of this roll.
        dice_left: dice of the roll not kept (0 on hot dice).
        hot_dice: every die of the throw has now scored: all dice may be thrown again.
        combinations: names of the combinations that make up ``points``.
    """

    keep: tuple[int, ...]
    points: int
    dice_left: int
    hot_dice: bool
    combinations: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON form used by the CLI and the web service."""
        return {
            "keep": list(self.keep),
            "points": self.points,
            "dice_left": self.dice_left,
            "hot_dice": self.hot_dice,
            "combinations": list(self.combinations),
        }


def validate_roll(roll: Iterable[int], rules: Rules) -> tuple[int, ...]:
    """Check a roll's faces and size; return it sorted.

    Raises:
        InvalidDiceError: a face outside 1-6, no dice, or more dice than the rules play with.
    """
    faces = tuple(roll)
    bad = [f for f in faces if isinstance(f, bool) or not isinstance(f, int) or not 1 <= f <= 6]
    if bad:
        raise InvalidDiceError(f"dice faces must be 1-6, got {bad[0]!r}")
    if not faces:
        raise InvalidDiceError("a roll needs at least one die")
    if len(faces) > rules.dice:
        raise InvalidDiceError(f"a roll has at most {rules.dice} dice under these rules, got {len(faces)}")
    return tuple(sorted(faces))


def legal_set_asides(roll: Sequence[int], rules: Rules) -> tuple[SetAside, ...]:
    """Every legal keep of ``roll``, best points first; empty means a farkle.

    Raises:
        InvalidDiceError: see :func:`validate_roll`.
    """
    return _set_asides(counts_of(validate_roll(roll, rules)), rules)


def is_farkle(roll: Sequence[int], rules: Rules) -> bool:
    """True when the roll has no legal keep."""
    return not legal_set_asides(roll, rules)


def score_keep(roll: Sequence[int], keep: Sequence[int], rules: Rules) -> SetAside:
    """Check one proposed keep against a roll and return it scored.

    Raises:
        IllegalActionError: the keep is not a part of the roll, or includes a die that does not score.
    """
    faces = validate_roll(roll, rules)
    kept = tuple(sorted(keep))
    for option in _set_asides(counts_of(faces), rules):
        if option.keep == kept:
            return option
    have, want = counts_of(faces), counts_of(k for k in kept if 1 <= k <= 6)
    if len(kept) != sum(want) or any(w > h for w, h in zip(want, have, strict=True)):
        raise IllegalActionError(f"cannot keep {list(kept)}: those dice are not all in the roll {list(faces)}")
    if not kept:
        raise IllegalActionError("a keep must set aside at least one scoring die")
    if rules.must_keep_all_scoring and best_score(want, rules) is not None:
        raise IllegalActionError(f"these rules make you set aside every scoring die of {list(faces)}")
    raise IllegalActionError(f"cannot keep {list(kept)} from {list(faces)}: not every kept die scores")


@cache
def _set_asides(roll: Counts, rules: Rules) -> tuple[SetAside, ...]:
    n = sum(roll)
    options: list[SetAside] = []
    for keep in product(*(range(c + 1) for c in roll)):
        kept: Counts = (keep[0], keep[1], keep[2], keep[3], keep[4], keep[5])
        scored = best_score(kept, rules)
        if scored is None:
            continue
        left = n - sum(kept)
        options.append(
            SetAside(faces_of(kept), scored.points, left, left == 0, tuple(c.name for c in scored.combinations))
        )
    if not options and rules.no_score_bonus and n == rules.dice:
        options.append(SetAside(faces_of(roll), rules.no_score_bonus, 0, True, (NO_SCORE_BONUS,)))
    if rules.must_keep_all_scoring and options:
        most = max(len(o.keep) for o in options)
        options = [o for o in options if len(o.keep) == most]
    options.sort(key=lambda o: (-o.points, len(o.keep), o.keep))
    return tuple(options)
