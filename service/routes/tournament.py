"""Tournaments: create one, sign players up, seat each round, follow every table, export, switch the final.

Every answer that changes or shows a tournament is the organiser's view
(:func:`farklecam.service.tournament_view.tournament_view`): each table's game with its
camera page link, live scores, the standings, who goes on and the next round's
seating. A refusal (the 41st player, a taken name, a round still being played)
is a 409 with the reason; a malformed name is a 422; an unknown tournament a 404.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, status
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.requests import HTTPConnection

from farklecam.scoring.actions import ChangeRules
from farklecam.scoring.tournament import MAX_PLAYERS, TournamentError
from farklecam.service.tournament_store import TournamentStore
from farklecam.service.tournament_view import standings_csv, tournament_view

__all__ = ["TournamentsDep", "get_tournaments", "router"]

router = APIRouter(prefix="/tournaments", tags=["tournaments"])

Name = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$", description="the tournament's name")]


def get_tournaments(conn: HTTPConnection) -> TournamentStore:
    """The app's tournament store (opened by the lifespan beside the games)."""
    store: TournamentStore = conn.app.state.tournaments
    return store


TournamentsDep = Annotated[TournamentStore, Depends(get_tournaments)]


class TournamentCreate(BaseModel):
    """A new tournament: its name, and a seed for the seating (drawn and kept when absent)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=64)
    seed: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1)


class SignUp(BaseModel):
    """Players to sign up, all or (if one is refused) none."""

    model_config = ConfigDict(extra="forbid")
    players: list[Annotated[str, Field(max_length=64)]] = Field(min_length=1, max_length=MAX_PLAYERS + 1)


class RulesSwitch(BaseModel):
    """The preset the final switches to (the house text: progressive)."""

    model_config = ConfigDict(extra="forbid")
    preset: str = Field(default="progressive", max_length=32)


@router.get("", summary="List tournaments")
def list_tournaments(store: TournamentsDep) -> dict[str, Any]:
    """Tournament names, newest first."""
    names = store.names()
    return {"data": names, "count": len(names)}


@router.post("", status_code=status.HTTP_201_CREATED, summary="Create a tournament")
def create_tournament(body: TournamentCreate, store: TournamentsDep) -> dict[str, Any]:
    """A tournament with no players yet; the seed seats every round reproducibly."""
    store.create(body.name, body.seed)
    return tournament_view(store, body.name)


@router.get("/{name}", summary="The organiser's view")
def get_tournament(name: Name, store: TournamentsDep) -> dict[str, Any]:
    """Every table live (link, scores, turn), the standings, who goes on and the next round's seating."""
    return tournament_view(store, name)


@router.post("/{name}/players", summary="Sign players up")
def sign_up(name: Name, body: SignUp, store: TournamentsDep) -> dict[str, Any]:
    """At most 40 players, unique names; the request is refused whole if one of them is."""
    store.signup(name, body.players)
    return tournament_view(store, name)


@router.post("/{name}/start", summary="Seat the next round")
def start_round(name: Name, store: TournamentsDep) -> dict[str, Any]:
    """Round 1 closes the sign-up; a later round needs every table of the current one finished."""
    store.start(name)
    return tournament_view(store, name)


@router.get("/{name}/standings.csv", summary="The standings as CSV", response_class=Response)
def export_csv(name: Name, store: TournamentsDep) -> Response:
    """A row per player and round: table, rank, score, winner, goes on, game id."""
    text = standings_csv(tournament_view(store, name))
    headers = {"Content-Disposition": f'attachment; filename="{name}-standings.csv"'}
    return Response(text, media_type="text/csv; charset=utf-8", headers=headers)


@router.post("/{name}/final/rules", summary="Switch the final's rules")
def switch_final(name: Name, body: RulesSwitch, store: TournamentsDep) -> dict[str, Any]:
    """Management may switch the final to progressive at any time: from the start of the next turn on."""
    tournament = store.get(name)
    tables = store.tables(name)
    if not tournament.started or len(tournament.seatings) < len(tournament.plan):
        raise TournamentError(f"the final of {name!r} is not being played yet")
    store.games.apply(tables[-1].game_id, ChangeRules(body.preset))
    return tournament_view(store, name)
