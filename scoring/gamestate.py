"""The state of a game as one immutable value, and what may be done in it.

:class:`GameState` holds everything about a game at one moment; per-player
tuples follow the seating order of ``players``. :func:`legal_actions` says what
:func:`farklecam.scoring.play.step` accepts now. The rules of play themselves live in
:mod:`farklecam.scoring.play`; :mod:`farklecam.scoring.game` wraps both with the event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import SetAside, legal_set_asides

__all__ = ["GameState", "LastRound", "LegalActions", "PassedDice", "Phase", "TurnEnd", "TurnRecord", "legal_actions"]


class Phase(StrEnum):
    """What the game waits for."""

    ROLL_OFF = "roll_off"
    """Players throw one die each to decide who goes first."""
    AWAITING_ROLL = "awaiting_roll"
    """The current player must throw: a new turn (perhaps with a piggyback offer), or a missed single die."""
    AWAITING_KEEP = "awaiting_keep"
    """The current player must set aside scoring dice from the roll."""
    CAN_BANK_OR_ROLL = "can_bank_or_roll"
    """The current player may throw the remaining dice (all after hot dice) or bank, if the rules allow it now."""
    GAME_OVER = "game_over"
    """The game has ended; see the winners."""


class TurnEnd(StrEnum):
    """How a turn ended."""

    BANKED = "banked"
    """The turn total was added to the player's score."""
    FARKLED = "farkled"
    """A throw scored nothing; the turn total was lost (and perhaps a penalty)."""
    OVERSHOT = "overshot"
    """Exact target: the bank went past the target and was given to the lowest score."""


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One finished turn, a line of the score sheet."""

    player: str
    end: TurnEnd
    points: int
    """Banked points (given away when overshot); 0 on a farkle."""
    penalty: int = 0
    """Points the player lost to the farkle penalty at the end of this turn."""
    recipient: str | None = None
    """Who received overshooting points (exact target; ``None`` when they were lost)."""
    last_roll: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PassedDice:
    """Piggyback offer to the current player: the dice and total the last banker passed."""

    dice: int
    total: int
    from_player: str


@dataclass(frozen=True, slots=True)
class LastRound:
    """The last round: who reached the target and who still has a final turn to play."""

    trigger: str
    remaining: tuple[str, ...]
    """Players still to play, in order (the current player is removed when their turn ends)."""
    extra_rounds: int = 0
    """Tie-break rounds begun (``tie = extra_round``)."""


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything about a game at one moment (immutable; per-player tuples follow ``players``)."""

    players: tuple[str, ...]
    phase: Phase
    current: str | None
    scores: tuple[int, ...]
    on_board: tuple[bool, ...]
    streaks: tuple[int, ...]
    turn_total: int = 0
    dice_to_throw: int = 0
    """Dice the next ``Roll`` must have (0 while a keep is awaited or the game is not in a turn)."""
    roll: tuple[int, ...] | None = None
    """The last roll of this turn (sorted), or ``None`` before the first throw."""
    hot_dice: bool = False
    """All dice have scored and have not been thrown again yet."""
    single_misses: int = 0
    """Single-die throws missed in a row this turn (Elizabethan three throws)."""
    passed: PassedDice | None = None
    roll_off: tuple[str, ...] = ()
    """Players still in the roll-off (the tied leaders after a tie)."""
    roll_off_faces: tuple[tuple[str, int], ...] = ()
    """Faces thrown in the current (or the deciding) roll-off round."""
    last_round: LastRound | None = None
    winners: tuple[str, ...] = ()
    turns: tuple[TurnRecord, ...] = ()

    def index(self, player: str) -> int:
        """Seat of a player."""
        return self.players.index(player)

    def describe(self) -> str:
        """One line: what the game waits for, the turn total and the scores."""
        who, roll = self.current, ",".join(map(str, self.roll or ()))
        match self.phase:
            case Phase.ROLL_OFF:
                thrown = {p for p, _ in self.roll_off_faces}
                waiting = ", ".join(p for p in self.roll_off if p not in thrown)
                doing = f"roll-off, waiting for {waiting}"
            case Phase.AWAITING_ROLL:
                doing = f"{who} to throw {self.dice_to_throw} dice, turn total {self.turn_total}"
                if self.passed:
                    doing += f" (or the {self.passed.dice} passed dice for {self.passed.total})"
            case Phase.AWAITING_KEEP:
                doing = f"{who} to set aside from {roll}, turn total {self.turn_total}"
            case Phase.CAN_BANK_OR_ROLL:
                doing = f"{who} to bank {self.turn_total} or throw {self.dice_to_throw} dice"
            case Phase.GAME_OVER:
                doing = f"game over, won by {' and '.join(self.winners)}"
        scores = ", ".join(f"{p} {s}" for p, s in zip(self.players, self.scores, strict=True))
        last = f"; last round, {self.last_round.trigger} reached the target" if self.last_round else ""
        return f"{doing}; scores {scores}{last}"


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What may be done now: action kinds (``Action.kind``) and their details."""

    phase: Phase
    player: str | None
    kinds: tuple[str, ...]
    dice_to_throw: int = 0
    """Dice a ``Roll`` must have."""
    passed_dice: int = 0
    """Dice a ``PassedRoll`` must have (0: no piggyback offer)."""
    keeps: tuple[SetAside, ...] = ()
    roll_off: tuple[str, ...] = ()
    """Players who may throw their roll-off die now."""
    bank_minimum: int = 0

    def __contains__(self, kind: object) -> bool:
        return kind in self.kinds

    def __str__(self) -> str:
        parts: list[str] = []
        for kind in self.kinds:
            if kind == "rolloff":
                parts.append(f"rolloff for {', '.join(self.roll_off)}")
            elif kind == "roll":
                parts.append(f"roll {self.dice_to_throw} dice")
            elif kind == "passed-roll":
                parts.append(f"passed-roll {self.passed_dice} dice")
            elif kind == "keep":
                shown = " | ".join(f"{','.join(map(str, o.keep))} ({o.points})" for o in self.keeps[:8])
                more = f" | +{len(self.keeps) - 8} more" if len(self.keeps) > 8 else ""
                parts.append(f"keep one of {shown}{more}")
            else:
                parts.append(kind)
        return "; ".join(parts) or "nothing (the game is over)"


def legal_actions(state: GameState, rules: Rules) -> LegalActions:
    """What :func:`step` accepts now (``undo`` is added by the game when there is something to undo)."""
    phase, who, dice = state.phase, state.current, state.dice_to_throw
    match phase:
        case Phase.ROLL_OFF:
            thrown = {p for p, _ in state.roll_off_faces}
            waiting = tuple(p for p in state.roll_off if p not in thrown)
            return LegalActions(phase, who, ("rolloff",), roll_off=waiting)
        case Phase.AWAITING_ROLL:
            kinds = ("roll",) + (("passed-roll",) if state.passed else ()) + (("farkle",) if state.roll else ())
            return LegalActions(phase, who, kinds, dice, passed_dice=state.passed.dice if state.passed else 0)
        case Phase.AWAITING_KEEP:
            keeps = legal_set_asides(state.roll or (), rules)
            return LegalActions(phase, who, ("keep",) if keeps else ("farkle",), keeps=keeps)
        case Phase.CAN_BANK_OR_ROLL:
            minimum = rules.bank_minimum(state.on_board[state.index(who or "")])
            can_bank = state.turn_total >= minimum and not (rules.must_roll_after_hot_dice and state.hot_dice)
            return LegalActions(phase, who, ("roll", "bank") if can_bank else ("roll",), dice, bank_minimum=minimum)
    return LegalActions(phase, who, ())
