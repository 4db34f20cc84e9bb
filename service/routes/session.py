"""``GET /api/session``: does this server want a table code? The one API route open without it.

The page asks here when it loads: where the answer is ``{"code_required": true}``
it asks the players for the code once, keeps it, and sends it with every call
(header ``X-Table-Code``; a WebSocket's ``?code=``: :mod:`farklecam.service.security`).
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from farklecam.service.deps import SettingsDep

__all__ = ["SessionPublic", "router"]

router = APIRouter(prefix="/session", tags=["session"])


class SessionPublic(BaseModel):
    """What a client must send; never the code itself."""

    code_required: bool


@router.get("", response_model=SessionPublic, summary="Whether calls must carry the table code")
def session(settings: SettingsDep) -> SessionPublic:
    """Open to every caller of an allowed host and origin, so the page can learn whether to ask for the code."""
    return SessionPublic(code_required=settings.table_code is not None)
