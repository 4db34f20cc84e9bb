"""``/ws/table/{game_id}``: the page streams camera frames, the server answers each with what it sees.

Protocol (one JSON answer per binary message, so the page keeps one frame in
flight and never floods a slow server). A server with a table code wants it as
``?code=`` in the URL; without it the socket gets one fatal error and closes with
4401, and a foreign Host or Origin never opens it (:mod:`farklecam.service.security`):

* page -> server, binary: one JPEG (or PNG) frame.
* page -> server, text: ``{"type": "ping"}`` (answered ``{"type": "pong"}``),
  ``{"type": "roll_again"}`` (the players throw on: the table says how many dice),
  ``{"type": "face", "index", "face"}`` (the player tells an unclear die of the settled throw:
  ``settle.uncertain`` lists them; answered like ``roll_again``),
  ``{"type": "correct", "index", "fix", "face"}`` (the players correct die ``index``, counted from 0 in the
  frames' ``reading``, of the settled throw: ``fix`` is ``"face"`` with the ``face`` it shows, ``"cocked"``,
  ``"off-tray"`` or ``"not-a-die"``) or ``{"type": "correct", "fix": "add", "face", "at": [x, y]}`` (a die
  the camera missed, at ``at`` in frame pixels), answered ``{"type": "message", "message", "events"}``
  (:meth:`~farklecam.service.table.TableSession.correct`; a throw the game took is corrected through its log);
  a refused ``face`` or ``correct`` is ``{"type": "error", "detail", "command"}``, or
  ``{"type": "tray", "corners": [[x, y] x 4] | null}``: the tray floor's corners in
  the pixels of the frames sent (the page's calibration), or null to find the tray
  in each frame again; answered ``{"type": "tray", "corners", "message"}``. With
  corners the cocked test runs under their vertical (``farklecam.vision.pose.upright``); without, under the
  vertical learned from this stream's dice (``vertical``: ``"tray"``, ``"learned"`` or ``"searching"``;
  ``"straight_down"`` for a camera said to look straight down, ``"tilted"`` while its
  frames' dice say otherwise). ``{"type": "straight_down", "on": true | false}`` says
  whether this table's camera looks straight down (a server started with
  ``--straight-down`` starts every table on); answered ``{"type": "straight_down", "on", "message"}``.
  ``{"type": "profile", "name": "kitchen" | null}`` names the profile (``GET /api/profiles``) this table reads
  with and its corrections teach, over the server's ``--profile`` (null: none); answered
  ``{"type": "profile", "name", "message"}``, or ``{"type": "error", "detail", "command": "profile"}`` for a
  name that is invalid or unknown (the table keeps its profile).
* server -> page: ``{"type": "frame", "seq", "ms", "image_size", "tray", "vertical", "straight_down", "reading",
  "settle", "throw", "score", "advice", "next_action", "expected", "message", "rethrow", "game", "events",
  "corrected"}`` (``corrected``: ``reading`` is the settled throw as the players corrected it), or
  ``{"type": "error", "detail"}`` for a frame or message it could not use; the
  connection stays open after an error (except for an unknown game).

With a game, frames go through the game's :class:`~farklecam.service.table.TableSession`
(motion gate, settle vote, latch): a settled throw of the right number of dice
becomes the game's roll, committed like a REST action, and keeps the frame it settled
on, small, with the reading as read (``GET /api/games/{id}/pictures``). ``game_id`` ``-``
watches the dice without a game (settle detection and advice only). Frames are
decoded and read in a worker thread, so a camera never blocks the event loop.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, TypeGuard

import anyio
import numpy as np
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from farklecam.errors import FarkleError, ProfileError, StorageError
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.service.deps import GamesDep, LazyReader, ReaderSlotDep, SettingsDep, Tables, TablesDep
from farklecam.service.errors import GameNotFoundError, UnsupportedMediaError, printable
from farklecam.service.live_tables import LiveTables
from farklecam.service.read_gate import urgency
from farklecam.service.storage import Games
from farklecam.service.table import TableSession, TableView
from farklecam.service.usecases.games import state_public
from farklecam.service.usecases.inputs import tray_corners
from farklecam.service.usecases.report import build_report
from farklecam.vision.camera.sources import Frame
from farklecam.vision.images import image_format
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.settle.detector import SettleDetector, SettlePhase, SettleState

__all__ = ["NO_GAME", "TableStream", "router"]

router = APIRouter(tags=["table"])
log = logging.getLogger("farklecam.service")

#: ``game_id`` meaning "no game": read, settle and advise only.
NO_GAME = "-"

#: When a frame arrived, in seconds: the settle rule's clock (dice rest for ``settle_seconds`` of it).
#: Looked up per frame, so a test can stream frames at a rate of its choosing.
clock: Callable[[], float] = time.monotonic

_LABELS = {
    SettlePhase.MOVING: "Dice moving",
    SettlePhase.IDLE: "Waiting for dice",
    SettlePhase.SETTLING: "Settling",
    SettlePhase.SETTLED: "Settled",
    SettlePhase.LATCHED: "Settled",
    SettlePhase.WRONG_COUNT: "Wrong number of dice",
}


def _settle(state: SettleState, corrected: Reading | None = None, *, tellable: bool = True) -> dict[str, Any]:
    """The settle part of a frame's answer: phase, label, dice seen and expected, dice to confirm.

    ``uncertain`` lists the settled throw's dice a player should confirm (index, box,
    likeliest face, the faces read), for the page's one-click fix. ``corrected`` is the
    settled throw as the players corrected it: its dice are the ones to confirm then, and the
    camera's count no longer speaks for it. ``tellable`` false: the dice at rest are no throw a
    player can tell (they lay in the tray before the game was ready for them), so none is listed.
    """
    phase, label = state.phase, _LABELS[state.phase]
    if corrected is not None and phase in _SETTLED:
        label = "Settled, corrected by the players"
    elif phase is SettlePhase.SETTLING:
        label += f" {state.progress:.0%}"
    elif phase is SettlePhase.WRONG_COUNT:
        wanted = " or ".join(map(str, state.dice_expected))
        label = f"{state.dice_seen} dice in the tray but {wanted} to throw: take the kept dice out"
    return {
        "phase": phase.value,
        "state": phase.value,
        "progress": round(state.progress, 3),
        "label": label,
        "dice_seen": state.dice_seen if corrected is None else len(corrected),
        "dice_expected": list(state.dice_expected),
        "uncertain": _uncertain(corrected or state.reading) if phase in _SETTLED and tellable else [],
    }


_SETTLED = (SettlePhase.SETTLED, SettlePhase.LATCHED, SettlePhase.WRONG_COUNT)


def _uncertain(reading: Reading | None) -> list[dict[str, Any]]:
    """The voted reading's uncertain dice, with what a one-click fix offers (the likeliest face first)."""
    if reading is None:
        return []
    seen, why = reading.data.get("faces_seen"), reading.data.get("ambiguity")
    return [
        {
            "index": int(i),
            "box": [round(float(v), 1) for v in reading.xyxy[i]],
            "face": int(reading.face[i]) or None,
            "faces_seen": "" if seen is None else str(seen[i]),
            "ambiguity": "" if why is None else str(why[i]),
        }
        for i in np.flatnonzero(reading.status == DieStatus.UNCERTAIN)
    ]


def _small_int(value: object) -> TypeGuard[int]:
    """A JSON integer of sensible size (a die's index or a face; the callee checks the range)."""
    return isinstance(value, int) and not isinstance(value, bool) and -1000 <= value <= 1000


def _point(value: object) -> tuple[float, float] | None:
    """``[x, y]``: two finite JSON numbers of sensible size (a point in frame pixels), else None."""
    if not isinstance(value, list) or len(value) != 2:
        return None
    if any(isinstance(v, bool) or not isinstance(v, int | float) or not abs(v) <= 1e6 for v in value):
        return None  # "not <=" also refuses NaN
    return float(value[0]), float(value[1])


#: How each correction is written on the socket, for the error that names them.
_CORRECT_FORMS = (
    'correct a die as {"type": "correct", "index": 2, "fix": "face", "face": 5} (fix "face", "cocked", "off-tray" '
    'or "not-a-die"), or add a missed one as {"type": "correct", "fix": "add", "face": 4, "at": [x, y]}'
)


class TableStream:
    """One WebSocket's work: turn a frame into the answer the page draws.

    Args:
        reader: reads a frame's dice (loads the models on first use).
        games: the games.
        tables: the live tables (one session per game).
        game_id: the table's game, or None to watch without a game.
        default_rules: rules when there is no game.
        max_frame_bytes: larger frames are refused with an error message.
    """

    def __init__(
        self,
        reader: LazyReader,
        games: Games,
        tables: Tables,
        game_id: str | None,
        default_rules: Rules,
        max_frame_bytes: int,
    ) -> None:
        self.reader, self.games, self.tables, self.game_id = reader, games, tables, game_id
        self.default_rules = default_rules
        self.max_frame_bytes = max_frame_bytes
        self.detector = SettleDetector()  # used without a game; a game's session has its own
        self.seq = 0
        self.started = clock()

    def on_frame(self, data: bytes) -> dict[str, Any]:
        """Decode, settle, read, score and advise one frame (runs in a worker thread).

        The frame is decoded inside the reads gate and its pixels are held against the server's
        budget until its answer is built (:meth:`farklecam.service.deps.ReaderSlot.decoded`), so
        many tables sending large frames at once wait their turn instead of filling memory.

        Raises:
            FarkleError: a frame that is too large, not a picture, or corrupt; models missing.
        """
        started = time.perf_counter()
        self.seq += 1
        if len(data) > self.max_frame_bytes:
            raise UnsupportedMediaError(f"frame too large ({len(data)} bytes; the limit is {self.max_frame_bytes})")
        if image_format(data[:16]) is None:
            raise UnsupportedMediaError("a frame must be a JPEG or PNG picture")
        with urgency(self._settling()), self.reader.slot.decoded(data, f"frame {self.seq}") as image:
            frame = Frame(image, self.seq, clock() - self.started)
            answer = self._with_game(frame) if self.game_id is not None else self._without_game(frame)
            height, width = image.shape[:2]
            del frame, image  # the settle detector keeps thumbnails only: the pixels go as the budget gets them back
        answer.update(
            type="frame",
            seq=self.seq,
            image_size=[width, height],
            tray=self.reader.tray,
            vertical=self.reader.vertical,
            straight_down=self.reader.straight_down,
        )
        answer["ms"] = round((time.perf_counter() - started) * 1000, 1)
        return answer

    def _settling(self) -> bool:
        """Whether this table waits on reads to report a throw: its frame is decoded and read first."""
        if self.game_id is None:
            return self.detector.settling
        session = self.tables.existing(self.game_id)
        return session is None or session.detector.settling

    def _without_game(self, frame: Frame) -> dict[str, Any]:
        state = self.detector.step(frame, self.reader)
        shown = _shown(state)
        result = _report(shown, self.default_rules, frame)
        throw = state.reading if state.phase in (SettlePhase.SETTLED, SettlePhase.LATCHED) else None
        return {
            **result,
            "settle": _settle(state),
            "throw": None if throw is None else throw.to_dict(),
            "next_action": result["advice"]["action"] if result["advice"] else None,
            "expected": result["advice"]["expected"] if result["advice"] else None,
            "message": "",
            "rethrow": 0 if shown is None else shown.rethrow,
            "game": None,
            "events": 0,
        }

    def _with_game(self, frame: Frame) -> dict[str, Any]:
        assert self.game_id is not None
        with self.games.lock(self.game_id):
            session = self.tables.session(self.game_id, self.reader)
            view = session.on_frame(frame)
            game = session.game
            state = game.state
            seat = state.index(state.current) if state.current is not None else None
            turn_total = state.turn_total if seat is not None else 0
            on_board = state.on_board[seat] if seat is not None else True
            shown = view.reading
            result = _report(shown, game.rules, frame, turn_total=turn_total, on_board=on_board)
            if view.roll is not None:  # a roll waits for a keep: its options and advice come first
                result["score"] = {
                    "roll": list(view.roll),
                    "farkle": not view.options,
                    "options": [o.to_dict() for o in view.options],
                }
                result["advice"] = None if view.advice is None else view.advice.to_dict()
            settled = view.settle in (SettlePhase.SETTLED, SettlePhase.LATCHED) or view.corrected
            return {
                **result,
                "settle": _settle(
                    session.settle_state, shown if view.corrected else None, tellable=session.settled_throw is not None
                ),
                "throw": shown.to_dict() if settled and shown is not None else None,
                "next_action": view.next_action,
                "expected": view.expected,
                "message": view.message,
                "rethrow": view.rethrow,
                "game": state_public(game),
                "events": view.events,
                "pass_advice": None if view.pass_advice is None else view.pass_advice.to_dict(),
                "win": view.win,
                "corrected": view.corrected,
            }

    def command(self, text: str) -> dict[str, Any]:
        """The answer to a text message."""
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            return {"type": "error", "detail": 'text messages must be JSON, like {"type": "ping"}'}
        except RecursionError:  # "[[[[..." deeper than the parser goes: a bad message, not a server fault
            log.warning("table %s: refused a text message nested too deeply", self.game_id or NO_GAME)
            return {"type": "error", "detail": 'text messages must be JSON of a few levels, like {"type": "ping"}'}
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "ping":
            return {"type": "pong"}
        if kind == "tray":
            return self.set_tray(message.get("corners"))
        if kind == "straight_down":
            return self.set_straight_down(message.get("on"))
        if kind == "profile":
            return self.set_profile(message.get("name"))
        if kind == "roll_again" and self.game_id is not None:
            with self.games.lock(self.game_id):
                view = self.tables.session(self.game_id, self.reader).roll_again()
            return {"type": "message", "message": view.message}
        if kind == "face" and self.game_id is not None:
            index, face = message.get("index"), message.get("face")
            if not (_small_int(index) and _small_int(face)):
                return {"type": "error", "detail": 'tell a die as {"type": "face", "index": 0, "face": 5}'}
            return self._tell(kind, lambda session: session.confirm_face(index, face))
        if kind == "correct":
            return self.correct(message)
        return {
            "type": "error",
            "detail": f"unknown message type {kind!r}; send frames as binary, or ping, roll_again, face, correct, "
            "tray, straight_down or profile",
        }

    def correct(self, message: dict[str, Any]) -> dict[str, Any]:
        """The players correct a die of the settled throw, or add one the camera missed (see the module docstring)."""
        if self.game_id is None:
            return {"type": "error", "detail": "a die is corrected in a game: start or open one", "command": "correct"}
        fix, face = message.get("fix"), message.get("face")
        if fix == "add":
            at = _point(message.get("at"))
            if at is None or not _small_int(face):
                return {"type": "error", "detail": _CORRECT_FORMS, "command": "correct"}
            return self._tell("correct", lambda session: session.add_die(at[0], at[1], face))
        index = message.get("index")
        if fix not in ("face", "cocked", "off-tray", "not-a-die") or not _small_int(index):
            return {"type": "error", "detail": _CORRECT_FORMS, "command": "correct"}
        if not (face is None or _small_int(face)):
            return {"type": "error", "detail": _CORRECT_FORMS, "command": "correct"}
        return self._tell("correct", lambda session: session.correct(index, fix, face))

    def _tell(self, command: str, act: Callable[[TableSession], TableView]) -> dict[str, Any]:
        """Run a player's word on the settled throw under the game's lock; a refusal names the command."""
        assert self.game_id is not None
        try:
            with self.games.lock(self.game_id):
                view = act(self.tables.session(self.game_id, self.reader))
        except FarkleError as exc:
            return {"type": "error", "detail": str(exc), "error": type(exc).__name__, "command": command}
        return {"type": "message", "message": view.message, "events": view.events}

    def set_tray(self, corners: object) -> dict[str, Any]:
        """Calibrate this table's tray (four corners in frame pixels), or forget it with None.

        Raises:
            ImageError: corners that are not four finite ``[x, y]`` pairs enclosing an area.
        """
        self.reader.tray = None if corners is None else tray_corners(corners)
        text = (
            "Tray corners set: leaning dice are now checked against the camera's vertical."
            if self.reader.tray is not None
            else "Tray corners cleared: the tray is found in each frame (leaning dice are harder to tell)."
        )
        return {"type": "tray", "corners": self.reader.tray, "message": text}

    def set_straight_down(self, on: object) -> dict[str, Any]:
        """Say whether this table's camera looks straight down (its vertical without marked corners)."""
        if not isinstance(on, bool):
            return {"type": "error", "detail": 'straight_down takes "on": true or false'}
        self.reader.straight_down = on
        text = (
            "Camera looks straight down: leaning dice are judged under the picture's centre (marked corners still "
            "come first)."
            if on
            else "Camera angle unknown: the vertical is learned from the dice (marked corners still come first)."
        )
        return {"type": "straight_down", "on": on, "message": text}

    def set_profile(self, name: object) -> dict[str, Any]:
        """Read and teach with the profile ``name`` at this table (None: none); an unknown one changes nothing."""
        if not (name is None or isinstance(name, str)):
            return {"type": "error", "detail": 'profile takes "name": a profile\'s name or null', "command": "profile"}
        try:
            self.reader.choose_profile(name)
        except ProfileError as exc:
            return {"type": "error", "detail": str(exc), "command": "profile"}
        text = (
            f"Profile {name}: this table's dice are read with it, and the dice corrected here teach it."
            if name is not None
            else "No profile: the dice are read by the classifier alone, and corrections teach no profile."
        )
        return {"type": "profile", "name": name, "message": text}


def _shown(state: SettleState) -> Reading | None:
    """The dice to draw: the settled throw while it rests, else the newest read (none while moving)."""
    if state.moving:
        return None
    return state.reading if state.phase in _SETTLED else state.latest


def _report(
    reading: Reading | None, rules: Rules, frame: Frame, *, turn_total: int = 0, on_board: bool = True
) -> dict[str, Any]:
    """The frame's fields of the one report (:func:`farklecam.service.usecases.report.build_report`), as JSON."""
    height, width = frame.image.shape[:2]
    report = build_report(reading, rules, turn_total=turn_total, on_board=on_board, image_size=(width, height))
    return report.model_dump(mode="json")


@router.websocket("/ws/table/{game_id}")
async def table(
    websocket: WebSocket,
    game_id: str,
    slot: ReaderSlotDep,
    games: GamesDep,
    tables: TablesDep,
    settings: SettingsDep,
) -> None:
    """Stream frames in, readings, the settled throw and advice out (see the module docstring)."""
    await websocket.accept()
    wanted = None if game_id == NO_GAME else game_id
    try:
        if wanted is not None:
            await run_in_threadpool(games.get, wanted)
    except FarkleError as exc:
        await websocket.send_json({"type": "error", "detail": str(exc), "fatal": True})
        await websocket.close(code=4404 if isinstance(exc, GameNotFoundError) else 4400)
        return
    rules = get_rules(settings.rules)
    reader = LazyReader(slot, straight_down=settings.straight_down)
    stream = TableStream(reader, games, tables, wanted, rules, settings.max_frame_bytes)
    failures = 0
    live = _LiveStream(tables.live, wanted)
    if wanted is not None:
        tables.stream_opened(wanted)
    try:
        await run_in_threadpool(live.claim)
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            try:
                if message.get("bytes") is not None:  # in the reader's threads: a frame may wait for the budget
                    answer = await anyio.to_thread.run_sync(
                        live.on_frame, stream, message["bytes"], limiter=slot.read_threads
                    )
                else:
                    answer = await run_in_threadpool(stream.command, message.get("text") or "")
            except FarkleError as exc:
                answer = {"type": "error", "detail": str(exc), "error": type(exc).__name__}
            except Exception as exc:  # a broken frame must not end the table's stream
                failures += 1
                if failures == 1:  # the first with its traceback; then one line each, so a client cannot flood the log
                    log.exception("table %s: message %d failed", wanted or NO_GAME, stream.seq)
                else:
                    log.error("table %s: message %d failed: %s: %s", wanted or NO_GAME, stream.seq,
                              type(exc).__name__, str(exc)[:200])  # fmt: skip
                answer = {"type": "error", "detail": "the server could not process this message"}
            await websocket.send_text(_json_text(answer))
    except WebSocketDisconnect:
        return
    finally:
        if wanted is not None:
            tables.stream_closed(wanted)
        await run_in_threadpool(live.release)


class _LiveStream:
    """Says in the database which server a game's camera streams to, while it streams (a game's stream only).

    A database that cannot take the row costs the organiser page its "camera on" line, never the table's stream:
    the failure is logged once per stream.
    """

    def __init__(self, live: LiveTables | None, game_id: str | None) -> None:
        self.live, self.game_id, self._failed = live, game_id, False

    def _do(self, step: Callable[[LiveTables, str], None]) -> None:
        if self.live is None or self.game_id is None or self._failed:
            return
        try:
            step(self.live, self.game_id)
        except StorageError as exc:
            self._failed = True
            log.warning("table %s: where its camera streams is not kept: %s", self.game_id, exc)

    def claim(self) -> None:
        self._do(LiveTables.claim)

    def on_frame(self, stream: TableStream, data: bytes) -> dict[str, Any]:
        answer = stream.on_frame(data)
        self._do(LiveTables.touch)
        return answer

    def release(self) -> None:
        self._failed = False  # a stream that could not refresh its row still removes it if it can
        self._do(LiveTables.release)


def _json_text(answer: dict[str, Any]) -> str:
    """An answer as JSON text that always encodes: lone surrogates a client sent come back as U+FFFD."""
    text = json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(printable(answer), separators=(",", ":"), ensure_ascii=False)
    return text
