"""The event log: every accepted action, numbered, from which a game is rebuilt.

The log is append-only. An :class:`~farklecam.scoring.actions.Undo` is itself an event:
it cancels the latest action still in force, so the log keeps everything that
was ever accepted (a misread roll and its correction both stay visible) while
:func:`effective_actions` gives the actions that make the current state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from farklecam.errors import IllegalActionError
from farklecam.scoring.actions import Action, InvalidActionError, Undo, action_from_dict

__all__ = ["Event", "effective_actions", "seqs_in_force"]


@dataclass(frozen=True, slots=True)
class Event:
    """One accepted action.

    Attributes:
        seq: position in the log, starting at 1.
        action: the action as accepted.
        at: when it was accepted (seconds since the epoch) if the game has a clock, else ``None``.
    """

    seq: int
    action: Action
    at: float | None = None

    def __str__(self) -> str:
        return f"{self.seq}: {self.action}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"seq": 1, "action": {...}, "at": null}``."""
        return {"seq": self.seq, "action": self.action.to_dict(), "at": self.at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        """Read an event from its JSON form.

        Raises:
            InvalidActionError: a malformed event or action.
        """
        if not isinstance(data, Mapping) or set(data) - {"seq", "action", "at"} or "action" not in data:
            raise InvalidActionError(f"not an event: {data!r}; expected {{'seq', 'action', 'at'}}")
        seq, at = data.get("seq"), data.get("at")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise InvalidActionError(f"event 'seq' must be a positive integer, got {seq!r}")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int | float)):
            raise InvalidActionError(f"event 'at' must be a number or null, got {at!r}")
        return cls(seq, action_from_dict(data["action"]), None if at is None else float(at))


def effective_actions(events: Iterable[Event]) -> list[Action]:
    """The actions still in force: each ``Undo`` cancels the latest one not already cancelled.

    Raises:
        IllegalActionError: an ``Undo`` with nothing left to undo.
    """
    actions: list[Action] = []
    for event in events:
        if isinstance(event.action, Undo):
            if not actions:
                raise IllegalActionError(f"event {event.seq}: nothing to undo")
            actions.pop()
        else:
            actions.append(event.action)
    return actions


def seqs_in_force(events: Iterable[Event]) -> list[int]:
    """The numbers (``seq``) of the events whose actions are in force, oldest first.

    What :func:`effective_actions` keeps, by number: a camera table that changed its picture of a
    throw with a correction learns from it whether an undo has taken that correction back.

    Raises:
        IllegalActionError: an ``Undo`` with nothing left to undo.
    """
    seqs: list[int] = []
    for event in events:
        if isinstance(event.action, Undo):
            if not seqs:
                raise IllegalActionError(f"event {event.seq}: nothing to undo")
            seqs.pop()
        else:
            seqs.append(event.seq)
    return seqs
