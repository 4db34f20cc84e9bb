"""One table's live state: camera throws in, a scored game and advice out.

A :class:`TableSession` is what the live window and the web service's WebSocket
share. It owns the rules, a :class:`farklecam.scoring.game.Game` and a
:class:`~farklecam.vision.settle.detector.SettleDetector`. Frames go in through :meth:`TableSession.on_frame`
and come back as a :class:`TableView` (everything an overlay or a page draws);
players act through :meth:`accept_suggestion`, :meth:`keep`, :meth:`bank`,
:meth:`roll_again` and :meth:`undo`, which become game actions.

The camera only ever *proposes* a roll: a settled throw becomes ``Roll(faces)`` when
the game waits for a throw, every die is readable (else "RETHROW n" until the bad
dice are thrown again) and the count matches the dice to throw. Keeping and banking
stay with the players, so a misread costs one ``undo``, never a score.

A misread die costs one correction instead (:meth:`TableSession.correct`,
:meth:`TableSession.add_die`): the players say what a die of the settled throw really is
(a face, leaning, off the tray, no die at all, or a die the camera missed) and the throw is
scored again. A throw the game already took is changed through its log (a
:class:`~farklecam.scoring.actions.Correct` event, which undo takes back and a replay
repeats); a throw held back (a die to throw again or to tell, too many or too few dice)
is offered to the game again as corrected.

Every accepted action calls ``saver(game_json)`` (a SQLite writer for the service, a
file for the live window), so a crash or an unplugged camera never loses the game.

Each throw the camera scores can keep the picture it was read from (:attr:`TableSession.on_throw`):
the settled frame, made small when the throw settles (:func:`~farklecam.service.throw_picture.make_picture`),
is handed on with the event's number once the game took the throw and saved it, for a disputed
score to be looked at later. A throw entered by hand (:meth:`TableSession.roll`) has none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.errors import FarkleError, IllegalActionError
from farklecam.scoring.actions import Action, Bank, Correct, Keep, PassedRoll, Roll, RollOff, Undo
from farklecam.scoring.advisor import Advice, advise
from farklecam.scoring.events import seqs_in_force
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase, TurnEnd
from farklecam.scoring.pass_advice import PassAdvice, advise_pass
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import SetAside, legal_set_asides
from farklecam.scoring.solver import solve
from farklecam.scoring.winprob import ready
from farklecam.service.corrections import CorrectionHook, DieCorrection, add_die, describe, fix_die
from farklecam.service.throw_picture import ThrowPicture, make_picture
from farklecam.service.usecases.scoring import win_block
from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import Reading
from farklecam.vision.settle.detector import FrameReader, SettleConfig, SettleDetector, SettlePhase, SettleState

__all__ = ["GameSaver", "ScoreLine", "TableSession", "TableView", "ThrowHook"]

#: Receives the game's JSON after every accepted action.
GameSaver = Callable[[str], None]
#: Receives the number of the event a camera throw became, and the picture that throw was read from.
ThrowHook = Callable[[int, ThrowPicture], None]


def _dice(n: int) -> str:
    """``die shows`` or ``dice show``: the end of a sentence about ``n`` unclear dice."""
    return "die shows" if n == 1 else "dice show"


def _faces_text(faces: Sequence[int]) -> str:
    return " ".join(map(str, faces))


#: The game's phases in which a settled throw may still become a throw of the game.
_THROWING = (Phase.AWAITING_ROLL, Phase.CAN_BANK_OR_ROLL, Phase.ROLL_OFF)


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One player's line of the scoreboard."""

    player: str
    score: int
    on_board: bool
    current: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"player": self.player, "score": self.score, "on_board": self.on_board, "current": self.current}


@dataclass(frozen=True, slots=True)
class TableView:
    """Everything to draw for one frame: dice, settle progress, options, advice, scoreboard.

    Attributes:
        frame_index: the frame this view belongs to (-1 before the first frame).
        settle: settle phase of that frame.
        progress: settle progress, 0..1.
        reading: the dice to draw: the settled throw while it rests, else the newest read, or None.
        game_phase: what the game waits for.
        player: whose turn it is.
        turn_total: points set aside this turn.
        dice_to_throw: dice the next throw must have (0 while a keep is awaited).
        roll: the roll being kept from, or None.
        options: every legal keep of ``roll``, best points first.
        advice: the advisor's best keep and next action for ``roll``, or None.
        next_action: "bank" or "roll": what the advisor says to do now (after the keep, if one is due).
        expected: expected value of the turn under that advice.
        selected: faces picked with the 1-6 keys.
        scores: the scoreboard, in seating order.
        last_round: who reached the target and who still plays, or "".
        winners: the winners once the game is over.
        message: the latest news or instruction for the players ("RETHROW 2", an illegal action).
        rethrow: dice of the settled throw that must be thrown again.
        can_undo: whether an action can be taken back.
        roll_off: during the roll-off, the contenders still to throw their one die (the first throws next).
        pass_advice: progressive, a pass on offer: take the passed dice or start fresh, by the chance to win
            from the game's scores (:func:`farklecam.scoring.pass_advice.advise_pass`).
        win: for ``roll``, the keep and bank/roll that maximise the chance to win from the game's scores
            (:func:`farklecam.service.usecases.scoring.win_block`; ``available: false`` until the rules are solved).
        corrected: ``reading`` is the settled throw as the players corrected it, no longer the camera's word.
    """

    frame_index: int
    settle: SettlePhase
    progress: float
    reading: Reading | None
    game_phase: Phase
    player: str | None
    turn_total: int
    dice_to_throw: int
    roll: tuple[int, ...] | None
    options: tuple[SetAside, ...]
    advice: Advice | None
    next_action: str | None
    expected: float | None
    selected: tuple[int, ...]
    scores: tuple[ScoreLine, ...]
    last_round: str
    winners: tuple[str, ...]
    message: str
    rethrow: int
    can_undo: bool
    events: int = field(default=0)
    pass_advice: PassAdvice | None = None
    roll_off: tuple[str, ...] = ()
    win: dict[str, Any] | None = None
    corrected: bool = False

    @property
    def keep_faces(self) -> tuple[int, ...]:
        """Faces to highlight on the dice: the player's selection, else the advised keep."""
        if self.selected:
            return self.selected
        return self.advice.keep if self.advice is not None and self.game_phase is Phase.AWAITING_KEEP else ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form for the WebSocket and tests."""
        return {
            "frame": self.frame_index,
            "settle": self.settle.value,
            "progress": round(self.progress, 3),
            "reading": None if self.reading is None else self.reading.to_dict(),
            "phase": self.game_phase.value,
            "player": self.player,
            "turn_total": self.turn_total,
            "dice_to_throw": self.dice_to_throw,
            "roll": None if self.roll is None else list(self.roll),
            "options": [o.to_dict() for o in self.options],
            "advice": None if self.advice is None else self.advice.to_dict(),
            "next_action": self.next_action,
            "expected": None if self.expected is None else round(self.expected, 1),
            "selected": list(self.selected),
            "scores": [s.to_dict() for s in self.scores],
            "last_round": self.last_round,
            "winners": list(self.winners),
            "message": self.message,
            "rethrow": self.rethrow,
            "can_undo": self.can_undo,
            "events": self.events,
            "pass_advice": None if self.pass_advice is None else self.pass_advice.to_dict(),
            "roll_off": list(self.roll_off),
            "win": self.win,
            "corrected": self.corrected,
        }


class TableSession:
    """A table: a game kept from camera throws and keyboard (or page) commands. Thread-safe.

    Args:
        rules: the rule configuration.
        players: names in seating order (ignored when ``game`` is given).
        reader: reads the dice of a still frame (needed by :meth:`on_frame`).
        settle: thresholds of the settle layer.
        game: a game to resume instead of starting a new one.
        saver: called with the game's JSON after every accepted action.
        first_player: who starts (default the first of ``players``). A ``game`` still in its roll-off (a
            tournament table's, or the live window's with ``--roll-off``) takes each settled single die as
            the next contender's roll-off throw, as the page's "Record throw" does.
        on_correct: called with every correction the table takes (:attr:`on_correct`).
        on_throw: called with the picture of every throw the camera scores (:attr:`on_throw`).

    Attributes:
        on_correct: called with each correction once the table (and the game) took it, so that a
            misread die can be learnt from (the die's place in the camera's reading and the truth,
            :class:`~farklecam.service.corrections.DieCorrection`, with the full frame the throw settled
            on while its dice still lie so; a throw entered without a camera frame has none). A failure
            there is reported in the message; the correction stands.
        on_throw: called with the event's number and the throw's picture (the settled frame, small, with
            the reading as read and what the players said of its dice before it was scored) each time a
            settled camera throw becomes the game's and is saved, so that a disputed score can be looked
            at later. Without it no picture is made. A failure there is reported in the message; the
            throw stands.
    """

    def __init__(
        self,
        rules: Rules,
        players: Sequence[str] = (),
        *,
        reader: FrameReader | None = None,
        settle: SettleConfig | None = None,
        game: Game | None = None,
        saver: GameSaver | None = None,
        first_player: str | None = None,
        on_correct: CorrectionHook | None = None,
        on_throw: ThrowHook | None = None,
    ) -> None:
        if game is None:
            names = tuple(players)
            game = Game(rules, names, first_player=first_player or (names[0] if names else None))
        self.game = game
        self.reader = reader
        self.detector = SettleDetector(settle)
        self.saver = saver
        self.on_correct = on_correct
        self.on_throw = on_throw
        self._lock = threading.RLock()
        self._state = SettleState(SettlePhase.IDLE, frame_index=-1)
        self._source: Reading | None = None  # the settle layer's reading of the held throw (its dice still lie so)
        self._throw: Reading | None = None  # the held throw: that reading, as the players corrected it since
        self._thrown: int | None = None  # the event that made the held throw the game's (None: held back)
        self._fixes: list[tuple[int, Reading]] = []  # each correction's event, and the held throw before it
        self._picture: ThrowPicture | None = None  # the held throw's settled frame, small (made for on_throw)
        self._frame: npt.NDArray[np.uint8] | None = None  # the held throw's settled frame as the camera gave it
        self._told: list[str] = []  # what the players said of the held throw's dice before the game took it
        self._saved = False  # whether the saver kept the last action
        self._force: tuple[int, tuple[int, ...]] = (-1, ())  # the events in force, for a log of so many events
        self._selected: list[int] = []
        self._message = self._roll_off_turn() if game.phase is Phase.ROLL_OFF else "throw the dice"
        self._rolling = False  # roll_again() was pressed: the players said they throw on
        # A throw is only what dice do after the game became ready for it (this start or reopening, the
        # last action): dice that already lay in the tray are shown, never scored, until they move.
        self._moved = False
        solve(self.rules)  # warm the policy cache now, not on the first throw

    @property
    def rules(self) -> Rules:
        """The rules in force now (the game's own, or an organiser's switch since: a ``ChangeRules`` event)."""
        return self.game.rules

    @property
    def expects_throw(self) -> bool:
        """Whether the table waits for dice now (a roll-off die, a new turn, a rethrow, or after :meth:`roll_again`)."""
        phase = self.game.phase
        return phase in (Phase.ROLL_OFF, Phase.AWAITING_ROLL) or (phase is Phase.CAN_BANK_OR_ROLL and self._rolling)

    # ------------------------------------------------------------------ camera
    def on_frame(self, frame: Frame) -> TableView:
        """Feed one camera frame; a newly settled throw is offered to the game."""
        if self.reader is None:
            raise ValueError("this TableSession has no reader: pass reader= or feed throws with throw()")
        with self._lock:
            self.detector.expect(self._counts_expected())
            seen_before = self.detector.gate.thumbnail is not None  # a first frame is "moving" for want of history
            state = self.detector.step(frame, self.reader)
            self._state = state
            self._moved = self._moved or (state.moving and seen_before)
            if state.reading is not self._source:  # the held throw's dice moved: no correction can name them now
                self._frame = None
            if state.wrong_count and state.reading is not self._source:  # held back: say why nothing is scored
                self._message = self._wrong_count(state.dice_seen)
                if self._moved and state.reading is not None:  # thrown: a correction may make it the throw
                    self._hold(state.reading, frame)
            if state.is_new and state.reading is not None and not self._moved:
                self._message = "these dice lay in the tray before: throw them to score"
            elif state.is_new and state.reading is not None:
                self._hold(state.reading, frame)
                self._offer(state.reading)
                if state.reading.tray_set_aside:  # the camera moved since the tray was marked
                    self._message += "; the camera moved since the tray was marked: mark its corners again"
                if state.reading.straight_down_doubted:
                    self._message += "; the camera does not look straight down: mark the tray's corners"
            return self.view()

    @property
    def settle_state(self) -> SettleState:
        """The settle layer's word on the last frame (phase, dice seen and expected, the voted throw)."""
        return self._state

    def _counts_expected(self) -> tuple[int, ...]:
        """How many dice a throw may have now (any number while a keep is awaited or the game is over)."""
        game = self.game
        if game.phase is Phase.ROLL_OFF:
            return (1,)
        if game.is_over or game.phase not in (Phase.AWAITING_ROLL, Phase.CAN_BANK_OR_ROLL):
            return ()
        passed = game.passed
        return (game.dice_to_throw,) + ((passed.dice,) if passed is not None else ())

    def _wrong_count(self, seen: int) -> str:
        if self.game.phase is Phase.ROLL_OFF:
            return f"saw {seen} dice but the roll-off is one die: {self._roll_off_turn()}"
        return f"saw {seen} dice but {self.game.dice_to_throw} must be thrown: take kept dice out"

    def throw(self, reading: Reading) -> TableView:
        """Offer a settled reading to the game directly (as :meth:`on_frame` does when a throw settles)."""
        with self._lock:
            self._hold(reading)
            self._offer(reading)
            return self.view()

    def _hold(self, reading: Reading, frame: Frame | None = None) -> None:
        """A new settled throw: the one corrections now apply to (the last one's are over).

        ``frame``: the frame it settled on, whose picture the throw keeps once the game takes it.
        """
        self._source = self._throw = reading
        self._thrown, self._fixes, self._told = None, [], []
        self._picture = None
        self._frame = None if frame is None else frame.image.copy()  # a source may reuse its buffer for the next
        if frame is not None and self.on_throw is not None:
            try:
                self._picture = make_picture(frame.image, reading)
            except ValueError:  # an empty frame: the throw is scored all the same, without a picture
                self._picture = None

    def _offer(self, reading: Reading) -> None:
        self._throw = reading
        events = len(self.game.events)
        self._score(reading)
        if len(self.game.events) > events:  # the game took it: corrections now go through its log
            self._thrown = self.game.events[-1].seq
            self._keep_picture(self._thrown)

    def _keep_picture(self, seq: int) -> None:
        """Hand the held throw's picture to :attr:`on_throw` as event ``seq``'s; its failure must not undo the throw."""
        if self.on_throw is None or self._picture is None or not self._saved:
            return
        try:
            self.on_throw(seq, self._picture.with_told(self._told))
        except (FarkleError, OSError, ValueError) as exc:  # the throw is scored and saved: only its picture is lost
            self._message += f"; the throw's picture was not kept: {exc}"

    @staticmethod
    def _unreadable(reading: Reading) -> str:
        """Why ``reading`` cannot be scored as it lies (dice to throw again or to tell), or ``""``."""
        if reading.rethrow:
            why = f"RETHROW {reading.rethrow}: throw the leaning or off-tray dice again"
            if reading.unclear:
                why += f", and say what the {reading.unclear} unclear {_dice(reading.unclear)}"
            return why
        if reading.unclear:
            return f"CHECK: say what the {reading.unclear} unclear {_dice(reading.unclear)}"
        return ""

    def _score(self, reading: Reading) -> None:
        """Make ``reading`` the game's throw where it may be one; else say why not."""
        game = self.game
        if game.is_over:
            self._message = "the game is over: undo or start a new game"
            return
        if game.phase is Phase.AWAITING_KEEP:
            self._message = "keep dice from the last roll first (Enter takes the suggestion)"
            return
        if why := self._unreadable(reading):
            self._message = why
            return
        faces = reading.faces
        if game.phase is Phase.ROLL_OFF:
            self._roll_off(faces)
            return
        passed = game.passed
        action: Action
        news = f"{game.current_player} threw {_faces_text(faces)}"
        if passed is not None and len(faces) == passed.dice:
            # The passed dice, built on (six after hot dice too: the same throw as a fresh one, with their total).
            action = PassedRoll(faces)
            news += f" (the {passed.dice} passed dice, on {passed.total})"
        elif len(faces) == game.dice_to_throw:
            action = Roll(faces)
        else:
            self._message = self._wrong_count(len(faces))
            return
        self._apply(action, news)

    def _roll_off(self, faces: tuple[int, ...]) -> None:
        """A settled die in the roll-off: the throw of the next contender who has not thrown (as the page does)."""
        waiting = self.game.legal_actions().roll_off
        if len(faces) != 1 or not waiting:
            self._message = self._wrong_count(len(faces))
            return
        self._apply(RollOff(waiting[0], faces[0]), f"{waiting[0]} threw a {faces[0]} in the roll-off")
        if self.game.phase is Phase.ROLL_OFF:
            self._message += f"; {self._roll_off_turn()}"
        else:
            self._message += f"; {self.game.current_player} throws first"

    def _roll_off_turn(self) -> str:
        """Who throws next in the roll-off (a tie sends only the tied players round again)."""
        waiting = self.game.legal_actions().roll_off
        return f"roll-off: {waiting[0]} throws one die (the highest starts)" if waiting else "the roll-off is over"

    # ------------------------------------------------------------------ commands
    def accept_suggestion(self) -> TableView:
        """Do what the advisor says: keep its dice, or bank / roll on when the keep is done."""
        with self._lock:
            view = self.view()
            if self.game.phase is Phase.AWAITING_KEEP and view.advice is not None and view.advice.keep:
                return self.keep(view.advice.keep)
            if view.next_action == "bank":
                return self.bank()
            return self.roll_again()

    def toggle(self, face: int) -> TableView:
        """Pick one more die of ``face`` for the keep; past the number in the roll, unpick them all."""
        with self._lock:
            roll = self.game.current_roll or ()
            if self.game.phase is not Phase.AWAITING_KEEP or face not in roll:
                self._message = f"no {face} to keep" if 1 <= face <= 6 else f"not a face: {face}"
            elif self._selected.count(face) < roll.count(face):
                self._selected.append(face)
            else:
                self._selected = [f for f in self._selected if f != face]
            return self.view()

    def keep(self, faces: Sequence[int] | None = None) -> TableView:
        """Set aside ``faces`` (default: the picked dice).

        Raises:
            IllegalActionError: nothing picked, or a keep the rules forbid.
        """
        with self._lock:
            chosen = tuple(self._selected if faces is None else faces)
            if not chosen:
                raise IllegalActionError("pick dice to keep first (keys 1-6), or press Enter for the suggestion")
            self._apply(Keep(chosen), f"kept {' '.join(map(str, sorted(chosen)))}")
            return self.view()

    def bank(self) -> TableView:
        """Bank the turn total.

        Raises:
            IllegalActionError: below the minimum, or dice still to keep.
        """
        with self._lock:
            who, total = self.game.current_player, self.game.turn_total
            self._apply(Bank(), f"{who} banked {total}")
            return self.view()

    def confirm_face(self, index: int, face: int) -> TableView:
        """The player says what the settled throw's unread die ``index`` shows; the throw is offered again.

        The one-click fix for a die the camera could not tell (``settle.uncertain`` lists them):
        once no die is left to rethrow, the throw is scored as if the camera had read it.

        Raises:
            IllegalActionError: no settled throw waiting, or a die or face it does not have.
        """
        with self._lock:
            held = self.settled_throw
            if held is None or self.game.phase not in _THROWING:
                raise IllegalActionError("no settled throw is waiting for its dice to be told")
            try:
                told = held.with_face(index, face)
            except ValueError as exc:
                raise IllegalActionError(str(exc)) from exc
            self._take(told, DieCorrection("face", index, face, _box(held, index), held, self._frame), say=False)
            return self.view()

    def correct(self, index: int, fix: str, face: int | None = None) -> TableView:
        """The players correct die ``index`` of the settled throw; the throw is scored again as corrected.

        Any die may be wrong, not only one the camera could not tell: it shows ``face``
        (``fix="face"``), it leans (``"cocked"``), it lies off the tray (``"off-tray"``), or it is no
        die at all (``"not-a-die"``: it leaves the throw, and the dice after it are numbered one less).
        A throw the game took is corrected through the game's log; a throw held back is offered again.

        Args:
            index: the die, counted from 0 in the throw as drawn (its tag says ``#index+1``).
            fix: ``"face"``, ``"cocked"``, ``"off-tray"`` or ``"not-a-die"``.
            face: with ``"face"``, what the die shows.

        Raises:
            IllegalActionError: no settled throw to correct, a die or face it does not have, a correction
                that changes nothing, or one the game refuses (dice were set aside from the throw since).
        """
        with self._lock:
            held = self._correctable()
            try:
                told = fix_die(held, index, fix, face)
            except ValueError as exc:
                raise IllegalActionError(str(exc)) from exc
            self._take(told, DieCorrection(fix, index, face, _box(held, index), held, self._frame))
            return self.view()

    def add_die(self, x: float, y: float, face: int) -> TableView:
        """The players add a die the camera missed, at ``(x, y)`` in frame pixels, showing ``face``.

        The die comes last in the throw (its number is one more than the last); the throw is scored
        again as :meth:`correct` scores it.

        Raises:
            IllegalActionError: no settled throw to correct, a face outside 1-6, a point outside the
                picture or on a die already there, or a correction the game refuses.
        """
        with self._lock:
            held = self._correctable()
            try:
                told = add_die(held, x, y, face)
            except ValueError as exc:
                raise IllegalActionError(str(exc)) from exc
            self._take(told, DieCorrection("add", None, face, _box(told, len(told) - 1), held, self._frame))
            return self.view()

    @property
    def settled_throw(self) -> Reading | None:
        """The settled throw a correction applies to now, as corrected so far; None while there is none."""
        with self._lock:
            self._follow_log()
            if self._throw is None or (self.reader is not None and self._state.reading is not self._source):
                return None
            return self._throw

    def _correctable(self) -> Reading:
        """The held throw, while its dice still lie as the camera settled on them.

        Raises:
            IllegalActionError: no settled throw (none yet, the dice moved since, or they lay in the tray
                before the game was ready for them: those are no throw to correct).
        """
        held = self.settled_throw
        if held is None:
            raise IllegalActionError(
                "no settled throw to correct: a die is corrected once a throw has come to rest (dice that lay in "
                "the tray before the last action are no throw)"
            )
        return held

    def _take(self, told: Reading, correction: DieCorrection, *, say: bool = True) -> None:
        """Score the throw again as ``told``: through the game's log if it took the throw, else by offering it.

        ``say``: lead the message with the correction ("die #3 is a 5: ..."); a die only told needs no word.
        """
        said = describe(correction.fix, correction.index, correction.face)
        opened = self.game.open_throw
        taken = self._thrown is not None and self._thrown in self._seqs_in_force()  # the game took this throw
        if taken and opened is not None and self._recorded():
            ready = not self._unreadable(told) and len(told.faces) == opened.dice
            roll = told.faces if ready else None
            number = None if correction.index is None else correction.index + 1
            if roll is not None:
                news = f"{said}: {opened.player} threw {_faces_text(roll)}"
            else:
                news = f"{said}: the throw is taken back; {self._unreadable(told) or self._miscount(told, opened.dice)}"
            before = self._throw
            assert before is not None
            self._apply(Correct(number, correction.fix, correction.face, roll), news, turns=len(opened.before.turns))
            self._fixes.append((self.game.events[-1].seq, before))
            self._throw, self._rolling = told, roll is None  # taken back: the table waits for the throw again
        elif taken:
            raise IllegalActionError(
                "the game has moved on from this throw (dice were set aside from it): undo back to it to correct it"
            )
        elif self.game.phase in _THROWING:
            self._told.append(said)  # before the game took the throw: its picture keeps what was said
            self._offer(told)
            if say:
                self._message = f"{said}: {self._message}"
        else:
            raise IllegalActionError(f"this throw is not the game's to correct now: {self.game.state.describe()}")
        self._hand_on(correction)

    @staticmethod
    def _miscount(reading: Reading, dice: int) -> str:
        """Why a corrected throw of the wrong number of dice is no throw, and what to do."""
        seen, were = len(reading), "was" if dice == 1 else "were"
        todo = "add the die the camera missed" if seen < dice else "mark what is not a die"
        return f"{seen} dice but {dice} {were} thrown: {todo}, or throw again"

    def _recorded(self) -> bool:
        """Whether the held throw is the game's open throw: recorded from it, and only corrected since."""
        events = self.game.events
        for seq in reversed(self._seqs_in_force()):
            if not isinstance(events[seq - 1].action, Correct):
                return seq == self._thrown
        return False

    def _seqs_in_force(self) -> tuple[int, ...]:
        """The events in force (their numbers), worked out again only when the log has grown."""
        events = self.game.events
        if self._force[0] != len(events):
            self._force = (len(events), tuple(seqs_in_force(events)))
        return self._force[1]

    def _follow_log(self) -> None:
        """Take back here the corrections an undo took back from the game: the throw shows as it was then."""
        if not self._fixes:
            return
        live = set(self._seqs_in_force())
        while self._fixes and self._fixes[-1][0] not in live:
            self._throw = self._fixes.pop()[1]

    def _hand_on(self, correction: DieCorrection) -> None:
        """Give a correction the table took to :attr:`on_correct`; its failure must not undo the correction."""
        if self.on_correct is None:
            return
        try:
            self.on_correct(correction)
        except Exception as exc:  # whatever a learner raises, the players' correction stands and is saved
            self._message += f"; the correction was not handed on: {exc}"

    def roll_again(self) -> TableView:
        """Throw on: nothing changes in the game until the dice settle; this only says how many to throw.

        Raises:
            IllegalActionError: dice must be kept first, or the game is over.
        """
        with self._lock:
            game = self.game
            if game.phase not in (Phase.AWAITING_ROLL, Phase.CAN_BANK_OR_ROLL):
                raise IllegalActionError(f"cannot throw now: {game.state.describe()}")
            hot = " (hot dice!)" if game.hot_dice else ""
            self._rolling = True
            self._message = f"{game.current_player}: throw {game.dice_to_throw} dice{hot}"
            return self.view()

    def roll(self, faces: Sequence[int]) -> TableView:
        """Enter a throw by hand (the camera cannot see it, or misread it after an undo).

        Raises:
            IllegalActionError: not the time to throw, or the wrong number of dice.
        """
        with self._lock:
            self._apply(Roll(tuple(faces)), f"{self.game.current_player} threw {_faces_text(sorted(faces))}")
            return self.view()

    def undo(self) -> TableView:
        """Take back the last action (a misread roll, a wrong keep, a bank).

        Raises:
            IllegalActionError: nothing to undo.
        """
        with self._lock:
            self._apply(Undo(), "undone")
            return self.view()

    def notify(self, text: str) -> TableView:
        """Show ``text`` as the message (an error, a lost camera) until the next news."""
        with self._lock:
            self._message = text
            return self.view()

    def _apply(self, action: Action, news: str, *, turns: int | None = None) -> None:
        """Apply ``action`` to the game, say ``news`` and save the game.

        ``turns``: the turns finished before the throw the action makes (a correction plays an earlier
        throw again), so that a farkle it causes is announced.
        """
        turns = len(self.game.turns) if turns is None else turns
        self.game.apply(action)
        self._selected, self._rolling, self._moved = [], False, False
        ended = self.game.turns[turns:]
        if isinstance(action, Roll | PassedRoll | Correct) and ended and ended[-1].end is TurnEnd.FARKLED:
            news = f"FARKLE! {news}; {self.game.current_player or 'nobody'} is next"
        self._message, self._saved = news, True
        if self.saver is not None:
            try:
                self.saver(self.game.to_json())
            except (FarkleError, OSError) as exc:  # keep playing; the players must know the game is not saved
                self._message, self._saved = f"{news}; NOT SAVED: {exc}", False

    # ------------------------------------------------------------------ view
    def view(self) -> TableView:
        """The current view (what :meth:`on_frame` returns), without a new frame."""
        with self._lock:
            self._follow_log()
            game, state = self.game, self.game.state
            roll = game.current_roll if game.phase is Phase.AWAITING_KEEP else None
            options = legal_set_asides(roll, self.rules) if roll else ()
            advice, next_action, expected = self._advice(roll)
            scores = tuple(
                ScoreLine(p, game.scores[p], game.on_board[p], p == game.current_player) for p in game.players
            )
            last = game.last_round
            last_round = ""
            if last is not None:
                last_round = f"last round: {last.trigger} reached the target; to play: {', '.join(last.remaining)}"
            settle = self._state
            held = (SettlePhase.SETTLED, SettlePhase.LATCHED, SettlePhase.WRONG_COUNT)
            shown = settle.reading if settle.phase in held else settle.latest
            corrected = shown is not None and shown is self._source and self._throw is not shown
            if corrected:
                shown = self._throw  # the settled throw as the players corrected it
            return TableView(
                frame_index=settle.frame_index,
                settle=settle.phase,
                progress=settle.progress,
                reading=None if settle.moving else shown,
                game_phase=game.phase,
                player=game.current_player,
                turn_total=game.turn_total,
                dice_to_throw=state.dice_to_throw,
                roll=roll,
                options=options,
                advice=advice,
                next_action=next_action,
                expected=expected,
                selected=tuple(sorted(self._selected)),
                scores=scores,
                last_round=last_round,
                winners=game.winners,
                message=self._message,
                rethrow=0 if self._throw is None else self._throw.rethrow,
                can_undo=bool(game.actions_in_force),
                events=len(game.events),
                pass_advice=self._pass_advice(),
                roll_off=game.legal_actions().roll_off if game.phase is Phase.ROLL_OFF else (),
                win=self._win(roll),
                corrected=corrected,
            )

    def _win(self, roll: tuple[int, ...] | None) -> dict[str, Any] | None:
        """Advice by the chance to win for ``roll``, from the scores in turn order (None when not a question)."""
        game = self.game
        player, last = game.current_player, game.last_round
        if not roll or player is None or len(game.players) < 2 or (last is not None and last.extra_rounds > 0):
            return None
        order = self._turn_order(player)
        try:
            streaks = game.farkle_streaks
            return win_block(
                roll,
                self.rules,
                [game.scores[p] for p in order],
                turn_total=game.turn_total,
                streaks=[streaks[p] for p in order],
                throws_left=game.single_die_throws_left if len(roll) == 1 else None,
                solve=False,
            )
        except FarkleError:  # a score past the target, say: no win advice rather than no table
            return None

    def _turn_order(self, player: str) -> tuple[str, ...]:
        """The players in turn order from ``player`` (the order the win advice reads scores in)."""
        players = tuple(self.game.players)
        seat = players.index(player)
        return players[seat:] + players[:seat]

    def _pass_advice(self) -> PassAdvice | None:
        """Take the pass or start fresh, while a pass is on offer and nothing is thrown yet.

        By the chance to win from the game's scores once the rules' win table is solved, by points until then.
        """
        game = self.game
        passed, player = game.passed, game.current_player
        if passed is None or player is None or game.phase is not Phase.AWAITING_ROLL or game.current_roll is not None:
            return None
        order = self._turn_order(player)
        scores = [game.scores[p] for p in order]
        try:
            if ready(self.rules, scores):
                streaks = [game.farkle_streaks[p] for p in order]
                return advise_pass(self.rules, passed.total, passed.dice, scores=scores, streaks=streaks)
            return advise_pass(self.rules, passed.total, passed.dice, on_board=game.on_board[player])
        except FarkleError:  # a state the solver does not model: no advice rather than no table
            return None

    def _advice(self, roll: tuple[int, ...] | None) -> tuple[Advice | None, str | None, float | None]:
        """The advisor's word for now: the keep for ``roll``, or bank-or-roll after a keep."""
        game = self.game
        player = game.current_player
        if player is None:
            return None, None, None
        on_board, streak = game.on_board[player], game.farkle_streaks[player]
        try:
            if roll:
                throws = game.single_die_throws_left if len(roll) == 1 else None
                tip = advise(
                    roll, self.rules, turn_total=game.turn_total, on_board=on_board, farkle_streak=streak,
                    throws_left=throws,
                )  # fmt: skip
                return tip, tip.action, tip.expected
            if game.phase is Phase.CAN_BANK_OR_ROLL:
                left = 0 if game.hot_dice else game.dice_to_throw
                action, value, _ = solve(self.rules).decide(
                    game.turn_total, left, on_board=on_board, farkle_streak=streak
                )
                return None, action, value
        except FarkleError:  # a state the solver does not model: no advice rather than no table
            return None, None, None
        return None, None, None


def _box(reading: Reading, index: int) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = (float(v) for v in reading.xyxy[index])
    return (x1, y1, x2, y2)
