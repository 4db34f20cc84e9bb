"""The bank line as a picture: one line per number of dice against the score gap, drawn with OpenCV (PNG).

Why a picture: a table of 200 gaps by six dice counts is read by nobody; the shape is the
answer ("behind by 3000, throw five dice on until 4000"). The run time carries numpy and
OpenCV only, so the axes, ticks, legend and dashes are drawn here by hand
(:func:`draw_bank_line`), from a :class:`~farklecam.scoring.bank_line.BankLine`.

The turn total axis is logarithmic by default: the lines for one to three dice sit at a few
hundred points, hot dice's at several thousand, and on a linear axis the first would be a
flat smudge at the bottom. Solid lines are the lines that maximise the chance to win; dashed,
the same colour, the line for the most points; dots, totals below a line where banking is best
too. Shaded: gaps where the opponent has reached the target (the mover's last turn, yellow)
or no game has that score (grey).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import IllegalActionError
from farklecam.scoring.bank_line import BankLine, Stage

__all__ = ["CHART_SIZE", "DICE_COLOURS", "Scale", "chart_png", "draw_bank_line"]

#: Width and height of a chart, pixels.
CHART_SIZE = (900, 600)
#: How the turn total axis is laid out.
Scale = Literal["log", "linear"]
#: Line colour (BGR) for 1 to 6 dice thrown on: six hues told apart in colour and in grey.
DICE_COLOURS: tuple[tuple[int, int, int], ...] = (
    (180, 119, 31),  # blue
    (14, 127, 255),  # orange
    (44, 160, 44),  # green
    (40, 39, 214),  # red
    (189, 103, 148),  # purple
    (30, 30, 30),  # near black: hot dice
)

_FONT = cv2.FONT_HERSHEY_SIMPLEX
_INK = (40, 40, 40)
_GRID = (225, 225, 225)
_LAST_TURN_FILL = (210, 245, 255)
_OUT_FILL = (236, 236, 236)
_LOG_TICKS = (50, 100, 200, 300, 500, 1000, 2000, 3000, 5000, 10_000, 20_000, 30_000, 50_000, 100_000, 200_000)
_STEPS = (50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 25_000, 50_000, 100_000)
Image = npt.NDArray[np.uint8]


def chart_png(line: BankLine, *, scale: Scale = "log", size: tuple[int, int] = CHART_SIZE) -> bytes:
    """The chart of ``line`` as PNG bytes (:func:`draw_bank_line`).

    Raises:
        IllegalActionError: an unknown scale or a size below 480 x 320 or above 2400 x 1600.
    """
    ok, encoded = cv2.imencode(".png", draw_bank_line(line, scale=scale, size=size))
    if not ok:  # pragma: no cover - PNG encoding of a uint8 BGR image does not fail
        raise RuntimeError("the chart could not be encoded as PNG")
    return bytes(encoded.tobytes())


def draw_bank_line(line: BankLine, *, scale: Scale = "log", size: tuple[int, int] = CHART_SIZE) -> Image:
    """Draw ``line`` on a white BGR image of ``size`` (width, height): axes, ticks, lines, legend and title.

    Raises:
        IllegalActionError: see :func:`chart_png`.
    """
    if scale not in ("log", "linear"):
        raise IllegalActionError(f"the scale is log or linear, got {scale!r}")
    width, height = size
    if not (480 <= width <= 2400 and 320 <= height <= 1600):
        raise IllegalActionError(f"a chart is 480x320 to 2400x1600 pixels, got {width}x{height}")
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    plot = _Plot(line, scale, (80, 66, width - 200, height - 72))
    plot.shade_stages(image)
    plot.grid_and_axes(image)
    for n, dice in enumerate(line.lines):
        colour = DICE_COLOURS[n % len(DICE_COLOURS)]
        if dice.points_bank_from is not None:
            plot.dashed_level(image, dice.points_bank_from, colour)
        plot.polyline(image, dice.bank_from, colour)
        plot.dots(image, dice.also_bank, colour)
    _title(image, line)
    _legend(image, line, plot.y_range, width - 188, 74)
    return image


class _Plot:
    """The plotting rectangle and its two axes (gaps across, turn totals up)."""

    def __init__(self, line: BankLine, scale: Scale, box: tuple[int, int, int, int]) -> None:
        self.line, self.scale = line, scale
        self.x0, self.y0, self.x1, self.y1 = box
        low, high = min(line.gaps), max(line.gaps)
        pad = 50 if low == high else 0
        self.g_low, self.g_high = low - pad, high + pad
        self.y_range = _total_range(line, scale)

    def x(self, gap: float) -> int:
        return round(self.x0 + (gap - self.g_low) / (self.g_high - self.g_low) * (self.x1 - self.x0))

    def y(self, total: float) -> int:
        low, high = self.y_range
        if self.scale == "log":
            at = (math.log(max(total, 1)) - math.log(low)) / (math.log(high) - math.log(low))
        else:
            at = (total - low) / (high - low)
        return round(self.y1 - at * (self.y1 - self.y0))

    def shade_stages(self, image: Image) -> None:
        """Fill the gaps of the mover's last turn (yellow) and of no game (grey)."""
        gaps, stages = self.line.gaps, self.line.stages
        for k, stage in enumerate(stages):
            if stage is Stage.PLAYING:
                continue
            left = gaps[k] - (gaps[k] - gaps[k - 1]) / 2 if k > 0 else self.g_low
            right = gaps[k] + (gaps[k + 1] - gaps[k]) / 2 if k + 1 < len(gaps) else self.g_high
            fill = _LAST_TURN_FILL if stage is Stage.LAST_TURN else _OUT_FILL
            cv2.rectangle(image, (self.x(left), self.y0), (self.x(right), self.y1), fill, -1)

    def grid_and_axes(self, image: Image) -> None:
        """Grid lines, tick numbers on both axes, the axes' names and the zero gap."""
        for gap in _ticks(self.g_low, self.g_high):
            px = self.x(gap)
            cv2.line(image, (px, self.y0), (px, self.y1), _GRID, 1)
            _text(image, _number(gap), (px, self.y1 + 18), 0.42, centre=True)
        if self.g_low < 0 < self.g_high:
            cv2.line(image, (self.x(0), self.y0), (self.x(0), self.y1), (170, 170, 170), 1)
        low, high = self.y_range
        for total in _log_ticks(low, high) if self.scale == "log" else _ticks(low, high):
            py = self.y(total)
            cv2.line(image, (self.x0, py), (self.x1, py), _GRID, 1)
            _text(image, _number(total), (self.x0 - 6, py + 5), 0.42, right=True)
        cv2.rectangle(image, (self.x0, self.y0), (self.x1, self.y1), _INK, 1)
        name = "score gap: opponent's score minus yours (points)"
        _text(image, name, ((self.x0 + self.x1) // 2, self.y1 + 44), 0.48, centre=True)
        axis = "turn total (points" + (", log scale)" if self.scale == "log" else ")")
        _vertical_text(image, axis, 16, (self.y0 + self.y1) // 2, 0.48)

    def _clipped(self, image: Image, a: tuple[int, int], b: tuple[int, int], colour: tuple[int, ...], w: int) -> None:
        rect = (self.x0, self.y0, self.x1 - self.x0 + 1, self.y1 - self.y0 + 1)
        inside, p, q = cv2.clipLine(rect, a, b)
        if inside:
            cv2.line(image, p, q, colour, w, cv2.LINE_AA)

    def polyline(self, image: Image, totals: Sequence[int | None], colour: tuple[int, ...]) -> None:
        """The line through each gap's total; broken where a gap has none; a lone point as a dot."""
        gaps = self.line.gaps
        for k, total in enumerate(totals):
            if total is None:
                continue
            here = (self.x(gaps[k]), self.y(total))
            after = totals[k + 1] if k + 1 < len(totals) else None
            before = totals[k - 1] if k > 0 else None
            if after is not None:
                self._clipped(image, here, (self.x(gaps[k + 1]), self.y(after)), colour, 2)
            elif before is None:
                cv2.circle(image, here, 3, colour, -1, cv2.LINE_AA)

    def dots(self, image: Image, also: Sequence[Sequence[int]], colour: tuple[int, ...]) -> None:
        """Totals below a line where banking is best too."""
        for gap, totals in zip(self.line.gaps, also, strict=True):
            for total in totals:
                point = (self.x(gap), self.y(total))
                if self.x0 <= point[0] <= self.x1 and self.y0 <= point[1] <= self.y1:
                    cv2.circle(image, point, 2, colour, -1, cv2.LINE_AA)

    def dashed_level(self, image: Image, total: int, colour: tuple[int, ...]) -> None:
        """A dashed line across the plot at ``total`` (the line for points, the same at every gap)."""
        py = self.y(total)
        if not self.y0 <= py <= self.y1:
            return
        for start in range(self.x0, self.x1, 14):
            cv2.line(image, (start, py), (min(start + 7, self.x1), py), colour, 1, cv2.LINE_AA)


def _total_range(line: BankLine, scale: Scale) -> tuple[float, float]:
    """The turn total axis's bottom and top: every line, dot and points line in view."""
    values = [v for dice in line.lines for v in dice.bank_from if v is not None]
    values += [v for dice in line.lines for totals in dice.also_bank for v in totals]
    values += [dice.points_bank_from for dice in line.lines if dice.points_bank_from is not None]
    positive = [v for v in values if v > 0]
    if scale == "log":
        if not positive:
            return 100.0, 10_000.0
        low = max([t for t in _LOG_TICKS if t <= min(positive) / 1.2] or [_LOG_TICKS[0]])  # off the bottom edge
        high = min([t for t in _LOG_TICKS if t >= max(positive) * 1.05] or [_LOG_TICKS[-1]])
        return float(low), float(max(high, low * 10))
    top = max(values, default=1000) * 1.05
    step = _nice_step(0, top)
    return 0.0, float(max(math.ceil(top / step) * step, step))


def _nice_step(low: float, high: float, most: int = 10) -> int:
    return next((s for s in _STEPS if (high - low) / s <= most), _STEPS[-1])


def _ticks(low: float, high: float) -> list[int]:
    step = _nice_step(low, high)
    first = math.ceil(low / step) * step
    return list(range(int(first), int(high) + 1, step))


def _log_ticks(low: float, high: float) -> list[int]:
    ticks = [t for t in _LOG_TICKS if low <= t <= high]
    return ticks if len(ticks) <= 10 else [t for t in ticks if str(t)[0] in "125"]


def _number(value: float) -> str:
    return f"{int(value):,}".replace(",", " ") if abs(value) >= 10_000 else str(int(value))


def _ascii(text: str) -> str:
    """OpenCV's Hershey fonts draw ASCII only: anything else becomes ``?``."""
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in text)


def _text(
    image: Image,
    text: str,
    at: tuple[int, int],
    size: float,
    *,
    centre: bool = False,
    right: bool = False,
    colour: tuple[int, ...] = _INK,
    bold: bool = False,
) -> None:
    text = _ascii(text)
    thickness = 2 if bold else 1
    (w, _), _ = cv2.getTextSize(text, _FONT, size, thickness)
    x = at[0] - w // 2 if centre else at[0] - w if right else at[0]
    cv2.putText(image, text, (x, at[1]), _FONT, size, colour, thickness, cv2.LINE_AA)


def _vertical_text(image: Image, text: str, x: int, y_centre: int, size: float) -> None:
    """Text read from bottom to top, centred on ``y_centre`` (drawn flat, then turned)."""
    text = _ascii(text)
    (w, h), base = cv2.getTextSize(text, _FONT, size, 1)
    flat = np.full((h + base + 4, w + 4, 3), 255, dtype=np.uint8)
    cv2.putText(flat, text, (2, h + 2), _FONT, size, _INK, 1, cv2.LINE_AA)
    turned = cv2.rotate(flat, cv2.ROTATE_90_COUNTERCLOCKWISE)
    top = max(y_centre - turned.shape[0] // 2, 0)
    rows = min(turned.shape[0], image.shape[0] - top)
    image[top : top + rows, x : x + turned.shape[1]] = turned[:rows]


def _title(image: Image, line: BankLine) -> None:
    board = "" if line.mine > 0 else f", not on the board (opening {line.rules.bank_minimum(False)})"
    head = f"Bank line: {line.rules.name} rules, your score {line.mine}{board}"
    _text(image, head, (14, 26), 0.62, bold=True)
    what = "Bank once the turn total reaches your dice's line (best chance to win); dashed: for the most points"
    if line.up_to is not None:
        what += f"; totals to {line.up_to} (exact target)"
    _text(image, what, (14, 50), 0.42)


def _legend(image: Image, line: BankLine, shown: tuple[float, float], x: int, y: int) -> None:
    _text(image, "dice thrown on", (x, y), 0.48, bold=True)
    y += 10
    for n, dice in enumerate(line.lines):
        colour = DICE_COLOURS[n % len(DICE_COLOURS)]
        y += 24
        cv2.line(image, (x, y - 5), (x + 28, y - 5), colour, 3, cv2.LINE_AA)
        name = f"{dice.dice} (hot dice)" if dice.hot_dice else f"{dice.dice} {'die' if dice.dice == 1 else 'dice'}"
        if all(v is None for v in dice.bank_from):
            name += ": never"
        _text(image, name, (x + 36, y), 0.45)
    y += 40
    cv2.line(image, (x, y - 5), (x + 28, y - 5), _INK, 2, cv2.LINE_AA)
    _text(image, "to win", (x + 36, y), 0.42)
    y += 22
    for start in range(x, x + 28, 8):
        cv2.line(image, (start, y - 5), (start + 4, y - 5), _INK, 1, cv2.LINE_AA)
    _text(image, "for points", (x + 36, y), 0.42)
    y += 22
    cv2.circle(image, (x + 14, y - 5), 2, _INK, -1, cv2.LINE_AA)
    _text(image, "bank here too", (x + 36, y), 0.42)
    if Stage.LAST_TURN in line.stages:
        y += 22
        cv2.rectangle(image, (x, y - 12), (x + 28, y + 1), _LAST_TURN_FILL, -1)
        _text(image, "your last turn", (x + 36, y), 0.42)
    if Stage.OUT_OF_PLAY in line.stages:
        y += 22
        cv2.rectangle(image, (x, y - 12), (x + 28, y + 1), _OUT_FILL, -1)
        _text(image, "no such game", (x + 36, y), 0.42)
    if line.approximation:
        y += 30
        _text(image, "approximate:", (x, y), 0.4)
        for part in _wrap(line.approximation, 28)[:6]:
            y += 16
            _text(image, part, (x, y), 0.38)


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines
