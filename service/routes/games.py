"""Games: create one, apply actions, read its state and its event log.

Every accepted action is committed to SQLite before the answer is sent (see
:mod:`service.storage`); an illegal one is a 409 carrying the game engine's
own message (why, what is allowed now, where the game stands).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, status

from farklecam.errors import IllegalActionError
from scoring.game import Game
from service.deps import GamesDep, SettingsDep
from service.schemas import ActionIn, AdvicePublic, EventsPublic, GameCreate, GamePublic, GamesPublic
from service.usecases.scoring import advice_for

__all__ = ["game_public", "router", "state_public"]

router = APIRouter(prefix="/games", tags=["games"])

#: The most games a list may skip: far more than any server holds, and small enough for SQLite's integers.
MAX_OFFSET = 1_000_000

GameId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="the id returned on creation")]


def state_public(game: Game) -> dict[str, Any]:
    """Where a game stands, as :class:`~service.schemas.GameStatePublic` data."""
    state, legal = game.state, game.legal_actions()
    last = state.last_round
    return {
        "phase": str(state.phase),
        "current": state.current,
        "description": state.describe(),
        "players": [
            {"name": p, "score": s, "on_board": b, "streak": k}
            for p, s, b, k in zip(state.players, state.scores, state.on_board, state.streaks, strict=True)
        ],
        "turn_total": state.turn_total,
        "dice_to_throw": state.dice_to_throw,
        "roll": None if state.roll is None else list(state.roll),
        "hot_dice": state.hot_dice,
        "passed": None if state.passed is None else dataclasses.asdict(state.passed),
        "roll_off_faces": dict(state.roll_off_faces),
        "last_round": None if last is None else {**dataclasses.asdict(last), "remaining": list(last.remaining)},
        "winners": list(state.winners),
        "turns": [{**dataclasses.asdict(t), "end": str(t.end), "last_roll": list(t.last_roll)} for t in state.turns],
        "legal": {
            "kinds": list(legal.kinds),
            "text": str(legal),
            "dice_to_throw": legal.dice_to_throw,
            "passed_dice": legal.passed_dice,
            "keeps": [k.to_dict() for k in legal.keeps],
            "roll_off": list(legal.roll_off),
            "bank_minimum": legal.bank_minimum,
        },
    }


def game_public(game_id: str, game: Game, created: float) -> dict[str, Any]:
    """A game as :class:`~service.schemas.GamePublic` data."""
    return {
        "id": game_id,
        "players": list(game.players),
        "rules": game.rules.to_dict(),
        "created": created,
        "events": len(game.events),
        "state": state_public(game),
    }


@router.post("", response_model=GamePublic, status_code=status.HTTP_201_CREATED, summary="Start a game")
def create_game(body: GameCreate, games: GamesDep, settings: SettingsDep) -> dict[str, Any]:
    """Players in seating order; without ``first_player`` the game starts with a roll-off."""
    game = Game(body.to_rules(settings.rules), body.players, first_player=body.first_player, clock=time.time)
    game_id = games.create(game)
    return game_public(game_id, game, games.store.row(game_id).created)


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
    game = games.get(game_id)
    return game_public(game_id, game, games.store.row(game_id).created)


@router.post(
    "/{game_id}/actions",
    response_model=GamePublic,
    summary="Apply an action",
    responses={409: {"description": "the rules forbid this action now (the message says why)"}},
)
def apply_action(game_id: GameId, body: ActionIn, games: GamesDep) -> dict[str, Any]:
    """Keep, roll, bank, farkle, undo or a roll-off throw; committed to disk before the answer."""
    game, _ = games.apply(game_id, body.to_action())
    return game_public(game_id, game, games.store.row(game_id).created)


@router.get("/{game_id}/events", response_model=EventsPublic, summary="A game's history")
def list_events(game_id: GameId, games: GamesDep) -> dict[str, Any]:
    """Every accepted action in order, undos included (an undo cancels the latest action in force)."""
    game = games.get(game_id)
    data = [{**e.to_dict(), "text": str(e.action)} for e in game.events]
    return {"data": data, "count": len(data)}


@router.get(
    "/{game_id}/advice",
    response_model=AdvicePublic,
    summary="Advice for the roll on the table",
    responses={409: {"description": "no roll is waiting for a keep"}},
)
def game_advice(game_id: GameId, games: GamesDep) -> dict[str, Any]:
    """The best keep of the current roll and whether to bank or roll after it, for the current player."""
    game = games.get(game_id)
    state = game.state
    if state.roll is None or state.current is None or "keep" not in game.legal_actions():
        raise IllegalActionError(f"no roll is waiting for a keep: {state.describe()}")
    seat = state.index(state.current)
    return advice_for(
        state.roll,
        game.rules,
        turn_total=state.turn_total,
        on_board=state.on_board[seat],
        farkle_streak=state.streaks[seat],
        throws_left=game.single_die_throws_left if len(state.roll) == 1 else None,
    )
