"""Every bad request becomes a 4xx with a message, in one place.

Domain code raises :class:`~farklecam.errors.FarkleError` subclasses and never
``HTTPException``; :func:`install_error_handlers` maps them to status codes
with one handler (the table :data:`STATUS_OF`), and reshapes FastAPI's
validation errors so that ``detail`` is always one readable string the page can
show. :class:`BodySizeLimit` refuses oversized bodies before they are parsed or
spooled, so a huge upload cannot fill memory or disk.
"""

from __future__ import annotations

import logging
import reprlib
from collections.abc import Callable
from typing import Any

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
    "EXCERPT",
    "STATUS_OF",
    "BodySizeLimit",
    "GameNotFoundError",
    "StaleGameError",
    "UnsupportedMediaError",
    "excerpt",
    "install_error_handlers",
    "status_for",
]

log = logging.getLogger("farklecam.service")


class GameNotFoundError(FarkleError, LookupError):
    """No game has this id (404)."""


class StaleGameError(FarkleError, ValueError):
    """An action that expected fewer or more events than the game has: another device acted first (409)."""


class UnsupportedMediaError(FarkleError, ValueError):
    """An upload that is not an image format the reader decodes (415)."""


#: Status code of each domain error; the first matching class (in this order) wins.
STATUS_OF: tuple[tuple[type[FarkleError], int], ...] = (
    (GameNotFoundError, 404),
    (StaleGameError, 409),
    (IllegalActionError, 409),
    (GameOverError, 409),
    (UnsupportedMediaError, 415),
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
    return JSONResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=status)


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
    return JSONResponse({"detail": _validation_message(list(found)), "errors": errors}, status_code=422)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error", exc_info=exc)
    return JSONResponse({"detail": "internal error (see the server log)", "error": "InternalError"}, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """Register the domain, validation and last-resort handlers on ``app``."""
    app.add_exception_handler(FarkleError, _farkle_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)


class BodySizeLimit:
    """Pure ASGI middleware: refuse request bodies over a limit with 413, before anything parses them.

    The limit is checked twice: against ``Content-Length`` before reading, and
    against the bytes actually received (a chunked upload has no length). The
    second check raises ``HTTPException(413)`` from ``receive``; FastAPI re-raises
    HTTP exceptions met while reading a body, so the client still gets a 413.

    Args:
        app: the wrapped application.
        limit_for: the byte limit for a request path.
    """

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with a counting ``receive``, or answer 413 at once."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            too_big = declared.isdigit()
            response = JSONResponse(
                {"detail": _too_large(limit) if too_big else "bad Content-Length header", "error": "BodyTooLarge"},
                status_code=413 if too_big else 400,
            )
            await response(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, _too_large(limit))
            return message

        await self.app(scope, counting_receive, send)


def _too_large(limit: int) -> str:
    return f"request body too large (the limit is {limit / 2**20:.1f} MiB)"
