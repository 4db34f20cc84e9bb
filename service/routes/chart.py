"""``GET /api/chart.png`` and ``GET /api/chart``: the bank line, as ``farklecam chart`` draws it and prints it.

The rules come as a preset and ``set=key=value`` changes (the CLI's ``--set``), in the query,
so that an ``<img>`` or a link can ask for a chart. A rule set whose win table is not solved
yet is answered 503 with ``Retry-After`` and why, never with a minute of solving inside the
request: the server's background solver (where ``farklecam serve`` runs one) starts on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi.responses import JSONResponse

from farklecam.scoring.bank_line import BankLine, bank_line, default_score, gap_range
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.winprob import ready
from farklecam.service.deps import SettingsDep
from farklecam.service.errors import ErrorResponse

__all__ = ["router"]

router = APIRouter(tags=["scoring"])

#: Seconds a client told the table is being solved should wait before it asks again.
RETRY_AFTER = 10
#: How long a browser may keep a chart: the same query always draws the same one.
CHART_CACHE = "private, max-age=3600"

Preset = Annotated[str | None, Query(max_length=40, description="rule preset (default: the server's)")]
RuleChanges = Annotated[
    list[str] | None, Query(alias="set", max_length=64, description="rule changes as key=value, repeated")
]
Score = Annotated[
    int | None,
    Query(ge=0, le=1_000_000, multiple_of=50, description="the deciding player's score (default: half the target)"),
]
Gaps = Annotated[
    str,
    Query(pattern=r"^-?\d{1,7},-?\d{1,7}$", description="LOW,HIGH: the score gaps, opponent minus the player"),
]
Step = Annotated[int, Query(ge=50, le=1_000_000, multiple_of=50, description="points between two gaps charted")]
Scale = Literal["log", "linear"]

_UNSOLVED = {"description": "the rules' win table is being solved (Retry-After says when to ask again)"}


@dataclass(frozen=True)
class ChartQuery:
    """What both chart routes read from the query: the rules, the deciding player's score and the gaps."""

    rules: Rules
    mine: int
    gaps: str
    step: int


def chart_query(
    settings: SettingsDep,
    preset: Preset = None,
    options: RuleChanges = None,
    score: Score = None,
    gaps: Gaps = "-5000,5000",
    step: Step = 50,
) -> ChartQuery:
    """The chart a query asks for (the server's preset where it names none; half the target for the score).

    Raises:
        InvalidRulesError: an unknown preset or option, or a bad value.
    """
    rules = _rules(preset or settings.rules, options or [])
    return ChartQuery(rules, default_score(rules) if score is None else score, gaps, step)


ChartQueryDep = Annotated[ChartQuery, Depends(chart_query)]


@router.get(
    "/chart.png",
    response_class=Response,
    summary="The bank line as a picture",
    responses={200: {"content": {"image/png": {}}, "description": "a 900 x 600 PNG"}, 503: _UNSOLVED},
)
def chart_picture(query: ChartQueryDep, scale: Scale = "log") -> Response:
    """From which turn total banking gives the best chance to win, one line per number of dice, against the gap.

    Dashed: the line for the most points. See ``farklecam chart``.
    """
    if not ready(query.rules, [query.mine, 0]):
        return _unsolved(query.rules)
    picture = _png(query.rules, query.mine, query.gaps, query.step, scale)
    return Response(picture, media_type="image/png", headers={"Cache-Control": CHART_CACHE})


@router.get("/chart", summary="The bank line as numbers", responses={503: _UNSOLVED})
def chart_numbers(query: ChartQueryDep) -> Any:
    """The numbers ``/api/chart.png`` draws: each line's total per gap (``null``: banking never best there)."""
    if not ready(query.rules, [query.mine, 0]):
        return _unsolved(query.rules)
    return _line(query.rules, query.mine, query.gaps, query.step).to_dict()


def _rules(preset: str, changes: list[str]) -> Rules:
    """The preset with the changes, named "PRESET (customised)" where they change play (as a game names them).

    Raises:
        InvalidRulesError: an unknown preset or option, or a bad value.
    """
    base = get_rules(preset)
    rules = base.with_settings(changes)
    return rules if rules.key() == base.key() else replace(rules, name=f"{base.name} (customised)")


@lru_cache(maxsize=16)
def _line(rules: Rules, mine: int, gaps: str, step: int) -> BankLine:
    """The bank line of a query (kept: a page asks again for the same chart as the game moves on)."""
    low, high = (int(part) for part in gaps.split(","))
    return bank_line(rules, mine=mine, gaps=gap_range(low, high, step))


@lru_cache(maxsize=16)
def _png(rules: Rules, mine: int, gaps: str, step: int, scale: Scale) -> bytes:
    from farklecam.service.chart_picture import chart_png

    return chart_png(_line(rules, mine, gaps, step), scale=scale)


def _unsolved(rules: Rules) -> JSONResponse:
    """503: the win table is not solved yet, why, and when to ask again (the background solver starts on it)."""
    from farklecam.service.usecases.scoring import unsolved_why  # the advice's own words for the same wait

    body = {"detail": unsolved_why(rules), "error": "WinTableNotReady"}
    return ErrorResponse(body, status_code=503, headers={"Retry-After": str(RETRY_AFTER)})
