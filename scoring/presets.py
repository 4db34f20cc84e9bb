"""Named rule sets from real tables, each citing the rule text it comes from.

The texts live in ``../shared/rules/`` and are the spec. Every preset records
the lines it implements (:attr:`Preset.citations`), so a reviewer can check a
number against its source without guessing. Aliases resolve like
python-chess's variants: ``get_rules("bar")`` is the ``house`` preset.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from farklecam.errors import InvalidRulesError
from farklecam.scoring.rules import KindScoring, Rules

__all__ = ["PRESETS", "Citation", "Preset", "get_preset", "get_rules", "preset_names", "rules_from_file"]

BOXED_TEXT = "boxed-set-rules-and-house-variants.txt"
HOUSE_TEXT = "mayor-house-rules-progressive-and-tournament.txt"
ELIZABETHAN_TEXT = "elizabethan-directorie.txt"


@dataclass(frozen=True, slots=True)
class Citation:
    """A quoted line of a rule text (a file in ``../shared/rules/``) or a published source."""

    source: str
    quote: str


@dataclass(frozen=True, slots=True)
class Preset:
    """A named rule set: its rules, a one-line summary and where each rule comes from."""

    name: str
    rules: Rules
    summary: str
    citations: tuple[Citation, ...]
    aliases: tuple[str, ...] = ()


_BOXED = Preset(
    name="boxed",
    rules=Rules(name="boxed"),
    summary="A boxed set's rule sheet: three 1s 300, 4/5/6 of a kind 1000/2000/3000, 500 to get on the board.",
    citations=(
        Citation(BOXED_TEXT, "A 1 is worth 100 and a 5 is worth 50."),
        Citation(BOXED_TEXT, "Three 1s score 300 in the first table, the same as three single 1s."),
        Citation(BOXED_TEXT, "Four 1s are worth 1,000, the same as four 6s."),
        Citation(
            BOXED_TEXT,
            "A straight, three pairs, four of a kind with a pair, two triplets and six of a kind each use all 6 dice",
        ),
        Citation("README.md", "straight, three pairs, four of a kind with a pair 1500; two triplets 2500"),
        Citation(BOXED_TEXT, "Your first score of the game must be at least 500 points in one turn."),
        Citation(BOXED_TEXT, "When someone reaches 10,000 or more, every other player gets one last turn to beat it."),
        Citation(BOXED_TEXT, "If a die falls off the table, roll that die again."),
    ),
    aliases=("default", "standard", "box"),
)

_HOUSE = Preset(
    name="house",
    rules=Rules(name="house", three_ones=1000, four_kind_with_pair=0),
    summary="The bar's house rules: three 1s 1000, 4/5/6 of a kind 1000/2000/3000, "
    "straight and three pairs 1500, two triplets 2500, 500 to get on the board.",
    citations=(
        Citation(HOUSE_TEXT, "Each 1\t100 / Each 5\t50 / Three 1s\t1000 / Three 2s\t200 / Three 6s\t600"),
        Citation(HOUSE_TEXT, "Two\t200\t\t\t1000\t2000\t3000 (4, 5 and 6 of a kind)"),
        Citation(HOUSE_TEXT, "Straight 1-6 = 1500 / Three Pair = 1500 / Two Triplets = 2500"),
        Citation(HOUSE_TEXT, "A player must get to 500 in order to “get on the board”"),
        Citation(HOUSE_TEXT, "Once a player has achieved a winning point total, each other player has one last turn"),
    ),
    aliases=("mayor", "bar"),
)

_PROGRESSIVE = Preset(
    name="progressive",
    rules=Rules(name="progressive", three_ones=1000, four_kind_with_pair=0, piggyback=True),
    summary="The bar's progressive variant: house rules, and the next player may roll the passed dice "
    "and build on the last banked score.",
    citations=(
        *_HOUSE.citations,
        Citation(HOUSE_TEXT, "players are allowed to build on the score of the player’s banked score before them."),
        Citation(
            HOUSE_TEXT,
            "they can roll the two dice that were passed to them. If they roll a “Scorer”, "
            "they then add that on to the 1600 that was passed to them.",
        ),
    ),
    aliases=("piggyback", "high-stakes"),
)

_ELIZABETHAN = Preset(
    name="elizabethan",
    rules=Rules(
        name="elizabethan",
        three_ones=1000,
        kind_scoring=KindScoring.DOUBLING,
        three_pairs=500,
        four_kind_with_pair=0,
        two_triplets=0,
        opening_minimum=1000,
        turn_minimum=350,
        single_die_throws=3,
    ),
    summary="The Elizabethan Directorie: three 1s 1000, larger kinds double, three pairs 500, straight 1500, "
    "1000 to get on the board, 350 a turn after, three throws with one die.",
    citations=(
        Citation(ELIZABETHAN_TEXT, "one spotte 100 five spotts 50 three of one spotte 1000 three of two spotts 200"),
        Citation(ELIZABETHAN_TEXT, "Four of the same, doth double three. Five of the same, doth double four."),
        Citation(ELIZABETHAN_TEXT, "Three Paires in a throw 500 One of eache face 1500"),
        Citation(ELIZABETHAN_TEXT, "a Player with noe Points cannot stop throwing until he reacheth at leaste 1 .000"),
        Citation(
            ELIZABETHAN_TEXT,
            "a Player with Points cannot stop throwing in a turn until he reacheth at leaste 350 Points",
        ),
        Citation(ELIZABETHAN_TEXT, "when only one die remaineth without Points, a Pleyer doth have three throws"),
        Citation(ELIZABETHAN_TEXT, "a die which doth leane with no side facing up must be throwen oer."),
    ),
    aliases=("directorie", "renaissance"),
)

_BUSCHE_NELLER = Preset(
    name="busche-neller",
    rules=Rules(
        name="busche-neller",
        three_ones=1000,
        kind_scoring=KindScoring.TRIPLES_ONLY,
        straight=0,
        three_pairs=0,
        four_kind_with_pair=0,
        two_triplets=0,
        opening_minimum=0,
    ),
    summary="Singles and triples only, as analysed by Busche & Neller, 'Optimal Play of the Farkle Dice Game' "
    "(ACG 2017).",
    citations=(
        Citation("Busche & Neller, ACG 2017", "single 1 = 100, single 5 = 50, three 1s = 1000, three n = 100n"),
    ),
    aliases=("neller", "singles-triples"),
)

_ZILCH = Preset(
    name="zilch",
    rules=Rules(
        name="zilch",
        three_ones=1000,
        kind_scoring=KindScoring.DOUBLING,
        three_pairs=1500,
        four_kind_with_pair=1500,
        two_triplets=0,
        opening_minimum=0,
        turn_minimum=300,
        farkle_penalty=500,
        farkle_penalty_streak=3,
        no_score_bonus=500,
    ),
    summary="playr.co.uk Zilch as analysed by Busche (2010): doubling kinds, straight and three pairs 1500, "
    "a scoreless six-dice throw worth 500, 300 to bank, -500 for a third zilch in a row.",
    citations=(
        Citation(
            "Busche 2010, Zilch",
            "n of a kind doubles; straight 1500; three pairs 1500 (four of a kind "
            "plus a pair counts); no score with six dice 500; bank at least 300; three zilches -500",
        ),
    ),
    aliases=("playr",),
)

#: Every preset by name, in the order the CLI lists them.
PRESETS: dict[str, Preset] = {p.name: p for p in (_BOXED, _HOUSE, _PROGRESSIVE, _ELIZABETHAN, _BUSCHE_NELLER, _ZILCH)}
_ALIASES = {alias: p.name for p in PRESETS.values() for alias in (p.name, *p.aliases)}


def preset_names() -> tuple[str, ...]:
    """Canonical preset names."""
    return tuple(PRESETS)


def get_preset(name: str) -> Preset:
    """Look a preset up by name or alias (case-insensitive).

    Raises:
        InvalidRulesError: unknown name; the message lists the presets.
    """
    key = name.strip().lower().replace("_", "-")
    if key not in _ALIASES:
        raise InvalidRulesError(f"unknown rule preset {name!r}; choose one of: {', '.join(PRESETS)}")
    return PRESETS[_ALIASES[key]]


def get_rules(name: str = "boxed") -> Rules:
    """The :class:`Rules` of a preset."""
    return get_preset(name).rules


def rules_from_file(path: Path) -> Rules:
    """Load a rules file: an optional ``preset = "name"`` (default boxed) and any option keys.

    Example::

        preset = "house"
        three_ones = 1000
        farkle_penalty = 500

    Raises:
        InvalidRulesError: an unreadable file, bad TOML, an unknown preset or option, or a value out of range.
    """
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
