"""The rule configuration: one typed, immutable value that every other part reads.

Rules are data, not code paths. Every scoring table, minimum and house variant
that the rule texts in ``../shared/rules/`` describe is a field of :class:`Rules`;
presets (:mod:`farklecam.scoring.presets`) are just named values of it, and a user's
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
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from farklecam.errors import InvalidRulesError

__all__ = ["KindScoring", "OptionSpec", "Rules", "TieRule", "option_names", "option_spec", "parse_option_value"]


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


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """What one rule option does, where it comes from, and the values it may take.

    Kept in the option's field (``field(metadata=...)``) so the definition, its
    bounds and the words ``farklecam rules`` and ``GET /api/rules`` show are one
    source. The bounds are what the rule texts use with room to spare; they also
    keep the turn solver's tables small: its size grows with the largest score
    and minimum, and unbounded values made one solve take a minute and 69 MB.

    Attributes:
        description: what the option does, in a player's words.
        source: which rule text (``../shared/rules/``) and which of its variants the option plays.
        low: smallest allowed integer value (integer options only).
        high: largest allowed integer value (integer options only).
        step: integer values must be multiples of this (points: 50).
    """

    description: str
    source: str
    low: int | None = None
    high: int | None = None
    step: int = 1

    def admits(self, value: int) -> bool:
        """Whether an integer option may hold ``value`` (always, for an option without bounds)."""
        if self.low is None or self.high is None:
            return True
        return self.low <= value <= self.high and value % self.step == 0

    @property
    def allowed(self) -> str:
        """The allowed range in words (``"a multiple of 50 in 0..2000"``), or "" for a non-integer option."""
        if self.low is None or self.high is None:
            return ""
        span = f"{self.low}..{self.high}"
        return f"a multiple of {self.step} in {span}" if self.step > 1 else f"an integer in {span}"


BOXED = "boxed-set-rules-and-house-variants.txt"
HOUSE = "mayor-house-rules-progressive-and-tournament.txt"
ELIZ = "elizabethan-directorie.txt"


def _option(default: Any, description: str, source: str, low: int | None = None, high: int | None = None,
            step: int = 1) -> Any:  # fmt: skip
    """A :class:`Rules` field with its :class:`OptionSpec` (typed ``Any`` so each field keeps its own type)."""
    return field(default=default, metadata={"option": OptionSpec(description, source, low, high, step)})


def _points(default: int, description: str, source: str, high: int, low: int = 0) -> Any:
    return _option(default, description, source, low, high, 50)


@dataclass(frozen=True)
class Rules:
    """One complete, validated rule configuration (immutable, hashable).

    Combination fields hold points; 0 means "does not score" (the combination
    is not in this table). Every field but ``name`` is a user-settable option by
    its name, with its :class:`OptionSpec` (description, source, bounds) in the field.
    """

    name: str = "custom"
    """Preset this configuration started from (informational, not part of :meth:`key`)."""

    dice: int = _option(6, "Dice in play.", f"{BOXED}: 6; its 'Five dice' variant plays 5", 5, 6)
    single_one: int = _points(100, "A single 1.", f"{BOXED}: 100 (every text)", 300, low=50)
    single_five: int = _points(50, "A single 5.", f"{BOXED}: 50 (every text)", 300, low=50)
    three_ones: int = _points(
        300, "Three 1s (other triples score 100 x face).", f"{BOXED}: 300; its variant 'Three 1s score 1,000'", 2000
    )
    kind_scoring: KindScoring = _option(  # noqa: RUF009 - _option returns a field() with an immutable default
        KindScoring.FIXED,
        "How four, five and six of a kind score: fixed values, adding or doubling the triple, or triples only.",
        f"{BOXED}: fixed; its variant 'Four or more of a kind by adding or doubling'; {ELIZ}: doubling",
    )
    four_of_a_kind: int = _points(1000, "Four of a kind (when kind_scoring is fixed).", f"{BOXED}: 1000", 10_000)
    five_of_a_kind: int = _points(2000, "Five of a kind (when kind_scoring is fixed).", f"{BOXED}: 2000", 10_000)
    six_of_a_kind: int = _points(3000, "Six of a kind (when kind_scoring is fixed).", f"{BOXED}: 3000", 10_000)
    straight: int = _points(
        1500, "1-2-3-4-5-6 in one roll.", f"{BOXED}: 1500; its variant 'Other scores for the big combinations'", 5000
    )
    three_pairs: int = _points(1500, "Three pairs of distinct faces.", f"{BOXED}: 1500; {ELIZ}: 500", 5000)
    four_kind_with_pair: int = _points(
        1500, "Four of a kind with a pair.", f"{BOXED}: 1500; {HOUSE}: not scored (0)", 5000
    )
    two_triplets: int = _points(2500, "Two triplets of distinct faces.", f"{BOXED}: 2500", 5000)
    split_kinds: bool = _option(
        True,
        "A kind of 1s or 5s may also be counted as a smaller kind plus singles.",
        f"{BOXED}: 'Score each roll by itself' (farklecam's reading: count the dice the best way)",
    )

    opening_minimum: int = _points(
        500, "A player not yet on the board cannot bank a turn below this.",
        f"{BOXED}: 500; its variant 'No opening score, or a higher one'; {ELIZ}: 1000", 5000,
    )  # fmt: skip
    turn_minimum: int = _points(
        0, "No turn may be banked below this.", f"{BOXED}: variant 'A minimum for every turn'; {ELIZ}: 350", 5000
    )
    farkle_penalty: int = _points(
        0, "Points lost after farkle_penalty_streak farkles in a row (0: no penalty).",
        f"{BOXED}: variant 'A penalty for 3 farkles in a row' (500 or 1000)", 2000,
    )  # fmt: skip
    farkle_penalty_streak: int = _option(
        3, "Farkles in a row that cost farkle_penalty.", f"{BOXED}: variant 'A penalty for 3 farkles in a row'", 1, 5
    )
    must_roll_after_hot_dice: bool = _option(
        False, "After hot dice the player must throw all dice again before banking.",
        f"{BOXED}: variant 'You must roll after hot dice'",
    )  # fmt: skip
    must_keep_all_scoring: bool = _option(
        False, "Every scoring die must be set aside when possible.", f"{BOXED}: variant 'Set aside every scoring die'"
    )
    single_die_throws: int = _option(
        1, "Throws allowed to score a 1 or 5 when one die is left.", f"{BOXED}: 1; {ELIZ}: three", 1, 5
    )
    no_score_bonus: int = _points(
        0, "Zilch: a throw of all dice that scores nothing is worth this and is thrown again.",
        "Zilch as analysed by Busche (2010), not in the three texts", 5000,
    )  # fmt: skip
    piggyback: bool = _option(
        False, "The next player may roll the dice left by the last banker and build on the banked total.",
        f"{BOXED}: variant 'Piggybacking'; {HOUSE}: Progressive",
    )  # fmt: skip
    target: int = _points(10_000, "Score that triggers the last round.", f"{BOXED}: 10,000", 1_000_000, low=50)
    exact_target: bool = _option(
        False, "The target must be hit exactly; a turn that overshoots goes to the lowest score.",
        f"{BOXED}: variant 'Exactly 10,000'",
    )  # fmt: skip
    last_round: bool = _option(
        True, "Reaching the target gives every other player one last turn (off: the first to bank it wins at once).",
        f"{BOXED}: 'every other player gets one last turn to beat it'",
    )  # fmt: skip
    tie: TieRule = _option(  # noqa: RUF009 - as kind_scoring
        TieRule.SHARED,
        "Leaders tied after the last round: shared win, or the tied leaders play again.",
        f"{BOXED}: silent (farklecam's choice: shared)",
    )

    def __post_init__(self) -> None:
        """Validate every option against its :class:`OptionSpec`; raise :class:`InvalidRulesError` naming it."""
        for f in fields(self):
            value, spec = getattr(self, f.name), f.metadata.get("option")
            if f.type == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise InvalidRulesError(f"rule option {f.name!r} must be an integer, got {value!r}")
            if f.type == "bool" and not isinstance(value, bool):
                raise InvalidRulesError(f"rule option {f.name!r} must be true or false, got {value!r}")
            if f.type == "int" and isinstance(spec, OptionSpec) and not spec.admits(value):
                raise InvalidRulesError(f"rule option {f.name!r} must be {spec.allowed}, got {value}")
        if not isinstance(self.kind_scoring, KindScoring) or not isinstance(self.tie, TieRule):
            raise InvalidRulesError("kind_scoring and tie must be KindScoring and TieRule values")
        # Rules key every cache of the engine (set-asides, solver tables): hash the fields once, not per lookup.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in fields(self))))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[no-any-return,attr-defined]  # set in __post_init__ on a frozen slotless value

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


_SPECS: dict[str, OptionSpec] = {f.name: f.metadata["option"] for f in fields(Rules) if "option" in f.metadata}
#: Options that hold points (0 may be written "off").
_POINT_FIELDS = tuple(name for name, spec in _SPECS.items() if spec.step == 50 and spec.low == 0)
_FIELD_TYPES: dict[str, str] = {f.name: str(f.type) for f in fields(Rules)}


def option_names() -> tuple[str, ...]:
    """Every settable option, in declaration order."""
    return tuple(name for name in _FIELD_TYPES if name != "name")


def option_spec(name: str) -> OptionSpec | None:
    """What option ``name`` does, where it comes from and its bounds (None for an option without a spec)."""
    return _SPECS.get(name)


def parse_option_value(key: str, value: Any) -> Any:
    """Convert one option value (typed, or a string from the CLI/TOML) to its field's type.

    Raises:
        InvalidRulesError: unknown key (listing the valid keys) or a value of the wrong kind.
    """
    if key not in _FIELD_TYPES or key == "name":
        raise InvalidRulesError(f"unknown rule option {key!r}; valid options: {', '.join(option_names())}")
    kind = _FIELD_TYPES[key]
    if (isinstance(value, bool) and kind == "bool") or (type(value) is int and kind == "int"):
        return value  # typed already (and a huge int is never written out as text: that alone can fail)
    text = str(value).strip().lower()
    try:
        if kind == "bool":
            return _BOOL_WORDS[text]
        if kind == "int":
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
        "int": (spec.allowed if (spec := _SPECS.get(key)) else "an integer")
        + (" (or 'off')" if key in _POINT_FIELDS else ""),
        "KindScoring": " | ".join(k.value for k in KindScoring),
        "TieRule": " | ".join(t.value for t in TieRule),
    }[kind]
    raise InvalidRulesError(f"rule option {key!r} must be {choices}, got {str(value)[:40]!r}")
