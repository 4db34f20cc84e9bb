"""``GET /api/health``: is the server up, which database does it use, are the models loaded."""

from __future__ import annotations

from fastapi import APIRouter

from farklecam import __version__
from farklecam.service.deps import GamesDep, ReaderSlotDep
from farklecam.service.schemas import HealthPublic

__all__ = ["router"]

router = APIRouter(prefix="/health", tags=["health"])


@router.get("", response_model=HealthPublic, summary="Liveness and what is loaded")
def health(games: GamesDep, slot: ReaderSlotDep) -> HealthPublic:
    """Cheap enough to poll: the page uses it to tell "server unreachable" from "camera missing"."""
    return HealthPublic(
        status="ok",
        version=__version__,
        database=games.store.location,
        reader_loaded=slot.loaded,
        games=games.store.count(),
    )
