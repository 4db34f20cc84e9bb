"""Game keeping: a Farkle game for 2+ players, fed by dice read from outside.

A :class:`Game` holds the rules, the players (in seating order: turns pass to
the next one), an append-only event log and the current
:class:`~farklecam.scoring.gamestate.GameState`. Dice values come from the camera, a user
or :class:`farklecam.scoring.simulate.RandomDice`; the game only checks and keeps score::

    >>> from farklecam.scoring.presets import get_rules
    >>> game = Game(get_rules("boxed"), ["Ann", "Bob"], first_player="Ann")
    >>> for text in ["roll 5,5,2,3,4,6", "keep 5,5", "roll 3,3,3,5", "keep 3,3,3,5",
    ...              "roll 1,1,6,2,6,4", "keep 1,1", "bank"]:
    ...     _ = game.apply(text)
    >>> game.scores, game.current_player
    ({'Ann': 650, 'Bob': 0}, 'Bob')

Every action is validated on this public path (:meth:`Game.apply`); an illegal
one raises :class:`~farklecam.errors.IllegalActionError` naming why, what is
allowed now and the game's state, and leaves the state and log unchanged.
Every accepted action (``Undo`` included) is appended to :attr:`Game.events`;
:meth:`Game.replay` and :meth:`Game.from_json` rebuild the identical game.

A :class:`~farklecam.scoring.actions.Correct` is, like an undo, the log's business rather than a rule of
play: it replays the latest throw in force (:attr:`Game.open_throw`) with the corrected faces from the
state before it, or takes that throw back, so the game after a misread die is the game the true
throw would have made.

Setup errors (fewer than two players, duplicate names) raise
:class:`~farklecam.errors.InvalidRulesError`. The rule readings are listed in
:mod:`farklecam.scoring.play`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from farklecam.errors import IllegalActionError, InvalidRulesError, RulesError
from farklecam.scoring.actions import (
    ACTION_TYPES,
    Action,
    ChangeRules,
    Correct,
    InvalidActionError,
    PassedRoll,
    Roll,
    RollOff,
    Undo,
    parse_action,
)
from farklecam.scoring.events import Event
from farklecam.scoring.gamestate import GameState, LastRound, LegalActions, PassedDice, Phase, TurnRecord, legal_actions
from farklecam.scoring.play import changed_rules, initial_state, step
from farklecam.scoring.rules import Rules

__all__ = ["FORMAT", "Game", "OpenThrow", "Throw"]

#: ``format`` field of the JSON form.
FORMAT = "farklecam.game/1"

#: The actions that record dice a player threw: what a :class:`~farklecam.scoring.actions.Correct` corrects.
Throw: TypeAlias = Roll | PassedRoll | RollOff
_THROWS = (Roll, PassedRoll, RollOff)


@dataclass(frozen=True, slots=True)
class OpenThrow:
    """The latest throw in force while nothing but corrections followed it: a correction may still change it.

    Attributes:
        throw: the throw as first recorded (a correction keeps its kind and replaces its faces).
        before: the game's state just before it, from which a correction plays it again.
        rules: the rules in force then.
    """

    throw: Throw
    before: GameState
    rules: Rules

    @property
    def player(self) -> str | None:
        """Who threw it."""
        return self.throw.player if isinstance(self.throw, RollOff) else self.before.current

    @property
    def dice(self) -> int:
        """How many dice it had (and a corrected throw must have)."""
        return 1 if isinstance(self.throw, RollOff) else len(self.throw.faces)

    def corrected(self, faces: tuple[int, ...]) -> Throw:
        """The same throw with ``faces``.

        Raises:
            IllegalActionError: a roll-off throw of more than one die.
        """
        if isinstance(self.throw, RollOff):
            if len(faces) != 1:
                raise IllegalActionError(f"a roll-off throw is one die, not {len(faces)}")
            return RollOff(self.throw.player, faces[0])
        return type(self.throw)(faces)


class Game:
    """A game in progress (or over): rules, players, event log, state.

    Args:
        rules: the rule configuration.
        players: names in seating order (turns pass from each to the next), at least two, unique.
        first_player: skip the roll-off and let this player start.
        auto_farkle: a throw with no scoring dice ends the turn at once (default); if false the
            game waits in ``awaiting_keep`` for an explicit ``Farkle()``, so a misread can be undone first.
        clock: returns the time stamped on each event (seconds); ``None`` leaves ``Event.at`` empty.
        head_start: points some players start with, by name (a positive multiple of 50 below the target);
            such a player starts on the board. ``fair_head_start`` in :mod:`farklecam.scoring.winprob`
            gives the second player the points that make a two-player game closest to even.
    """

    def __init__(
        self,
        rules: Rules,
        players: Sequence[str],
        *,
        first_player: str | None = None,
        auto_farkle: bool = True,
        clock: Callable[[], float] | None = None,
        head_start: Mapping[str, int] | None = None,
    ) -> None:
        if not isinstance(rules, Rules):
            raise InvalidRulesError(f"a game needs a Rules value, got {type(rules).__name__}")
        names = tuple(players)
        if isinstance(players, str) or any(not isinstance(p, str) or not p.strip() or p != p.strip() for p in names):
            raise InvalidRulesError(f"players must be non-empty names without outer spaces, got {players!r}")
        if len(names) < 2 or len(set(names)) != len(names):
            raise InvalidRulesError(f"a game needs at least two players with distinct names, got {list(names)}")
        if first_player is not None and first_player not in names:
            raise InvalidRulesError(f"first_player {first_player!r} is not one of {list(names)}")
        self._initial_rules, self._rules, self._players = rules, rules, names
        self._first_player, self._auto_farkle, self._clock = first_player, bool(auto_farkle), clock
        self._head_start = _checked_head_start(head_start, names, rules)
        self._initial = initial_state(names, rules, first_player, self._head_start)
        self._state = self._initial
        self._open: OpenThrow | None = None
        self._events: list[Event] = []
        self._in_force: list[Action] = []

    # ------------------------------------------------------------------ playing
    def apply(self, action: Action | str) -> Event:
        """Check ``action`` (or its text form) against the rules, apply it and log it.

        Returns:
            The logged event.

        Raises:
            IllegalActionError: the rules forbid it now; nothing changes.
            GameOverError: the game has ended (only ``Undo``, and a ``Correct`` of the throw that ended it,
                are still accepted).
            InvalidActionError: text that is not an action.
        """
        if isinstance(action, str):
            action = parse_action(action)
        if not isinstance(action, ACTION_TYPES):
            raise InvalidActionError(f"not an action: {action!r}")
        return self._push(action, self._clock() if self._clock is not None else None)

    def undo(self) -> Event:
        """Take back the last action still in force (shorthand for ``apply(Undo())``)."""
        return self.apply(Undo())

    def is_legal(self, action: Action) -> bool:
        """Whether :meth:`apply` would accept ``action`` now (nothing changes)."""
        if isinstance(action, Undo):
            return bool(self._in_force)
        try:
            self._advance(self._state, self._rules, self._open, action)
        except RulesError:
            return False
        return True

    def legal_actions(self) -> LegalActions:
        """The action kinds allowed now, with the legal keeps, dice counts and roll-off players."""
        legal = legal_actions(self._state, self._rules)
        return dataclasses.replace(legal, kinds=(*legal.kinds, "undo")) if self._in_force else legal

    def _push(self, action: Action, at: float | None) -> Event:
        if isinstance(action, Undo):
            if not self._in_force:
                raise IllegalActionError(f"nothing to undo: no action is in force. Game: {self._state.describe()}")
            state, rules, opened = self._rebuild(self._in_force[:-1])
            self._in_force.pop()
        else:
            state, rules, opened = self._advance(self._state, self._rules, self._open, action)
            self._in_force.append(action)
        event = Event(len(self._events) + 1, action, at)
        self._state, self._rules, self._open = state, rules, opened
        self._events.append(event)
        return event

    def _advance(
        self, state: GameState, rules: Rules, opened: OpenThrow | None, action: Action
    ) -> tuple[GameState, Rules, OpenThrow | None]:
        """One action's state, the rules in force after it and the throw a correction would change then.

        Only ``ChangeRules`` changes the rules. A throw opens itself to correction; a correction plays
        the open throw again from the state before it (or leaves it taken back) and keeps it open, so
        a second correction of the same throw builds on the first; any other action closes it.
        """
        if isinstance(action, Correct):
            if opened is None:
                raise IllegalActionError(
                    "there is no throw to correct: a correction changes the latest throw until dice are set aside "
                    f"from it (undo the keep first). Game: {state.describe()}"
                )
            if action.roll is None:  # no throw as corrected: the table waits for it again
                return opened.before, opened.rules, opened
            again = step(opened.before, opened.corrected(action.roll), opened.rules, auto_farkle=self._auto_farkle)
            return again, opened.rules, opened
        after = step(state, action, rules, auto_farkle=self._auto_farkle)
        rules_after = changed_rules(rules, action) if isinstance(action, ChangeRules) else rules
        return after, rules_after, OpenThrow(action, state, rules) if isinstance(action, _THROWS) else None

    def _rebuild(self, actions: Iterable[Action]) -> tuple[GameState, Rules, OpenThrow | None]:
        state, rules, opened = self._initial, self._initial_rules, None
        for action in actions:
            state, rules, opened = self._advance(state, rules, opened, action)
        return state, rules, opened

    # ------------------------------------------------------------------ replay and JSON
    @classmethod
    def replay(
        cls,
        rules: Rules,
        players: Sequence[str],
        events: Iterable[Event],
        *,
        first_player: str | None = None,
        auto_farkle: bool = True,
        clock: Callable[[], float] | None = None,
        head_start: Mapping[str, int] | None = None,
    ) -> Game:
        """Rebuild a game from its event log (time stamps kept as logged).

        Raises:
            InvalidActionError: events out of sequence.
            IllegalActionError, GameOverError: an event the rules reject (the message names the event).
        """
        game = cls(
            rules, players, first_player=first_player, auto_farkle=auto_farkle, clock=clock, head_start=head_start
        )
        for seq, event in enumerate(events, 1):
            if not isinstance(event, Event) or event.seq != seq:
                raise InvalidActionError(f"event log out of sequence: expected event {seq}, got {event!r}")
            try:
                game._push(event.action, event.at)
            except RulesError as exc:
                raise type(exc)(f"event {seq} ({event.action}): {exc}") from exc
        return game

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: format, players, rules (with the preset name), options and events."""
        return {
            "format": FORMAT,
            "players": list(self._players),
            "rules": self._initial_rules.to_dict(),
            "first_player": self._first_player,
            "auto_farkle": self._auto_farkle,
            **({"head_start": dict(self._head_start)} if self._head_start else {}),
            "events": [e.to_dict() for e in self._events],
        }

    def to_json(self) -> str:
        """The game as JSON text (see :meth:`to_dict`)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, clock: Callable[[], float] | None = None) -> Game:
        """Rebuild a game from :meth:`to_dict` output by replaying its events.

        Raises:
            InvalidActionError: not a farklecam game, or malformed events.
            InvalidRulesError: bad rules.
            IllegalActionError: an event the rules reject.
        """
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise InvalidActionError(f"not a farklecam game (expected format {FORMAT!r})")
        rules = _rules_from(data.get("rules"))
        events, auto_farkle = data.get("events"), data.get("auto_farkle", True)
        if not isinstance(events, list) or not isinstance(auto_farkle, bool):
            raise InvalidActionError("a game's 'events' must be a list and 'auto_farkle' true or false")
        return cls.replay(
            rules,
            data.get("players") or (),
            [Event.from_dict(e) for e in events],
            first_player=data.get("first_player"),
            auto_farkle=auto_farkle,
            clock=clock,
            head_start=data.get("head_start") or None,
        )

    @classmethod
    def from_json(cls, text: str, *, clock: Callable[[], float] | None = None) -> Game:
        """Rebuild a game from :meth:`to_json` text."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidActionError(f"a game must be JSON: {exc}") from exc
        return cls.from_dict(data, clock=clock)

    # ------------------------------------------------------------------ queries
    @property
    def rules(self) -> Rules:
        """The rules in force now (the game's own, or a ``ChangeRules`` event's since)."""
        return self._rules

    @property
    def initial_rules(self) -> Rules:
        """The rules the game started under (what :meth:`to_dict` stores; the log replays any change)."""
        return self._initial_rules

    @property
    def players(self) -> tuple[str, ...]:
        """Names in seating order."""
        return self._players

    @property
    def head_start(self) -> dict[str, int]:
        """The points players started with, by name (empty: everyone started from 0)."""
        return dict(self._head_start)

    @property
    def events(self) -> tuple[Event, ...]:
        """Every accepted action, in order (``Undo`` events included)."""
        return tuple(self._events)

    @property
    def actions_in_force(self) -> tuple[Action, ...]:
        """The actions that make the current state (the log with undone actions removed)."""
        return tuple(self._in_force)

    @property
    def state(self) -> GameState:
        """The whole current state (an immutable value)."""
        return self._state

    @property
    def open_throw(self) -> OpenThrow | None:
        """The throw a :class:`~farklecam.scoring.actions.Correct` would change now, or None.

        The latest throw in force, until something other than a correction follows it (a keep, a
        bank): the camera's misread is fixed before anyone acts on it, or undone like any action.
        """
        return self._open

    @property
    def phase(self) -> Phase:
        """What the game waits for."""
        return self._state.phase

    @property
    def current_player(self) -> str | None:
        """Whose turn it is (``None`` during the roll-off and after the game)."""
        return self._state.current

    @property
    def current_roll(self) -> tuple[int, ...] | None:
        """The last roll of this turn (sorted), ``None`` before the turn's first throw."""
        return self._state.roll

    @property
    def turn_total(self) -> int:
        """Points set aside this turn (with piggyback: including the carried total)."""
        return self._state.turn_total

    @property
    def dice_to_throw(self) -> int:
        """Dice the next ``Roll`` must have (0 while a keep is awaited)."""
        return self._state.dice_to_throw

    @property
    def hot_dice(self) -> bool:
        """All dice have scored and are to be thrown again."""
        return self._state.hot_dice

    @property
    def single_die_throws_left(self) -> int:
        """Throws the player still has to make a single die score (Elizabethan rule)."""
        return self._rules.single_die_throws - self._state.single_misses

    @property
    def passed(self) -> PassedDice | None:
        """Piggyback offer to the current player, if any."""
        return self._state.passed

    @property
    def scores(self) -> dict[str, int]:
        """Banked score per player."""
        return dict(zip(self._players, self._state.scores, strict=True))

    @property
    def on_board(self) -> dict[str, bool]:
        """Whether each player has banked a first score."""
        return dict(zip(self._players, self._state.on_board, strict=True))

    @property
    def farkle_streaks(self) -> dict[str, int]:
        """Farkled turns in a row per player (reset by a bank or a penalty)."""
        return dict(zip(self._players, self._state.streaks, strict=True))

    @property
    def roll_off_faces(self) -> dict[str, int]:
        """Faces thrown in the current (or the deciding) roll-off round."""
        return dict(self._state.roll_off_faces)

    @property
    def last_round(self) -> LastRound | None:
        """The last round, once someone reached the target."""
        return self._state.last_round

    @property
    def turns(self) -> tuple[TurnRecord, ...]:
        """Finished turns, the score sheet."""
        return self._state.turns

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self._state.phase is Phase.GAME_OVER

    @property
    def winners(self) -> tuple[str, ...]:
        """The winner(s) once the game is over (co-winners with ``tie = shared``), else ``()``."""
        return self._state.winners

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Game):
            return NotImplemented
        mine = (self._rules, self._players, self._first_player, self._auto_farkle, self._head_start)
        theirs = (other._rules, other._players, other._first_player, other._auto_farkle, other._head_start)
        return (*mine, self._state, self._events) == (*theirs, other._state, other._events)

    __hash__ = None  # type: ignore[assignment]  # mutable: equal games must not hash

    def __repr__(self) -> str:
        return f"<Game {self._rules.name} {list(self._players)} {len(self._events)} events: {self._state.describe()}>"


def _rules_from(data: object) -> Rules:
    """Rules from their ``to_dict()`` form, or a preset name."""
    from farklecam.scoring.presets import get_rules

    if isinstance(data, str):
        return get_rules(data)
    if not isinstance(data, Mapping):
        raise InvalidRulesError(f"a game's 'rules' must be an object or a preset name, got {data!r}")
    options = {k: v for k, v in data.items() if k != "name"}
    name = data.get("name", "custom")
    if not isinstance(name, str):
        raise InvalidRulesError(f"rules 'name' must be text, got {name!r}")
    return dataclasses.replace(Rules().with_options(options), name=name)


def _checked_head_start(head_start: Mapping[str, int] | None, players: tuple[str, ...], rules: Rules) -> dict[str, int]:
    """``head_start`` checked against the players and the rules, without zero entries.

    Raises:
        InvalidRulesError: an unknown player, or points that are not a multiple of 50 in ``1..target - 50``.
    """
    if head_start is None:
        return {}
    if not isinstance(head_start, Mapping):
        raise InvalidRulesError(f"a head start is points by player name, got {head_start!r}")
    checked: dict[str, int] = {}
    for name, points in head_start.items():
        if name not in players:
            raise InvalidRulesError(f"a head start for {name!r}, who is not one of {list(players)}")
        if isinstance(points, bool) or not isinstance(points, int) or points % 50 or not 0 <= points < rules.target:
            raise InvalidRulesError(
                f"a head start is a multiple of 50 from 0 to {rules.target - 50}, got {points!r} for {name!r}"
            )
        if points:
            checked[name] = points
    return checked
