"""A reading plus what the rules make of it: the one report every front end gives.

``farklecam read --json`` prints it per image or throw, ``POST /api/read``
returns it, and each WebSocket frame carries its fields, so all three say the
same thing about the same picture (:class:`~farklecam.service.schemas.ReportPublic`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from farklecam.errors import InvalidDiceError, RulesError
from farklecam.scoring.rules import Rules
from farklecam.service.schemas import ReportPublic
from farklecam.service.usecases.scoring import advice_for, score_roll

if TYPE_CHECKING:
    from farklecam.vision.reading import Reading

__all__ = ["NOT_STRAIGHT_DOWN", "advice_lines", "build_report"]

#: What a report says when a camera said to look straight down was read under its dice's vertical instead.
NOT_STRAIGHT_DOWN = "camera not straight down (read by its dice): mark the tray's corners"


def build_report(
    reading: Reading | None,
    rules: Rules,
    *,
    turn_total: int = 0,
    on_board: bool = True,
    image_size: tuple[int, int] | None = None,
) -> ReportPublic:
    """The reading, the keeps of its flat dice and the advisor's play, as one report.

    Args:
        reading: the dice seen, or None (nothing to show: the dice move).
        rules: the rules to score under.
        turn_total: points already set aside this turn (checked by the caller's schema).
        on_board: whether the player has banked a first score.
        image_size: ``(width, height)``; default the reading's own.

    A roll the rules cannot score (more dice than they play with) gives
    ``scoring_error`` instead of a score; it is never an error of the report.
    """
    size = image_size or (reading.image_size if reading is not None else None)
    data: dict[str, Any] = {"image_size": size, "rules": rules.name, "reading": None, "final": False}
    if reading is None:
        return ReportPublic.model_validate(data)
    data.update(reading=reading.to_dict(), final=reading.rethrow == 0 and reading.unclear == 0)
    if reading.straight_down_doubted:
        data["notice"] = NOT_STRAIGHT_DOWN
    faces = reading.faces
    if faces:
        try:
            data["score"] = score_roll(faces, rules)
            data["advice"] = advice_for(faces, rules, turn_total=turn_total, on_board=on_board)
        except (InvalidDiceError, RulesError) as exc:
            data["scoring_error"] = str(exc)
    return ReportPublic.model_validate(data)


def advice_lines(report: ReportPublic) -> list[str]:
    """Short overlay/summary lines for a report (what a player reads at a glance)."""
    reading = report.reading
    faces = reading.faces if reading is not None else []
    lines = [f"dice: {' '.join(map(str, faces)) or '-'}"]
    if reading is not None and reading.rethrow:
        lines.append(f"RETHROW {reading.rethrow}")
    if reading is not None and reading.unclear:
        lines.append(f"CHECK {reading.unclear}: {'a die' if reading.unclear == 1 else 'dice'} the camera cannot tell")
    if report.scoring_error:
        lines.append(report.scoring_error)
    elif report.score is not None and report.score.farkle and report.final:
        lines.append("FARKLE")
    advice = report.advice
    if advice is not None and advice.keep:
        keep = " ".join(map(str, advice.keep))
        lines.append(f"best: keep {keep} (+{advice.points}) then {(advice.action or '').upper()}")
        lines.append(f"expected {advice.expected or 0:.0f}")
    if report.notice:
        lines.append(report.notice)
    return lines
