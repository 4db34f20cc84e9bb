"""Games: create one, apply actions, read its state, its event log and the pictures of its throws.

Every accepted action is committed to the database (SQLite or PostgreSQL) before the answer is sent (see
:mod:`farklecam.service.storage`); an illegal one is a 409 carrying the game engine's
own message (why, what is allowed now, where the game stands). Each throw the camera scored
keeps its picture (:mod:`farklecam.service.picture_store`), listed, shown and deleted here.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response, status

from farklecam.service.deps import GamesDep, PicturesDep, SettingsDep
from farklecam.service.schemas import (
    ActionIn,
    AdvicePublic,
    EventsPublic,
    GameCreate,
    GamePublic,
    GamesPublic,
    PicturesDeletedPublic,
    PicturesPublic,
)
from farklecam.service.usecases import games as usecase
from farklecam.service.usecases import pictures as picture_usecase

__all__ = ["router"]

router = APIRouter(prefix="/games", tags=["games"])

#: The most games a list may skip: far more than any server holds, and small enough for SQLite's integers.
MAX_OFFSET = 1_000_000

GameId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="the id returned on creation")]
#: An event's number in a game's log: from 1, and never more than a database integer holds.
Seq = Annotated[int, Path(ge=1, le=2**31 - 1, description="the event (a camera-scored throw) of the game's log")]
#: How long a browser may keep a picture: a kept picture never changes (a deleted one is no longer listed).
PICTURE_CACHE = "private, max-age=86400, immutable"


@router.post("", response_model=GamePublic, status_code=status.HTTP_201_CREATED, summary="Start a game")
def create_game(body: GameCreate, games: GamesDep, settings: SettingsDep) -> dict[str, Any]:
    """Players in seating order; without ``first_player`` the game starts with a roll-off."""
    return usecase.create(games, body.to_rules(settings.rules), body.players, body.first_player, body.head_start)


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


@router.get("/{game_id}/pictures", response_model=PicturesPublic, summary="The pictures of a game's throws")
def list_pictures(game_id: GameId, games: GamesDep, pictures: PicturesDep) -> dict[str, Any]:
    """Each throw the camera scored: its event, size, reading as read and the log's corrections of it.

    A throw typed by hand (or recorded with the page's button) has no picture; a throw whose picture
    was deleted is listed under ``deleted``.
    """
    return picture_usecase.listing(games, pictures, game_id)


@router.get(
    "/{game_id}/pictures/{seq}",
    response_class=Response,
    summary="The picture of one throw",
    responses={
        200: {"content": {"image/jpeg": {}}, "description": "the settled frame the throw was read from"},
        404: {"description": "no such game, or this event keeps no picture (typed by hand, or deleted)"},
    },
)
def get_picture(
    game_id: GameId,
    seq: Seq,
    games: GamesDep,
    pictures: PicturesDep,
    overlay: Annotated[bool, Query(description="draw the reading as read over it, every die numbered")] = False,
) -> Response:
    """The JPEG the camera scored the throw from (at most 640 px on its longer side)."""
    jpeg = picture_usecase.picture(games, pictures, game_id, seq, overlay=overlay)
    return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": PICTURE_CACHE})


@router.delete("/{game_id}/pictures", response_model=PicturesDeletedPublic, summary="Delete a game's pictures")
def delete_pictures(game_id: GameId, games: GamesDep, pictures: PicturesDep) -> dict[str, Any]:
    """Delete every picture the game keeps; its log (and so its score) is untouched."""
    return picture_usecase.delete(games, pictures, game_id)
