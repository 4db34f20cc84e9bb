"""The API contract: one pydantic schema family per resource.

Request bodies (``*In``, ``GameCreate``, ``ActionIn``) bound every size a client
controls (list lengths, name lengths, option counts), so a malformed or huge
body is a 422 before any game code runs. Response models (``*Public``) are what
``response_model=`` enforces and what ``/openapi.json`` documents; the
builders that fill them from domain objects live next to the routes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

import annotated_types
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)

from farklecam.scoring.actions import Action, action_from_dict, parse_action
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.service.names import check_player_name

__all__ = [
    "ActionIn",
    "AdviceIn",
    "AdvicePublic",
    "CorrectionPublic",
    "DiceIn",
    "DiePublic",
    "EventPublic",
    "EventsPublic",
    "GameCreate",
    "GamePublic",
    "GameStatePublic",
    "GameSummary",
    "GamesPublic",
    "HealthPublic",
    "KeepAdvicePublic",
    "LegalPublic",
    "OptionPublic",
    "PassAdvicePublic",
    "PassWinPublic",
    "PassedIn",
    "PictureDiePublic",
    "PictureGonePublic",
    "PicturePublic",
    "PictureReadingPublic",
    "PicturesDeletedPublic",
    "PicturesPublic",
    "PlayerPublic",
    "PointsPlayPublic",
    "PresetPublic",
    "ReadingPublic",
    "ReportPublic",
    "RulesIn",
    "RulesPublic",
    "ScorePublic",
    "SetAsidePublic",
    "TurnPublic",
    "TurnTotal",
    "WinAdvicePublic",
    "WinOptionPublic",
]

OptionValue = StrictBool | StrictInt | Annotated[str, StringConstraints(max_length=40)]
PlayerName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40), AfterValidator(check_player_name)
]
Faces = Annotated[list[StrictInt], Field(min_length=1, max_length=8)]
#: Points already set aside this turn, however a client sends them (JSON or a form field): one rule everywhere.
TurnTotal = Annotated[int, annotated_types.Ge(0), annotated_types.Le(1_000_000), annotated_types.MultipleOf(50)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ----------------------------------------------------------------------------- rules
class RulesIn(_In):
    """Which rules a request plays under: a preset (default: the server's) plus option changes."""

    preset: Annotated[str, StringConstraints(max_length=40)] | None = None
    options: dict[Annotated[str, StringConstraints(max_length=40)], OptionValue] = Field(
        default_factory=dict, max_length=64, examples=[{"three_ones": 1000}]
    )

    def to_rules(self, default_preset: str) -> Rules:
        """The :class:`Rules` asked for.

        Raises:
            InvalidRulesError: unknown preset or option, or a bad value.
        """
        return get_rules(self.preset or default_preset).with_options(self.options)


class PresetPublic(BaseModel):
    """A named rule set."""

    name: str
    summary: str
    aliases: list[str]
    rules: dict[str, Any]


class OptionPublic(BaseModel):
    """One settable rule option: its type, default, allowed values, what it does and which rule text it plays."""

    name: str
    type: Literal["int", "bool", "choice"]
    default: int | bool | str
    value: int | bool | str = Field(description="its value under the server's default preset")
    choices: list[str] | None = None
    min: int | None = None
    max: int | None = None
    step: int | None = Field(default=None, description="integer values are multiples of this")
    allowed: str = Field(description='the allowed values in words, e.g. "a multiple of 50 in 0..2000"')
    description: str
    source: str = Field(description="which rule text in shared/rules and which of its variants")


class RulesPublic(BaseModel):
    """Everything ``GET /api/rules`` lists."""

    default_preset: str
    presets: list[PresetPublic]
    options: list[OptionPublic]
    defaults: dict[str, Any]


# ----------------------------------------------------------------------------- scoring
class DiceIn(RulesIn):
    """Faces thrown, and the rules to score them under."""

    dice: Faces = Field(examples=[[1, 1, 1, 5, 3, 4]])


class PassedIn(BaseModel):
    """Progressive: the total and dice the last banker passed, on offer at the start of a turn."""

    model_config = ConfigDict(extra="forbid")

    total: StrictInt = Field(ge=50, le=1_000_000, multiple_of=50, description="the banked total passed on")
    dice: StrictInt = Field(ge=1, le=8, description="the dice passed (all of them after hot dice)")


class AdviceIn(DiceIn):
    """A roll mid-turn, or with ``passed`` (and no ``dice``) the start of a turn with passed dice on offer.

    For a roll: points already set aside, whether the player is on the board, farkles in a row.
    """

    dice: Faces | None = Field(default=None, examples=[[1, 1, 1, 5, 3, 4]])  # type: ignore[assignment]
    passed: PassedIn | None = Field(
        default=None,
        description="progressive: the pass on offer at the start of a turn; the answer's `passed` block says "
        "whether to take it or start fresh (by points, and with `scores` by the chance to win). Give no `dice` with it",
    )
    turn_total: Annotated[TurnTotal, Strict()] = 0
    on_board: StrictBool = True
    farkle_streak: StrictInt = Field(default=0, ge=0, le=10)
    throws_left: StrictInt | None = Field(
        default=None,
        ge=1,
        le=5,
        description="a single die (Elizabethan rules): throws still allowed for it, this one included "
        "(default: all of `single_die_throws`); a miss with throws to spare is thrown again, not a farkle",
    )
    scores: list[StrictInt] | None = Field(
        default=None,
        min_length=2,
        max_length=40,
        description="banked scores, the player to move first: adds a `win` block (advice by the chance to win)",
    )
    streaks: list[Annotated[StrictInt, Field(ge=0, le=10)]] | None = Field(
        default=None,
        max_length=40,
        description="with `scores` under a farkle penalty: each player's farkles in a row, in the same order "
        "(default: `farkle_streak` for the player to move, 0 for the others)",
    )

    @model_validator(mode="after")
    def _a_roll_or_a_pass(self) -> AdviceIn:
        """A request advises a thrown roll or the start of a turn with a pass on offer: exactly one of them."""
        if (self.dice is None) == (self.passed is None):
            raise ValueError("give the `dice` of a throw, or `passed` for the start of a turn with a pass on offer")
        if self.passed is not None and self.turn_total:
            raise ValueError("`turn_total` is the points set aside in a turn already thrown: not with `passed`")
        return self


class SetAsidePublic(BaseModel):
    """One legal keep of a roll."""

    keep: list[int]
    points: int
    dice_left: int
    hot_dice: bool
    combinations: list[str]


class ScorePublic(BaseModel):
    """Every legal keep of a roll, best first; ``farkle`` when there is none."""

    roll: list[int]
    farkle: bool
    options: list[SetAsidePublic]


class KeepAdvicePublic(BaseModel):
    """One keep of the roll valued by points: its best action and what throwing on risks."""

    keep: list[int]
    points: int
    action: str = Field(description="bank or roll, whichever is worth more after this keep")
    expected: float = Field(description="the turn's expected worth after this keep, played for points")
    dice_left: int
    hot_dice: bool
    farkle_probability: float = Field(
        description="chance that throwing on, the next throw of the dice left scores nothing "
        "(one die: after every throw the rules allow it)"
    )


class WinOptionPublic(BaseModel):
    """One keep of the roll valued by the chance to win."""

    keep: list[int]
    points: int
    dice_left: int
    action: str = Field(description="bank or roll, whichever wins more often after this keep")
    win_probability: float = Field(description="chance to win with this keep and that action")
    bank_probability: float | None = Field(description="chance to win banking now (null: not allowed)")
    roll_probability: float = Field(description="chance to win throwing on")
    farkle_probability: float = Field(description="chance that throwing on, the next throw scores nothing")


class PointsPlayPublic(BaseModel):
    """What playing for points would do where it differs from the play to win, and what it costs."""

    keep: list[int]
    action: str | None
    win_probability: float | None = Field(description="chance to win playing for points")
    cost: float | None = Field(description="chance to win given up by playing for points instead")


class WinAdvicePublic(BaseModel):
    """The ``win`` block: the play that maximises the chance to win (``available`` false while being solved)."""

    model_config = ConfigDict(extra="allow")

    available: bool
    why: str | None = Field(default=None, description="why the chance to win is not there yet")
    scores: list[int] | None = None
    opponent: int | None = Field(default=None, description="the best score of the others")
    last_turn: bool | None = Field(default=None, description="someone reached the target: this is the last turn")
    farkle: bool | None = None
    throw_again: bool | None = Field(default=None, description="a missed single die with throws to spare")
    keep: list[int] | None = None
    points: int | None = None
    dice_left: int | None = None
    action: str | None = None
    win_probability: float | None = Field(default=None, description="chance to win with the advised play")
    bank_probability: float | None = Field(default=None, description="the advised keep's chance banking now")
    roll_probability: float | None = Field(default=None, description="the advised keep's chance throwing on")
    farkle_probability: float | None = Field(
        default=None, description="chance that throwing on after the advised keep, the next throw scores nothing"
    )
    alternatives: list[WinOptionPublic] = Field(default_factory=list, description="the other keeps, best first")
    points_advice: PointsPlayPublic | None = None
    approximate: bool | None = None
    approximation: str | None = Field(default=None, description="what the chances leave out (null: exact)")


class PassWinPublic(BaseModel):
    """Take the passed dice or start fresh, by the chance to win (``available`` false while being solved)."""

    model_config = ConfigDict(extra="allow")

    available: bool
    why: str | None = Field(default=None, description="why the chance to win is not there yet")
    scores: list[int] | None = None
    opponent: int | None = Field(default=None, description="the best score of the others")
    last_turn: bool | None = Field(default=None, description="someone reached the target: this is the last turn")
    take: bool | None = Field(default=None, description="throw the passed dice rather than start fresh, to win")
    win_probability: float | None = Field(default=None, description="chance to win with the advised choice")
    take_probability: float | None = Field(default=None, description="chance to win taking the pass")
    fresh_probability: float | None = Field(default=None, description="chance to win starting fresh")
    points_take: bool | None = Field(default=None, description="what playing for this turn's points would choose")
    points_cost: float | None = Field(default=None, description="chance to win that the points choice gives up")
    approximate: bool | None = None
    approximation: str | None = Field(default=None, description="what the chances leave out (null: exact)")
    text: str | None = Field(default=None, description="the advice in one line")


class PassAdvicePublic(BaseModel):
    """Progressive: take the dice the last banker passed (building on their total), or start fresh."""

    total: int = Field(description="the total on offer")
    dice: int = Field(description="the dice on offer")
    take: bool = Field(description="the advice: by the chance to win where `win` is available, else by points")
    points_take: bool = Field(description="by points: taking them expects more points this turn than starting fresh")
    expected_take: float = Field(description="this turn's expected points taking the pass, played for points")
    expected_fresh: float = Field(description="this turn's expected points starting fresh")
    farkle_probability: float = Field(description="chance the throw of the passed dice scores nothing")
    text: str = Field(description="the advice in one line")
    win: PassWinPublic | None = Field(default=None, description="with `scores`: the choice by the chance to win")


class AdvicePublic(BaseModel):
    """The advisor's answer (:meth:`farklecam.scoring.advisor.Advice.to_dict`); extra fields pass through."""

    model_config = ConfigDict(extra="allow")

    farkle: bool = False
    keep: list[int] | None = None
    points: int | None = None
    action: str | None = None
    expected: float | None = None
    farkle_probability: float | None = Field(
        default=None, description="chance that throwing on after the advised keep, the next throw scores nothing"
    )
    alternatives: list[KeepAdvicePublic] = Field(default_factory=list, description="the other keeps, best first")
    win: WinAdvicePublic | None = Field(default=None, description="with `scores`: the play by the chance to win")
    passed: PassAdvicePublic | None = Field(default=None, description="with `passed`: take the pass or start fresh")


# ----------------------------------------------------------------------------- readings
class DiePublic(BaseModel):
    """One die found in a picture."""

    face: int | None
    box: list[float]
    confidence: float
    status: str


class ReadingPublic(BaseModel):
    """Every die of one picture; ``faces`` are those that score (status ok)."""

    dice: list[DiePublic]
    rethrow: int = Field(description="dice to throw again: leaning with no face up, or off the tray")
    unclear: int = Field(default=0, description="dice the camera could not tell: look at them and say their faces")
    faces: list[int]
    tray: str | None = Field(default=None, description="how the tray was found: marked, found, unsure or none")


class ReportPublic(BaseModel):
    """One reading with its score and advice: the one report ``read --json``, ``POST /api/read`` and frames give.

    ``score`` and ``advice`` cover the dice that lie flat (``reading.faces``); dice to
    throw again are listed but not scored, and ``final`` is false until none are left.
    """

    image_size: tuple[int, int] | None = Field(description="(width, height) of the picture in pixels")
    rules: str = Field(description="the name of the rules it was scored under")
    reading: ReadingPublic | None = Field(description="the dice seen (None while the dice move)")
    final: bool = Field(description="no die must be thrown again: the score is the throw's")
    score: ScorePublic | None = Field(default=None, description="every keep of the faces read (None: no face)")
    advice: AdvicePublic | None = Field(default=None, description="the advisor's play (None: no face, or unscorable)")
    notice: str | None = Field(default=None, description="something about the camera the players should fix")
    scoring_error: str | None = Field(default=None, description="why the faces read cannot be scored")


class HealthPublic(BaseModel):
    """Liveness plus what the server has loaded."""

    status: Literal["ok"]
    version: str
    database: str
    reader_loaded: bool
    games: int


# ----------------------------------------------------------------------------- games
class GameCreate(RulesIn):
    """A new game: players in seating order; ``first_player`` skips the roll-off."""

    players: Annotated[list[PlayerName], Field(min_length=2, max_length=12, examples=[["Ann", "Bob"]])]
    first_player: PlayerName | None = None
    head_start: (
        Literal["fair"]
        | Annotated[dict[PlayerName, Annotated[StrictInt, Field(ge=0, le=1_000_000)]], Field(max_length=12)]
        | None
    ) = Field(
        default=None,
        description='points some players start with, by name (multiples of 50 below the target), or "fair": '
        "for two players with a `first_player`, the points for the second that make the game closest to even",
        examples=["fair", {"Bob": 200}],
    )

    def to_rules(self, default_preset: str) -> Rules:
        """The game's :class:`Rules`, named "PRESET (customised)" where the options change play.

        A game keeps its rules' name, and lists and pages show it: a game whose options
        differ from its preset's must not pass for the preset itself.

        Raises:
            InvalidRulesError: unknown preset or option, or a bad value.
        """
        rules, preset = super().to_rules(default_preset), get_rules(self.preset or default_preset)
        return rules if rules.key() == preset.key() else replace(rules, name=f"{preset.name} (customised)")


ActionKind = Literal["rolloff", "roll", "passed-roll", "keep", "bank", "farkle", "undo", "rules", "correct"]


class ActionIn(_In):
    """One action, structured (``{"type": "keep", "faces": [1, 5]}``) or as text (``{"text": "keep 1,5"}``).

    A correction of the throw just read: ``{"type": "correct", "die": 4, "fix": "face", "face": 5, "roll":
    [3, 4, 5, 5, 5]}``, or ``{"text": "correct 4 face 5 roll 3,4,5,5,5"}``.
    """

    type: ActionKind | None = None
    faces: Faces | None = None
    player: PlayerName | None = None
    face: StrictInt | None = None
    preset: Annotated[str, StringConstraints(max_length=40)] | None = Field(
        default=None, description="for type 'rules': the preset the game switches to from this turn on"
    )
    die: StrictInt | None = Field(
        default=None, description="for type 'correct': the die's number as the page tags it (#1 is 1); none for 'add'"
    )
    fix: Literal["face", "cocked", "off-tray", "not-a-die", "add"] | None = Field(
        default=None,
        description="for type 'correct': the die shows 'face', leans ('cocked'), lies off the tray, is no die, or "
        "is one the camera missed ('add', with its face)",
    )
    roll: Faces | None = Field(
        default=None,
        description="for type 'correct': the throw's faces as corrected, which replace the latest throw's; none "
        "when the throw is taken back (a die to throw again, or too many or too few dice)",
    )
    text: Annotated[str, StringConstraints(max_length=200)] | None = None
    expected_events: StrictInt | None = Field(
        default=None,
        ge=0,
        le=1_000_000,
        description="the game's event count the client last saw: an action sent after another device's is "
        "refused with 409 instead of applied to a game the client has not seen (default: no check)",
    )

    @model_validator(mode="after")
    def _one_form(self) -> ActionIn:
        if (self.text is None) == (self.type is None):
            raise ValueError("give either 'type' (with its fields) or 'text', not both or neither")
        given = (self.faces, self.player, self.face, self.preset, self.die, self.fix, self.roll)
        if self.text is not None and any(v is not None for v in given):
            raise ValueError("'text' stands alone: no other field of an action (faces, face, player, ...) beside it")
        return self

    def to_action(self) -> Action:
        """The :mod:`farklecam.scoring.actions` value.

        Raises:
            InvalidActionError: fields that do not fit the action type (the message lists the forms).
            InvalidDiceError: a face outside 1-6.
        """
        if self.text is not None:
            return parse_action(self.text)
        fields = (
            ("faces", self.faces), ("player", self.player), ("face", self.face), ("preset", self.preset),
            ("die", self.die), ("fix", self.fix), ("roll", self.roll),
        )  # fmt: skip
        return action_from_dict({"type": self.type, **{k: v for k, v in fields if v is not None}})


class PlayerPublic(BaseModel):
    """One line of the scoreboard."""

    name: str
    score: int
    on_board: bool
    streak: int


class TurnPublic(BaseModel):
    """One finished turn of the score sheet."""

    player: str
    end: str
    points: int
    penalty: int
    recipient: str | None
    last_roll: list[int]


class LegalPublic(BaseModel):
    """What may be done now."""

    kinds: list[str]
    text: str
    dice_to_throw: int
    passed_dice: int
    keeps: list[SetAsidePublic]
    roll_off: list[str]
    bank_minimum: int


class GameStatePublic(BaseModel):
    """Where a game stands."""

    phase: str
    current: str | None
    description: str
    players: list[PlayerPublic]
    turn_total: int
    dice_to_throw: int
    roll: list[int] | None
    hot_dice: bool
    passed: dict[str, Any] | None
    roll_off_faces: dict[str, int]
    last_round: dict[str, Any] | None
    winners: list[str]
    chances: list[float] | None = Field(
        default=None,
        description="each player's chance to win now, in seating order, every player playing to win (null during a "
        "roll-off, tie-break rounds or the last round with more than two players, or while the rules' win table is "
        "being solved)",
    )
    chances_approximate: bool = Field(
        default=False,
        description="whether `chances` is the several-player approximation (more than two players: each player's "
        "chances against each other alone, combined as Bradley-Terry strengths and scaled to add up to one)",
    )
    turns: list[TurnPublic]
    legal: LegalPublic


class GameSummary(BaseModel):
    """A game in the list."""

    id: str
    players: list[str]
    rules: str
    created: float
    updated: float
    events: int


class GamePublic(BaseModel):
    """A game: who plays, under which rules, and its current state."""

    id: str
    players: list[str]
    rules: dict[str, Any]
    head_start: dict[str, int] = Field(default_factory=dict, description="points players started with, by name")
    created: float
    events: int
    state: GameStatePublic


class GamesPublic(BaseModel):
    """Games, newest first."""

    data: list[GameSummary]
    count: int


class EventPublic(BaseModel):
    """One accepted action of the log (undos included)."""

    seq: int
    action: dict[str, Any]
    text: str
    at: float | None


class EventsPublic(BaseModel):
    """A game's event log, oldest first."""

    data: list[EventPublic]
    count: int


# ----------------------------------------------------------------------------- throw pictures
class PictureDiePublic(DiePublic):
    """One die of a throw's picture, as read."""

    face_confidence: float = Field(description="the face classifier's confidence in its call, 0..1")


class PictureReadingPublic(BaseModel):
    """A throw's reading as the camera read it, in its picture's pixels (the overlay is drawn from it)."""

    dice: list[PictureDiePublic]
    rethrow: int = Field(description="dice to throw again: leaning with no face up, or off the tray")
    unclear: int = Field(description="dice the camera could not tell")
    faces: list[int] = Field(description="the faces that scored as read (status ok)")
    tray: str = Field(description="how the tray was found: marked, found, unsure or none")
    tray_outline: list[list[float]] | None = Field(description="the tray's outline the off-tray calls used, or None")
    image_size: tuple[int, int] = Field(description="(width, height) of the picture")
    frame_size: tuple[int, int] = Field(description="(width, height) of the frame it was read from")


class CorrectionPublic(BaseModel):
    """A ``correct`` event of the game's log that applies to a throw."""

    seq: int
    text: str = Field(description="the event as text, e.g. `correct 3 face 5 roll 3,4,5,5,5`")
    in_force: bool = Field(description="false once an undo took it back")


class PicturePublic(BaseModel):
    """The picture behind one camera-scored throw (the JPEG itself: `GET .../pictures/{seq}`)."""

    seq: int = Field(description="the event of the game's log the throw is")
    text: str = Field(description="that event as text, e.g. `roll 3,4,5,5,6`")
    bytes: int = Field(description="the JPEG's size")
    width: int
    height: int
    taken: float = Field(description="when it was kept (seconds since the epoch)")
    reading: PictureReadingPublic
    told: list[str] = Field(description="what the players said of its dice before the throw was scored")
    corrections: list[CorrectionPublic] = Field(description="the log's corrections of this throw, oldest first")


class PictureGonePublic(BaseModel):
    """A camera-scored throw whose picture was deleted."""

    seq: int
    text: str
    deleted: float = Field(description="when its picture was deleted (seconds since the epoch)")


class PicturesPublic(BaseModel):
    """A game's throw pictures, by event; a throw typed by hand has none."""

    game_id: str
    data: list[PicturePublic]
    count: int
    bytes: int = Field(description="the bytes the kept pictures take")
    deleted: list[PictureGonePublic] = Field(description="camera-scored throws whose pictures were deleted")


class PicturesDeletedPublic(BaseModel):
    """What deleting a game's pictures freed (its log is untouched)."""

    game_id: str
    deleted: int = Field(description="pictures deleted")
    bytes: int = Field(description="the bytes their JPEGs took")
