"""The rule configuration: one typed, immutable value that every other part reads.

Rules are data, not code paths. Every scoring table, minimum and house variant
that the rule texts in ``../shared/rules/`` describe is a field of :class:`Rules`;
presets (:mod:`scoring.presets`) are just named values of it, and a user's
``--set key=value`` or TOML file produces another value through
:func:`Rules.with_options`. The set-aside enumerator, the solver and the game
engine branch on these fields and nothing else.

Choices where the texts are ambiguous (documented per field below):

* ``split_kinds``: may four 1s be counted as three 1s plus a single 1? Yes by
  default: a player could have set those same dice aside that way, so a table
  counts the dice the best way (the boxed text: "Score each roll by itself").
* "double" (``kind_scoring = doubling``) doubles the three-of-a-kind score of
  that face, three 1s included: with three 1s at 1000, four are 2000 (the boxed
  text's own example).
* ``two_triplets`` and ``three_pairs`` need distinct faces; six of a kind is its
  own combination, and four of a kind with a pair is ``four_kind_with_pair``.
* Ties after the last round (``tie``): the boxed text says its sources are silent;
  ``shared`` (co-winners) is the default, ``extra_round`` plays tied leaders again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from farklecam.errors import InvalidRulesError

__all__ = ["KindScoring", "Rules", "TieRule", "option_names", "parse_option_value"]


class KindScoring(StrEnum):
    """How four, five and six of a kind score."""

    FIXED = "fixed"
    """Fixed values whatever the face (``four_of_a_kind``/``five_of_a_kind``/``six_of_a_kind``)."""
    ADDING = "adding"
    """Each die past three adds the face's three-of-a-kind score again (four 2s = 400)."""
    DOUBLING = "doubling"
    """Each die past three doubles the score (four 2s = 400, five 800, six 1600)."""
    TRIPLES_ONLY = "triples_only"
    """No larger kinds: four 2s are three 2s and a dead die; six 2s are two triples."""


class TieRule(StrEnum):
    """What happens when the leaders are tied after the last round."""

    SHARED = "shared"
    """Tied leaders share the win."""
    EXTRA_ROUND = "extra_round"
    """Tied leaders each play one more turn until one is ahead."""


_BOOL_WORDS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
_OFF_WORDS = {"off", "none", "no", "false"}


@dataclass(frozen=True)
class Rules:
    """One complete, validated rule configuration (immutable, hashable).

    Combination fields hold points; 0 means "does not score" (the combination
    is not in this table). Every field is a user-settable option by its name.
    """

    name: str = "custom"
    """Preset this configuration started from (informational, not part of :meth:`key`)."""

    dice: int = 6
    """Dice in play: 6, or 5 for the "Five dice" variant."""
    single_one: int = 100
    single_five: int = 50
    three_ones: int = 300
    """Three 1s; other triples score 100 x face. Many tables play 1000."""
    kind_scoring: KindScoring = KindScoring.FIXED
    four_of_a_kind: int = 1000
    """Used when ``kind_scoring`` is ``fixed``; likewise the next two."""
    five_of_a_kind: int = 2000
    six_of_a_kind: int = 3000
    straight: int = 1500
    """1-2-3-4-5-6 in one roll."""
    three_pairs: int = 1500
    four_kind_with_pair: int = 1500
    two_triplets: int = 2500
    split_kinds: bool = True
    """A kind of 1s or 5s may also be counted as a smaller kind plus singles."""

    opening_minimum: int = 500
    """A player not yet on the board cannot bank a turn below this."""
    turn_minimum: int = 0
    """No turn may be banked below this (300 or 350 at some tables)."""
    farkle_penalty: int = 0
    """Points lost after ``farkle_penalty_streak`` farkles in a row (0: no penalty)."""
    farkle_penalty_streak: int = 3
    must_roll_after_hot_dice: bool = False
    """After hot dice the player must throw all dice again before banking."""
    must_keep_all_scoring: bool = False
    """Every scoring die must be set aside when possible."""
    single_die_throws: int = 1
    """Throws allowed to score a 1 or 5 when one die is left (the Elizabethan text: three)."""
    no_score_bonus: int = 0
    """Zilch: a throw of all dice that scores nothing is worth this and is thrown again."""
    piggyback: bool = False
    """The next player may roll the dice left by the last banker and build on the banked total."""
    target: int = 10_000
    """Score that triggers the last round."""
    exact_target: bool = False
    """The target must be hit exactly; a turn that overshoots goes to the lowest score."""
    tie: TieRule = TieRule.SHARED

    def __post_init__(self) -> None:
        """Validate every field; raise :class:`InvalidRulesError` naming the option."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("int",) and (isinstance(value, bool) or not isinstance(value, int)):
                raise InvalidRulesError(f"rule option {f.name!r} must be an integer, got {value!r}")
            if f.type == "bool" and not isinstance(value, bool):
                raise InvalidRulesError(f"rule option {f.name!r} must be true or false, got {value!r}")
        if self.dice not in (5, 6):
            raise InvalidRulesError(f"rule option 'dice' must be 5 or 6, got {self.dice}")
        for name in _POINT_FIELDS:
            value = getattr(self, name)
            if value < 0 or value % 50:
                raise InvalidRulesError(f"rule option {name!r} must be 0 or a positive multiple of 50, got {value}")
        if self.single_one <= 0 or self.single_five <= 0:
            raise InvalidRulesError("single 1s and 5s must score (single_one and single_five > 0)")
        if not 1 <= self.single_die_throws <= 5:
            raise InvalidRulesError(f"rule option 'single_die_throws' must be 1-5, got {self.single_die_throws}")
        if not 1 <= self.farkle_penalty_streak <= 10:
            raise InvalidRulesError(
                f"rule option 'farkle_penalty_streak' must be 1-10, got {self.farkle_penalty_streak}"
            )
        if not 50 <= self.target <= 1_000_000 or self.target % 50:
            raise InvalidRulesError(f"rule option 'target' must be a multiple of 50 in 50..1000000, got {self.target}")
        if not isinstance(self.kind_scoring, KindScoring) or not isinstance(self.tie, TieRule):
            raise InvalidRulesError("kind_scoring and tie must be KindScoring and TieRule values")
        # Rules key every cache of the engine (set-asides, solver tables): hash the fields once, not per lookup.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self))))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[no-any-return,attr-defined]

    # ----------------------------------------------------------------- derived values
    def triple(self, face: int) -> int:
        """Points of three of a kind of ``face``."""
        return self.three_ones if face == 1 else 100 * face

    def kind(self, face: int, count: int) -> int:
        """Points of ``count`` (3-6) of a kind of ``face``; 0 when that kind does not score."""
        base = self.triple(face)
        if count == 3:
            return base
        match self.kind_scoring:
            case KindScoring.FIXED:
                return (self.four_of_a_kind, self.five_of_a_kind, self.six_of_a_kind)[count - 4]
            case KindScoring.ADDING:
                return base * (count - 2)
            case KindScoring.DOUBLING:
                return base * (1 << (count - 3))
            case KindScoring.TRIPLES_ONLY:
                return 0

    def bank_minimum(self, on_board: bool) -> int:
        """Smallest turn total that may be banked, for a player on the board or not."""
        return max(self.turn_minimum, 0 if on_board else self.opening_minimum)

    def key(self) -> str:
        """A stable digest of everything that changes play (not the name): the solver's cache key."""
        data = {k: v for k, v in self.to_dict().items() if k != "name"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    # ----------------------------------------------------------------- conversions
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (enums as their string values)."""
        return {f.name: (str(v) if isinstance(v := getattr(self, f.name), StrEnum) else v) for f in fields(self)}

    def with_options(self, options: Mapping[str, Any]) -> Rules:
        """A copy with some options changed; values may be typed or strings from a CLI.

        Raises:
            InvalidRulesError: an unknown option (the message lists the valid ones) or a bad value.
        """
        changes = {key: parse_option_value(key, value) for key, value in options.items()}
        return dataclasses.replace(self, **changes)

    def with_settings(self, settings: list[str] | tuple[str, ...]) -> Rules:
        """Apply ``key=value`` strings, as given to ``--set`` on the command line."""
        options: dict[str, str] = {}
        for item in settings:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise InvalidRulesError(f"--set expects key=value, got {item!r}")
            options[key.strip()] = value.strip()
        return self.with_options(options)

    @classmethod
    def from_toml(cls, path: Path) -> Rules:
        """Load a rules file: an optional ``preset = "name"`` and any option keys.

        Example::

            preset = "house"
            three_ones = 1000
            farkle_penalty = 500
        """
        from scoring.presets import get_rules  # presets import this module

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InvalidRulesError(f"cannot read rules file {path}: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise InvalidRulesError(f"rules file {path} is not valid TOML: {exc}") from exc
        preset = data.pop("preset", "boxed")
        if not isinstance(preset, str):
            raise InvalidRulesError(f"rules file {path}: 'preset' must be a preset name")
        return get_rules(preset).with_options(data)


_POINT_FIELDS = (
    "single_one", "single_five", "three_ones", "four_of_a_kind", "five_of_a_kind", "six_of_a_kind",
    "straight", "three_pairs", "four_kind_with_pair", "two_triplets", "opening_minimum", "turn_minimum",
    "farkle_penalty", "no_score_bonus",
)  # fmt: skip
_FIELD_TYPES: dict[str, str] = {f.name: str(f.type) for f in fields(Rules)}


def option_names() -> tuple[str, ...]:
    """Every settable option, in declaration order."""
    return tuple(name for name in _FIELD_TYPES if name != "name")


def parse_option_value(key: str, value: Any) -> Any:
    """Convert one option value (typed, or a string from the CLI/TOML) to its field's type.

    Raises:
        InvalidRulesError: unknown key (listing the valid keys) or a value of the wrong kind.
    """
    if key not in _FIELD_TYPES or key == "name":
        raise InvalidRulesError(f"unknown rule option {key!r}; valid options: {', '.join(option_names())}")
    kind = _FIELD_TYPES[key]
    text = str(value).strip().lower()
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            return _BOOL_WORDS[text]
        if kind == "int":
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if key in _POINT_FIELDS and text in _OFF_WORDS:
                return 0
            return int(text.replace("_", "").replace(",", ""))
        if kind == "KindScoring":
            return KindScoring(text)
        if kind == "TieRule":
            return TieRule(text)
    except (KeyError, ValueError):
        pass
    else:
        raise InvalidRulesError(f"rule option {key!r} has an unsupported type")  # pragma: no cover
    choices = {
        "bool": "true or false",
        "int": "an integer" + (" (or 'off')" if key in _POINT_FIELDS else ""),
        "KindScoring": " | ".join(k.value for k in KindScoring),
        "TieRule": " | ".join(t.value for t in TieRule),
    }[kind]
    raise InvalidRulesError(f"rule option {key!r} must be {choices}, got {value!r}")
