"""``POST /api/score`` and ``POST /api/advise``: the same answers as ``farklecam score`` and ``advise``.

Both come from :mod:`farklecam.service.usecases.scoring`, which the CLI verbs, the picture
and WebSocket routes and the games call too, so every place that shows advice
asks the advisor the same way.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from farklecam.service.deps import SettingsDep
from farklecam.service.schemas import AdviceIn, AdvicePublic, DiceIn, ScorePublic
from farklecam.service.usecases.scoring import advice_for, pass_advice_for, score_roll

__all__ = ["router"]

router = APIRouter(tags=["scoring"])


@router.post("/score", response_model=ScorePublic, summary="Every legal keep of a roll")
def score(body: DiceIn, settings: SettingsDep) -> dict[str, Any]:
    """Each distinct set-aside with its points, dice left and whether it makes hot dice; best first."""
    return score_roll(tuple(body.dice), body.to_rules(settings.rules))


@router.post(
    "/advise",
    response_model=AdvicePublic,
    response_model_exclude_unset=True,  # exactly the advisor's answer: no nulls for what it did not say
    summary="Best keep, then bank or roll",
)
def advise(body: AdviceIn, settings: SettingsDep) -> dict[str, Any]:
    """The keep with the highest expected turn score, whether to bank or roll after it, and alternatives.

    Each keep says what throwing on risks (``farkle_probability``); with ``scores`` the ``win`` block
    ranks the keeps by the chance to win, each with its chance banking and throwing on, and says what
    playing for points instead would cost (``points_advice.cost``). With ``passed`` (progressive, the
    start of a turn) the answer is the ``passed`` block instead: take the pass or start fresh.
    """
    rules = body.to_rules(settings.rules)
    if body.passed is not None:
        return pass_advice_for(
            rules,
            body.passed.total,
            body.passed.dice,
            on_board=body.on_board,
            scores=body.scores,
            streaks=body.streaks,
            solve=False,
        )
    assert body.dice is not None  # the request's validator: dice or passed
    score_roll(tuple(body.dice), rules)  # validates the faces with the scorer's message before the advisor runs
    return advice_for(
        tuple(body.dice),
        rules,
        turn_total=body.turn_total,
        on_board=body.on_board,
        farkle_streak=body.farkle_streak,
        throws_left=body.throws_left,
        scores=body.scores,
        streaks=body.streaks,
        solve=False,
    )
