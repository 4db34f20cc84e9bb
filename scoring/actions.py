"""Game actions: small frozen values that round-trip through text and JSON.

Every action a player (or the camera) can take in a game is one of these
classes. Each is a frozen, hashable dataclass whose ``repr`` is evaluable, whose
``str`` is a short text form that :func:`parse_action` reads back, and whose
``to_dict()`` is a JSON form that :func:`action_from_dict` reads back::

    >>> parse_action("roll 5,5,2,3,4,6")
    Roll(faces=(2, 3, 4, 5, 5, 6))
    >>> str(Keep((5, 5))), action_from_dict({"type": "bank"})
    ('keep 5,5', Bank())

Dice are kept sorted: the order the dice landed in does not matter to the rules,
so two reads of the same throw are the same action.

Text forms: ``rolloff "NAME" FACE`` (the quotes are optional for a name without
spaces), ``roll F,F,...``, ``passed-roll F,...`` (piggyback: throw the dice the
last banker passed), ``keep F,...``, ``bank``, ``farkle``, ``undo``, ``rules PRESET`` (the
organiser switches the game to a preset's rules from this turn on, as a tournament's final may).

Whether an action is *legal* is the game's business (:mod:`farklecam.scoring.game`); this
module only checks that an action is well formed. A malformed action raises
:class:`InvalidActionError` (or :class:`~farklecam.errors.InvalidDiceError` for a
face outside 1-6), never :class:`~farklecam.errors.IllegalActionError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from farklecam.errors import InvalidActionError, InvalidDiceError

__all__ = [
    "ACTION_TYPES",
    "Action",
    "Bank",
    "ChangeRules",
    "Farkle",
    "InvalidActionError",
    "Keep",
    "PassedRoll",
    "Roll",
    "RollOff",
    "Undo",
    "action_from_dict",
    "parse_action",
]

_MAX_DICE = 6


def _faces(values: Iterable[int], what: str) -> tuple[int, ...]:
    if isinstance(values, str | bytes):
        raise InvalidActionError(f"{what}: faces must be a sequence of integers, got {values!r}")
    faces = tuple(values)
    bad = [f for f in faces if isinstance(f, bool) or not isinstance(f, int) or not 1 <= f <= 6]
    if bad:
        raise InvalidDiceError(f"{what}: dice faces must be 1-6, got {bad[0]!r}")
    if not faces:
        raise InvalidDiceError(f"{what} needs at least one die")
    if len(faces) > _MAX_DICE:
        raise InvalidDiceError(f"{what} has at most {_MAX_DICE} dice, got {len(faces)}")
    return tuple(sorted(faces))


@dataclass(frozen=True, slots=True)
class RollOff:
    """One player's single-die throw in the roll-off that decides who goes first."""

    player: str
    face: int
    kind: ClassVar[str] = "rolloff"

    def __post_init__(self) -> None:
        if not isinstance(self.player, str) or not self.player.strip():
            raise InvalidActionError(f"rolloff needs a player name, got {self.player!r}")
        _faces((self.face,), "rolloff")

    def __str__(self) -> str:
        return f"rolloff {json.dumps(self.player, ensure_ascii=False)} {self.face}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"type": "rolloff", "player": ..., "face": ...}``."""
        return {"type": self.kind, "player": self.player, "face": self.face}


@dataclass(frozen=True, slots=True)
class _DiceAction:
    faces: tuple[int, ...]
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "faces", _faces(self.faces, self.kind))

    def __str__(self) -> str:
        return f"{self.kind} {','.join(map(str, self.faces))}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"type": ..., "faces": [...]}``."""
        return {"type": self.kind, "faces": list(self.faces)}


@dataclass(frozen=True, slots=True)
class Roll(_DiceAction):
    """The faces of a throw of exactly the dice the player has to throw now (all dice at a turn's start)."""

    kind: ClassVar[str] = "roll"


@dataclass(frozen=True, slots=True)
class PassedRoll(_DiceAction):
    """Piggyback: the faces of a throw of the dice the last banker passed, building on their banked total."""

    kind: ClassVar[str] = "passed-roll"


@dataclass(frozen=True, slots=True)
class Keep(_DiceAction):
    """Set aside these dice of the current roll (every one must score in this roll)."""

    kind: ClassVar[str] = "keep"


@dataclass(frozen=True, slots=True)
class _Bare:
    kind: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"type": ...}``."""
        return {"type": self.kind}


@dataclass(frozen=True, slots=True)
class Bank(_Bare):
    """Stop and add the turn total to the player's score."""

    kind: ClassVar[str] = "bank"


@dataclass(frozen=True, slots=True)
class Farkle(_Bare):
    """Declare that the current roll scores nothing (accepted only when that is true)."""

    kind: ClassVar[str] = "farkle"


@dataclass(frozen=True, slots=True)
class Undo(_Bare):
    """Take back the last action still in force (the undo itself stays in the event log)."""

    kind: ClassVar[str] = "undo"


_PRESET_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


@dataclass(frozen=True, slots=True)
class ChangeRules:
    """The organiser switches the game to preset ``preset``'s rules from the start of this turn on.

    The tournament's final may turn progressive "at any time"; being an event in the
    log, the switch replays, undoes and persists like any throw. Which options the
    game keeps is :func:`farklecam.scoring.play.changed_rules`' business.
    """

    preset: str
    kind: ClassVar[str] = "rules"

    def __post_init__(self) -> None:
        if not isinstance(self.preset, str) or not _PRESET_NAME.match(self.preset):
            raise InvalidActionError(f"rules needs a preset name like 'rules progressive', got {self.preset!r}")

    def __str__(self) -> str:
        return f"{self.kind} {self.preset}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"type": "rules", "preset": ...}``."""
        return {"type": self.kind, "preset": self.preset}


Action: TypeAlias = RollOff | Roll | PassedRoll | Keep | Bank | Farkle | Undo | ChangeRules
#: Every action class, for ``isinstance`` checks.
ACTION_TYPES: tuple[type[Action], ...] = (RollOff, Roll, PassedRoll, Keep, Bank, Farkle, Undo, ChangeRules)
_DICE_TYPES: dict[str, type[Roll | PassedRoll | Keep]] = {c.kind: c for c in (Roll, PassedRoll, Keep)}
_BARE_TYPES: dict[str, type[Bank | Farkle | Undo]] = {c.kind: c for c in (Bank, Farkle, Undo)}
_FORMS = 'rolloff "NAME" FACE | roll F,F,... | passed-roll F,... | keep F,... | bank | farkle | undo | rules PRESET'
_FACE_TOKEN = re.compile(r"[\s,]+")


def parse_action(text: str) -> Action:
    """Read an action from its text form (``str(action)``); verbs are case-insensitive.

    Faces may be separated by commas and/or spaces, one digit per die.

    Raises:
        InvalidActionError: an unknown verb or malformed arguments (the message lists the forms).
        InvalidDiceError: a face outside 1-6 or too many dice.
    """
    if not isinstance(text, str):
        raise InvalidActionError(f"an action must be text, got {text!r}")
    verb, _, rest = text.strip().partition(" ")
    verb, rest = verb.lower(), rest.strip()
    if verb in _BARE_TYPES:
        if rest:
            raise InvalidActionError(f"{verb!r} takes no arguments, got {text!r}")
        return _BARE_TYPES[verb]()
    if verb in _DICE_TYPES:
        tokens = [t for t in _FACE_TOKEN.split(rest) if t]
        if not tokens or any(not (len(t) == 1 and "0" <= t <= "9") for t in tokens):  # ASCII: "¹" is a digit too
            raise InvalidActionError(f"{verb} expects faces 1-6 separated by commas, like '{verb} 1,5', got {text!r}")
        return _DICE_TYPES[verb](tuple(int(t) for t in tokens))
    if verb == RollOff.kind:
        return _parse_roll_off(rest, text)
    if verb == ChangeRules.kind:
        return ChangeRules(rest.lower())
    raise InvalidActionError(f"unknown action {text!r}; expected one of: {_FORMS}")


def _parse_roll_off(rest: str, text: str) -> RollOff:
    name: object
    if rest.startswith('"'):
        try:
            name, end = json.JSONDecoder().raw_decode(rest)
        except json.JSONDecodeError as exc:
            raise InvalidActionError(f"rolloff: cannot read the quoted player name in {text!r}") from exc
        face_text = rest[end:].strip()
    else:
        name, _, face_text = rest.rpartition(" ")
        name = name.strip()
    if not isinstance(name, str) or not name or face_text not in {"1", "2", "3", "4", "5", "6"}:
        raise InvalidActionError(f"rolloff expects a player and one face 1-6, like 'rolloff \"Ann\" 5', got {text!r}")
    return RollOff(name, int(face_text))


def action_from_dict(data: Mapping[str, Any]) -> Action:
    """Read an action from its JSON form (``action.to_dict()``).

    Raises:
        InvalidActionError: not a mapping, an unknown ``type``, or missing/extra keys.
        InvalidDiceError: a face outside 1-6 or too many dice.
    """
    if not isinstance(data, Mapping):
        raise InvalidActionError(f"an action must be a JSON object, got {data!r}")
    kind = data.get("type")
    keys = set(data) - {"type"}
    if kind in _BARE_TYPES and not keys:
        return _BARE_TYPES[kind]()
    if kind in _DICE_TYPES and keys == {"faces"} and isinstance(data["faces"], list):
        return _DICE_TYPES[kind](tuple(data["faces"]))
    if kind == RollOff.kind and keys == {"player", "face"}:
        return RollOff(data["player"], data["face"])
    if kind == ChangeRules.kind and keys == {"preset"}:
        return ChangeRules(data["preset"])
    raise InvalidActionError(f"not an action: {dict(data)!r}; expected one of: {_FORMS}")
