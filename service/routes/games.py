"""Games: create one, apply actions, read its state and its event log.

Every accepted action is committed to the database (SQLite or PostgreSQL) before the answer is sent (see
:mod:`farklecam.service.storage`); an illegal one is a 409 carrying the game engine's
own message (why, what is allowed now, where the game stands).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, status

from farklecam.service.deps import GamesDep, SettingsDep
from farklecam.service.schemas import ActionIn, AdvicePublic, EventsPublic, GameCreate, GamePublic, GamesPublic
from farklecam.service.usecases import games as usecase

__all__ = ["router"]

router = APIRouter(prefix="/games", tags=["games"])

#: The most games a list may skip: far more than any server holds, and small enough for SQLite's integers.
MAX_OFFSET = 1_000_000

GameId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="the id returned on creation")]


@router.post("", response_model=GamePublic, status_code=status.HTTP_201_CREATED, summary="Start a game")
def create_game(body: GameCreate, games: GamesDep, settings: SettingsDep) -> dict[str, Any]:
    """Players in seating order; without ``first_player`` the game starts with a roll-off."""
    return usecase.create(games, body.to_rules(settings.rules), body.players, body.first_player)


@router.get("", response_model=GamesPublic, summary="List games")
def list_games(
    games: GamesDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="games to skip (newest first)")] = 0,
) -> dict[str, Any]:
    """Games, most recently played first (without replaying them)."""
    rows = games.store.rows(limit, offset)
    data = [
        {"id": r.id, "players": list(r.players), "rules": str(r.rules.get("name", "custom")),
         "created": r.created, "updated": r.updated, "events": r.events}
        for r in rows
    ]  # fmt: skip
    return {"data": data, "count": games.store.count()}


@router.get("/{game_id}", response_model=GamePublic, summary="A game's state")
def get_game(game_id: GameId, games: GamesDep) -> dict[str, Any]:
    """The scoreboard, the turn in progress, the score sheet and what may be done now."""
    return usecase.describe(games, game_id)


@router.post(
    "/{game_id}/actions",
    response_model=GamePublic,
    summary="Apply an action",
    responses={
        409: {
            "description": "the rules forbid this action now, or another device acted first (expected_events is "
            "stale); the message says which"
        }
    },
)
def apply_action(game_id: GameId, body: ActionIn, games: GamesDep) -> dict[str, Any]:
    """Keep, roll, bank, farkle, undo or a roll-off throw; committed to disk before the answer.

    With ``expected_events`` (the event count the client last saw) an action sent
    after another device's is refused with 409 instead of applied to a game the
    client has not seen; the answer describes the state this action produced.
    """
    return usecase.act(games, game_id, body.to_action(), expected_events=body.expected_events)


@router.get("/{game_id}/events", response_model=EventsPublic, summary="A game's history")
def list_events(game_id: GameId, games: GamesDep) -> dict[str, Any]:
    """Every accepted action in order, undos included (an undo cancels the latest action in force)."""
    return usecase.events(games, game_id)


@router.get(
    "/{game_id}/advice",
    response_model=AdvicePublic,
    summary="Advice for the roll on the table",
    responses={409: {"description": "no roll is waiting for a keep"}},
)
def game_advice(game_id: GameId, games: GamesDep) -> dict[str, Any]:
    """The best keep of the current roll and whether to bank or roll after it, for the current player."""
    return usecase.advice(games, game_id)
