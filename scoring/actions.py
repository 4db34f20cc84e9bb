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
organiser switches the game to a preset's rules from this turn on, as a tournament's final may), and
``correct ...`` (a player corrects one die of the throw the camera just read; see :class:`Correct`).

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
    "CORRECTION_FIXES",
    "Action",
    "Bank",
    "ChangeRules",
    "Correct",
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


#: What a player may say about one die of a throw the camera read (:attr:`Correct.fix`): it shows a face, it
#: leans (cocked), it lies off the tray, it is not a die at all; or ``add``: a die the camera missed.
CORRECTION_FIXES: tuple[str, ...] = ("face", "cocked", "off-tray", "not-a-die", "add")
_FIXES_WITH_FACE = frozenset({"face", "add"})
_FIXES_WITHOUT_ROLL = frozenset({"cocked", "off-tray"})  # the die is thrown again: the throw is no roll
#: The highest die number a correction may name: a tray holds six dice, a reading a few false ones more.
_MAX_DIE_NUMBER = 99


@dataclass(frozen=True, slots=True)
class Correct:
    """A player corrects one die of the throw the camera just read; the throw counts as corrected.

    The camera only proposes throws, and a misread die must cost one click, not the turn. A
    correction replaces the faces of the latest throw in force (a roll, a throw of passed dice or a
    roll-off die) as long as nothing but corrections followed it: ``roll`` holds the throw's faces
    as corrected, and the game re-scores it (a farkle the misread caused is taken back). Without
    ``roll`` the corrected throw is no throw (a die leans or lies off the tray, or the camera saw
    too many or too few dice): the throw is taken back and the table waits for it again.
    :class:`~farklecam.scoring.game.Game` applies it, as it applies an undo, from the state before
    that throw, so a replayed log gives the same game.

    ``die`` and ``fix`` say what the player said, for the log: the die's number as the page and the
    live window tag it (``#3``), counted from 1 in the camera's reading (None for ``add``).

    Text forms: ``correct 3 face 5 roll 1,2,3,4,5,5``, ``correct 2 cocked``, ``correct 4 off-tray``,
    ``correct 6 not-a-die roll 1,2,3,4,5,5``, ``correct add 4 roll 1,1,2,3,4,5``.
    """

    die: int | None
    fix: str
    face: int | None = None
    roll: tuple[int, ...] | None = None
    kind: ClassVar[str] = "correct"

    def __post_init__(self) -> None:
        if self.fix not in CORRECTION_FIXES:
            raise InvalidActionError(f"correct: the fix must be one of {', '.join(CORRECTION_FIXES)}, got {self.fix!r}")
        die = self.die
        if self.fix == "add":
            if die is not None:
                raise InvalidActionError("correct add names no die: it adds one the camera missed")
        elif isinstance(die, bool) or not isinstance(die, int) or not 1 <= die <= _MAX_DIE_NUMBER:
            raise InvalidActionError(f"correct {self.fix} needs the die's number (#1, #2, ...), got {die!r}")
        if self.fix in _FIXES_WITH_FACE:
            if self.face is None:
                raise InvalidActionError(f"correct {self.fix} needs the face (1-6) the die shows")
            _faces((self.face,), f"correct {self.fix}")
        elif self.face is not None:
            raise InvalidActionError(f"correct {self.fix} takes no face, got {self.face!r}")
        if self.roll is not None:
            if self.fix in _FIXES_WITHOUT_ROLL:
                raise InvalidActionError(f"correct {self.fix} takes no roll: that die is thrown again")
            object.__setattr__(self, "roll", _faces(self.roll, "correct"))

    def __str__(self) -> str:
        said = f"add {self.face}" if self.fix == "add" else f"{self.die} {self.fix}"
        if self.fix == "face":
            said += f" {self.face}"
        roll = "" if self.roll is None else f" roll {','.join(map(str, self.roll))}"
        return f"{self.kind} {said}{roll}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"type": "correct", "die": 3, "fix": "face", "face": 5, "roll": [1, 2, 3, 4, 5, 5]}``."""
        roll = None if self.roll is None else list(self.roll)
        return {"type": self.kind, "die": self.die, "fix": self.fix, "face": self.face, "roll": roll}


Action: TypeAlias = RollOff | Roll | PassedRoll | Keep | Bank | Farkle | Undo | ChangeRules | Correct
#: Every action class, for ``isinstance`` checks.
ACTION_TYPES: tuple[type[Action], ...] = (RollOff, Roll, PassedRoll, Keep, Bank, Farkle, Undo, ChangeRules, Correct)
_DICE_TYPES: dict[str, type[Roll | PassedRoll | Keep]] = {c.kind: c for c in (Roll, PassedRoll, Keep)}
_BARE_TYPES: dict[str, type[Bank | Farkle | Undo]] = {c.kind: c for c in (Bank, Farkle, Undo)}
_FORMS = (
    'rolloff "NAME" FACE | roll F,F,... | passed-roll F,... | keep F,... | bank | farkle | undo | rules PRESET | '
    "correct N face F [roll F,...] | correct N cocked | correct N off-tray | correct N not-a-die [roll F,...] | "
    "correct add F [roll F,...]"
)
_FACE_TOKEN = re.compile(r"[\s,]+")
_CORRECT_FORMS = (
    "correct N face F [roll F,...], correct N cocked, correct N off-tray, correct N not-a-die [roll F,...] or "
    "correct add F [roll F,...], N being the die's number"
)
_CORRECT_TEXT = re.compile(
    r"^(?:(?P<add>add)\s+(?P<added>[1-6])|#?(?P<die>[0-9]{1,2})\s+(?:(?P<face>face)\s+(?P<told>[1-6])|"
    r"(?P<fix>cocked|off-tray|not-a-die)))(?:\s+roll\s+(?P<roll>[1-6](?:[\s,]+[1-6])*))?$",
    re.IGNORECASE | re.ASCII,
)


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
    if verb == Correct.kind:
        return _parse_correct(rest, text)
    raise InvalidActionError(f"unknown action {text!r}; expected one of: {_FORMS}")


def _parse_correct(rest: str, text: str) -> Correct:
    """``correct 3 face 5 roll 1,2,3,4,5,5`` and its kin (the die's number may be written ``#3``)."""
    match = _CORRECT_TEXT.match(rest)
    if match is None:
        raise InvalidActionError(f"cannot read {text!r}: write {_CORRECT_FORMS}")
    roll = None if match["roll"] is None else tuple(int(t) for t in _FACE_TOKEN.split(match["roll"]))
    if match["add"] is not None:
        return Correct(None, "add", int(match["added"]), roll)
    if match["face"] is not None:
        return Correct(int(match["die"]), "face", int(match["told"]), roll)
    return Correct(int(match["die"]), match["fix"].lower(), None, roll)


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
    if kind == Correct.kind and {"fix"} <= keys <= {"die", "fix", "face", "roll"}:
        return _correct_from(data)
    raise InvalidActionError(f"not an action: {dict(data)!r}; expected one of: {_FORMS}")


def _correct_from(data: Mapping[str, Any]) -> Correct:
    """A :class:`Correct` from its JSON form (``die``, ``face`` and ``roll`` may be left out where they are null)."""
    roll = data.get("roll")
    if roll is not None and not isinstance(roll, list):
        raise InvalidActionError(f"correct: 'roll' must be a list of faces or null, got {roll!r}")
    return Correct(data.get("die"), data["fix"], data.get("face"), None if roll is None else tuple(roll))
