"""Every bad request becomes a 4xx with a message, in one place.

Domain code raises :class:`~farklecam.errors.FarkleError` subclasses and never
``HTTPException``; :func:`install_error_handlers` maps them to status codes
with one handler (the table :data:`STATUS_OF`), and reshapes FastAPI's
validation errors so that ``detail`` is always one readable string the page can
show. :class:`BodySizeLimit` refuses oversized bodies before they are parsed or
spooled, so a huge upload cannot fill memory or disk.

Every error answer goes out as :class:`ErrorResponse`, which never fails to encode:
JSON may spell a lone UTF-16 surrogate (the escape for U+D800, say), which Python
decodes into a string that UTF-8 cannot hold, and an answer echoing that input (a
player's name, an option's key) would otherwise turn a 422 into a 500.
"""

from __future__ import annotations

import json
import logging
import re
import reprlib
from collections.abc import Callable
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farklecam.errors import (
    CameraError,
    FarkleError,
    GameOverError,
    IllegalActionError,
    ImageError,
    InvalidActionError,
    InvalidDiceError,
    InvalidRulesError,
    ModelLoadError,
    RulesError,
    StorageError,
    VisionError,
)

__all__ = [
    "BODY_IDLE_TIMEOUT",
    "EXCERPT",
    "STATUS_OF",
    "BodySizeLimit",
    "ErrorResponse",
    "GameNotFoundError",
    "PictureNotFoundError",
    "PictureTooLargeError",
    "ServerBusyError",
    "StaleGameError",
    "UnsupportedMediaError",
    "excerpt",
    "install_error_handlers",
    "printable",
    "status_for",
]

log = logging.getLogger("farklecam.service")


class GameNotFoundError(FarkleError, LookupError):
    """No game has this id (404)."""


class PictureNotFoundError(FarkleError, LookupError):
    """A game's event has no picture kept: typed by hand, not a throw, or deleted since (404)."""


class StaleGameError(FarkleError, ValueError):
    """An action that expected fewer or more events than the game has: another device acted first (409)."""


class UnsupportedMediaError(FarkleError, ValueError):
    """An upload that is not an image format the reader decodes (415)."""


class PictureTooLargeError(ImageError):
    """A picture whose header promises more pixels than the server will decode (413)."""


class ServerBusyError(FarkleError, RuntimeError):
    """The server holds as much work of this kind as it takes at once; the client should try again soon (429)."""


#: A lone UTF-16 surrogate: JSON's ``\\ud800`` escape gives one, and UTF-8 cannot encode it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD, the replacement character.

    Lists, tuples and dicts are walked; anything else is returned as it is.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    return value


class ErrorResponse(JSONResponse):
    """A JSON answer that always encodes: lone surrogates in what it echoes become U+FFFD."""

    def render(self, content: Any) -> bytes:
        """The UTF-8 JSON of ``content``, cleaned of lone surrogates only when it needs to be."""
        try:
            return super().render(content)
        except UnicodeEncodeError:
            text = json.dumps(printable(content), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            return text.encode("utf-8")


#: Status code of each domain error; the first matching class (in this order) wins.
STATUS_OF: tuple[tuple[type[FarkleError], int], ...] = (
    (GameNotFoundError, 404),
    (PictureNotFoundError, 404),
    (StaleGameError, 409),
    (IllegalActionError, 409),
    (GameOverError, 409),
    (UnsupportedMediaError, 415),
    (PictureTooLargeError, 413),
    (ServerBusyError, 429),
    (InvalidRulesError, 422),
    (InvalidDiceError, 422),
    (InvalidActionError, 422),
    (ImageError, 422),
    (CameraError, 422),
    (ModelLoadError, 503),  # the server lacks its models: not the client's fault, and it says so
    (StorageError, 503),
    (RulesError, 422),  # any other rules error is still about what the client sent
    (VisionError, 422),
)


def status_for(exc: FarkleError) -> int:
    """The HTTP status for a domain error (400 for any subclass not in :data:`STATUS_OF`)."""
    for cls, status in STATUS_OF:
        if isinstance(exc, cls):
            return status
    return 400


def _validation_message(errors: list[dict[str, Any]]) -> str:
    """``"body.players: Field required; body.dice.0: ..."``: one line a person can read."""
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p)[:EXCERPT] for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid")))
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(parts) + more


async def _farkle_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FarkleError)
    status = status_for(exc)
    if status >= 500:
        log.error("%s: %s", type(exc).__name__, exc)
    headers = {"Retry-After": str(RETRY_AFTER)} if status == 429 else None
    return ErrorResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=status, headers=headers)


#: Seconds a client told the server is busy (429) should wait before it tries again.
RETRY_AFTER = 5


#: The most characters of a client's input that an error answer echoes back.
EXCERPT = 60


def excerpt(value: Any) -> str | None:
    """A short, printable excerpt of what a client sent (None when it sent nothing there).

    An error answer must never fail to encode (a binary body is not UTF-8; a body
    such as ``Infinity`` has no strict-JSON form) nor repeat a large body back, so
    every echoed input is cut to :data:`EXCERPT` characters of its ``repr``.
    """
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        text = repr(bytes(value[: EXCERPT + 1]))
    elif isinstance(value, str):
        text = value
    else:
        text = reprlib.repr(value)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 3] + "..."


def _public_error(err: dict[str, Any]) -> dict[str, Any]:
    """One validation error as plain JSON: where, what, and a short excerpt of the input."""
    return {
        "type": str(err.get("type", "invalid")),
        "loc": [p if isinstance(p, int) else str(p)[:EXCERPT] for p in err.get("loc", ())],
        "msg": str(err.get("msg", "invalid"))[:200],
        "input": excerpt(err.get("input")),
    }


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    found = exc.errors()
    errors = [_public_error(err) for err in found[:20]]
    return ErrorResponse({"detail": _validation_message(list(found)), "errors": errors}, status_code=422)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error", exc_info=exc)
    return ErrorResponse({"detail": "internal error (see the server log)", "error": "InternalError"}, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """Register the domain, validation and last-resort handlers on ``app``."""
    app.add_exception_handler(FarkleError, _farkle_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)


#: Seconds a request body may pause between two of its chunks before the request is answered 408.
BODY_IDLE_TIMEOUT = 30.0


class BodySizeLimit:
    """Pure ASGI middleware: refuse request bodies over a limit with 413, before anything parses them.

    The limit is checked twice: against ``Content-Length`` before reading, and
    against the bytes actually received (a chunked upload has no length). The
    second check raises ``HTTPException(413)`` from ``receive``; FastAPI re-raises
    HTTP exceptions met while reading a body, so the client still gets a 413.
    A body that stops arriving (no byte for ``idle_timeout`` seconds) is answered
    408 the same way, so a client cannot hold a request open by going quiet.

    Args:
        app: the wrapped application.
        limit_for: the byte limit for a request path.
        idle_timeout: seconds a body may pause between two chunks.
    """

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int], idle_timeout: float = BODY_IDLE_TIMEOUT) -> None:
        self.app = app
        self.limit_for = limit_for
        self.idle_timeout = idle_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with a counting ``receive``, or answer 413 at once."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            too_big = declared.isdigit()
            response = ErrorResponse(
                {"detail": _too_large(limit) if too_big else "bad Content-Length header", "error": "BodyTooLarge"},
                status_code=413 if too_big else 400,
            )
            await response(scope, receive, send)
            return
        received, complete = 0, False

        async def counting_receive() -> Message:
            nonlocal received, complete
            if complete:  # past the body, receive() waits for the client to leave: no deadline on that
                return await receive()
            try:
                with anyio.fail_after(self.idle_timeout):
                    message = await receive()
            except TimeoutError:
                raise HTTPException(408, f"the request body stopped arriving for {self.idle_timeout:.0f} s") from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if received > limit:
                    raise HTTPException(413, _too_large(limit))
            return message

        await self.app(scope, counting_receive, send)


def _too_large(limit: int) -> str:
    return f"request body too large (the limit is {limit / 2**20:.1f} MiB)"
