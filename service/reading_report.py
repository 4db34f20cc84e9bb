"""A reading plus what the rules make of it: the one report the CLI and the web service both give.

``farklecam read`` prints it per image and ``POST /api/read`` returns it, so
both say the same thing about the same picture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from farklecam.errors import InvalidDiceError
from scoring.rules import Rules
from scoring.setasides import legal_set_asides

if TYPE_CHECKING:
    from vision.reading import Reading

__all__ = ["NOT_STRAIGHT_DOWN", "advice_lines", "reading_report"]

#: What a report says when a camera said to look straight down was read under its dice's vertical instead.
NOT_STRAIGHT_DOWN = "camera not straight down (read by its dice): mark the tray's corners"


def reading_report(reading: Reading, rules: Rules, *, turn_total: int = 0, on_board: bool = True) -> dict[str, Any]:
    """Reading, scoring options and advice for the dice that lie flat on the tray.

    Dice that must be thrown again (cocked, off the tray, unread) are listed but
    not scored: ``rethrow`` says how many, and ``final`` is false until none are left.

    Returns:
        ``{"dice", "rethrow", "faces", "final", "options", "advice", "farkle"}``; ``advice`` is
        None when no die can be scored yet, ``scoring_error`` explains a roll the rules reject
        (e.g. more dice than the rules play with), ``notice`` says the camera, said to look
        straight down, is tilted (:attr:`vision.reading.Reading.straight_down_doubted`).
    """
    from scoring.advisor import advise  # the solver is only built when a reading needs advice

    report = reading.to_dict()
    faces = tuple(report["faces"])
    report.update(final=reading.rethrow == 0, options=[], advice=None, farkle=False)
    if reading.straight_down_doubted:
        report["notice"] = NOT_STRAIGHT_DOWN
    if not faces:
        return report
    try:
        options = legal_set_asides(faces, rules)
        report["options"] = [o.to_dict() for o in options]
        report["farkle"] = not options and reading.rethrow == 0
        report["advice"] = advise(faces, rules, turn_total=turn_total, on_board=on_board).to_dict()
    except InvalidDiceError as exc:
        report["scoring_error"] = str(exc)
    return report


def advice_lines(report: dict[str, Any]) -> list[str]:
    """Short overlay/summary lines for a report (what a player reads at a glance)."""
    lines = [f"dice: {' '.join(map(str, report['faces'])) or '-'}"]
    if report["rethrow"]:
        lines.append(f"RETHROW {report['rethrow']}")
    if report.get("scoring_error"):
        lines.append(report["scoring_error"])
    elif report["farkle"]:
        lines.append("FARKLE")
    advice = report.get("advice")
    if advice and advice.get("keep"):
        keep = " ".join(map(str, advice["keep"]))
        lines.append(f"best: keep {keep} (+{advice['points']}) then {advice['action'].upper()}")
        lines.append(f"expected {advice['expected']:.0f}")
    if report.get("notice"):
        lines.append(report["notice"])
    return lines
