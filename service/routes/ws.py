"""``/ws/table/{game_id}``: the page streams camera frames, the server answers each with what it sees.

Protocol (one JSON answer per binary message, so the page keeps one frame in
flight and never floods a slow server):

* page -> server, binary: one JPEG (or PNG) frame.
* page -> server, text: ``{"type": "ping"}`` (answered ``{"type": "pong"}``) or
  ``{"type": "reset"}`` (forget the throw being settled, e.g. after a manual action).
* server -> page: ``{"type": "frame", "seq", "ms", "image_size", "reading", "settle", "throw",
  "score", "advice", "game"}``, or ``{"type": "error", "detail"}`` for a frame it could not
  use; the connection stays open after an error.

``game_id`` may be ``-`` to watch the dice without a game (the server's default
rules). Frames are decoded and read in a worker thread, so one table's camera
never blocks another's requests.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from farklecam.errors import FarkleError
from scoring.game import Game
from scoring.presets import get_rules
from service.deps import GamesDep, ReaderSlot, ReaderSlotDep, SettingsDep
from service.errors import GameNotFoundError, UnsupportedMediaError
from service.routes.games import state_public
from service.routes.readings import read_result
from service.storage import Games
from vision.images import decode_image, image_format

__all__ = ["NO_GAME", "TableStream", "router"]

router = APIRouter(tags=["table"])
log = logging.getLogger("farklecam.service")

#: ``game_id`` meaning "no game": read and advise only.
NO_GAME = "-"


class TableStream:
    """One WebSocket's work: turn a frame into the answer the page draws.

    Args:
        slot: the reader slot (models load on the first frame).
        games: the games, to look the table's game up on each frame (it may have changed by REST).
        game_id: the table's game, or None.
        default_rules: rules preset when there is no game.
        max_frame_bytes: larger frames are refused with an error message.
    """

    def __init__(
        self, slot: ReaderSlot, games: Games, game_id: str | None, default_rules: str, max_frame_bytes: int
    ) -> None:
        self.slot, self.games, self.game_id = slot, games, game_id
        self.default_rules = get_rules(default_rules)
        self.max_frame_bytes = max_frame_bytes
        self.seq = 0

    def _game(self) -> Game | None:
        return None if self.game_id is None else self.games.get(self.game_id)

    def on_frame(self, data: bytes) -> dict[str, Any]:
        """Decode, read, score and advise one frame (runs in a worker thread).

        Raises:
            FarkleError: a frame that is too large, not a picture, or corrupt; models missing.
        """
        started = time.perf_counter()
        self.seq += 1
        if len(data) > self.max_frame_bytes:
            raise UnsupportedMediaError(f"frame too large ({len(data)} bytes; the limit is {self.max_frame_bytes})")
        if image_format(data[:16]) is None:
            raise UnsupportedMediaError("a frame must be a JPEG or PNG picture")
        frame = decode_image(data, f"frame {self.seq}")
        reading = self.slot.get().read(frame)
        game = self._game()
        rules = game.rules if game is not None else self.default_rules
        turn_total, on_board = 0, True
        if game is not None and game.current_player is not None:
            state = game.state
            turn_total, on_board = state.turn_total, state.on_board[state.index(game.current_player)]
        result = read_result(reading, rules, turn_total=turn_total, on_board=on_board)
        height, width = frame.shape[:2]
        return {
            "type": "frame",
            "seq": self.seq,
            "image_size": [width, height],
            **result,
            "settle": None,
            "throw": None,
            "game": None if game is None else state_public(game),
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }


def _control(text: str) -> dict[str, Any]:
    """The answer to a text message."""
    try:
        message = json.loads(text)
    except json.JSONDecodeError:
        return {"type": "error", "detail": 'text messages must be JSON, like {"type": "ping"}'}
    kind = message.get("type") if isinstance(message, dict) else None
    if kind == "ping":
        return {"type": "pong"}
    if kind == "reset":
        return {"type": "reset"}
    return {"type": "error", "detail": f"unknown message type {kind!r}; send frames as binary, or ping/reset"}


@router.websocket("/ws/table/{game_id}")
async def table(
    websocket: WebSocket, game_id: str, slot: ReaderSlotDep, games: GamesDep, settings: SettingsDep
) -> None:
    """Stream frames in, readings, the settled throw and advice out (see the module docstring)."""
    await websocket.accept()
    wanted = None if game_id == NO_GAME else game_id
    try:
        if wanted is not None:
            await run_in_threadpool(games.get, wanted)
    except (GameNotFoundError, FarkleError) as exc:
        await websocket.send_json({"type": "error", "detail": str(exc), "fatal": True})
        await websocket.close(code=4404 if isinstance(exc, GameNotFoundError) else 4400)
        return
    stream = TableStream(slot, games, wanted, settings.rules, settings.max_frame_bytes)
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                try:
                    answer = await run_in_threadpool(stream.on_frame, message["bytes"])
                except FarkleError as exc:
                    answer = {"type": "error", "detail": str(exc), "error": type(exc).__name__}
                except Exception:  # a broken frame must not end the table's stream
                    log.exception("frame %d failed", stream.seq)
                    answer = {"type": "error", "detail": "the server could not process this frame"}
            else:
                answer = _control(message.get("text") or "")
            await websocket.send_json(answer)
    except WebSocketDisconnect:
        return
