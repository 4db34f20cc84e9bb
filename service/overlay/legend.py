"""What each mark on the overlay means: the legend the live window shows beside the picture.

The marks are few but not self-explanatory ("LEAN", "OUT", a yellow tag, a number): a player
who has never read the manual must be able to tell from the window why a die was not scored
and what to do about it. The tags are those of :mod:`farklecam.service.overlay.labels`, the
colours those of :data:`farklecam.service.overlay.base.STATUS_COLORS` and the keep's.
"""

from __future__ import annotations

from dataclasses import dataclass

from farklecam.service.overlay.base import KEEP_COLOR, STATUS_COLORS, Color
from farklecam.vision.reading import DieStatus

__all__ = ["LEGEND", "LegendEntry", "hex_color"]


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One mark: the tag as drawn on a die, its colour, and what it tells the players.

    Attributes:
        mark: a name for scripts and tests ("ok", "cocked", "off_tray", "uncertain", "keep", "number").
        tag: the tag's text as drawn (an example where it varies, e.g. "5").
        color: the tag's (and the box's) colour, BGR.
        meaning: what it means and what to do.
    """

    mark: str
    tag: str
    color: Color
    meaning: str


#: Every mark the overlay draws on a die, in the order the legend lists them.
LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry("ok", "5", STATUS_COLORS[DieStatus.OK], "read: the face scores"),
    LegendEntry("cocked", "LEAN", STATUS_COLORS[DieStatus.COCKED], "leaning: throw it again"),
    LegendEntry("off_tray", "OUT", STATUS_COLORS[DieStatus.OFF_TRAY], "off the tray: throw it again"),
    LegendEntry("uncertain", "?", STATUS_COLORS[DieStatus.UNCERTAIN], "unclear: check this die"),
    LegendEntry("keep", "KEEP", KEEP_COLOR, "the advised keep (outlined)"),
    LegendEntry("number", "#2", (90, 90, 90), "die 2, as the panel names it"),
)


def hex_color(color: Color) -> str:
    """A BGR colour as ``#rrggbb`` (Tk and CSS)."""
    b, g, r = color
    return f"#{r:02x}{g:02x}{b:02x}"
