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
import math
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
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
    "STATUS_OF",
    "BodySizeLimit",
    "GameNotFoundError",
    "UnsupportedMediaError",
    "install_error_handlers",
    "status_for",
]

log = logging.getLogger("farklecam.service")


class GameNotFoundError(FarkleError, LookupError):
    """No game has this id (404)."""


class UnsupportedMediaError(FarkleError, ValueError):
    """An upload that is not an image format the reader decodes (415)."""


#: Status code of each domain error; the first matching class (in this order) wins.
STATUS_OF: tuple[tuple[type[FarkleError], int], ...] = (
    (GameNotFoundError, 404),
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
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid")))
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(parts) + more


async def _farkle_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FarkleError)
    status = status_for(exc)
    if status >= 500:
        log.error("%s: %s", type(exc).__name__, exc)
    return JSONResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=status)


def _json_safe(value: Any) -> Any:
    """``value`` with every non-finite float written as text.

    A body such as ``Infinity`` parses to one, and strict JSON (what the response must be)
    has no way to write it back: echoing it in the error would turn a 422 into a 500.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = _json_safe(jsonable_encoder(exc.errors(), custom_encoder={Exception: str}))
    return JSONResponse({"detail": _validation_message(errors), "errors": errors}, status_code=422)


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
