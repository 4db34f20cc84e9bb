"""``POST /api/score`` and ``POST /api/advise``: the same answers as ``farklecam score`` and ``advise``.

:func:`advice_for` is shared with the picture and WebSocket routes, so every
place that shows advice asks the advisor the same way.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from farklecam.errors import ModelLoadError
from scoring.rules import Rules
from service.commands.scoring_verbs import score_roll
from service.deps import SettingsDep
from service.schemas import AdviceIn, AdvicePublic, DiceIn, ScorePublic

__all__ = ["advice_for", "router"]

router = APIRouter(tags=["scoring"])


def advice_for(
    faces: tuple[int, ...],
    rules: Rules,
    *,
    turn_total: int = 0,
    on_board: bool = True,
    farkle_streak: int = 0,
    throws_left: int | None = None,
) -> dict[str, Any]:
    """The advisor's best keep and bank-or-roll for a roll (``"farkle": true`` when nothing scores).

    Raises:
        InvalidDiceError: faces outside 1-6 or too many dice.
        IllegalActionError: a turn total that is not a multiple of 50, or a streak or throws out of range.
        ModelLoadError: the advisor module is not installed (answered as 503).
    """
    try:
        from scoring.advisor import advise
    except ImportError as exc:  # pragma: no cover - only while the advisor is not installed
        raise ModelLoadError("the advisor (scoring.advisor) is not available in this installation") from exc
    found = advise(
        faces, rules, turn_total=turn_total, on_board=on_board, farkle_streak=farkle_streak, throws_left=throws_left
    )
    advice: dict[str, Any] = found.to_dict()
    return advice


@router.post("/score", response_model=ScorePublic, summary="Every legal keep of a roll")
def score(body: DiceIn, settings: SettingsDep) -> dict[str, Any]:
    """Each distinct set-aside with its points, dice left and whether it makes hot dice; best first."""
    return score_roll(tuple(body.dice), body.to_rules(settings.rules))


@router.post("/advise", response_model=AdvicePublic, summary="Best keep, then bank or roll")
def advise(body: AdviceIn, settings: SettingsDep) -> dict[str, Any]:
    """The keep with the highest expected turn score, whether to bank or roll after it, and alternatives."""
    rules = body.to_rules(settings.rules)
    score_roll(tuple(body.dice), rules)  # validates the faces with the scorer's message before the advisor runs
    return advice_for(
        tuple(body.dice), rules, turn_total=body.turn_total, on_board=body.on_board, farkle_streak=body.farkle_streak
    )
