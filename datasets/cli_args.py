"""Argument types the command lines share: a bad value becomes one clear argparse line, not a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "copy_count",
    "crop_context",
    "crop_side",
    "head_grid",
    "mixup_alpha",
    "non_negative",
    "positive",
    "share",
    "weight_decay",
    "width_scale",
]

_N = TypeVar("_N", int, float)


def _in_range(text: str, parse: Callable[[str], _N], low: _N, high: _N, not_parsed: str, outside: str) -> _N:
    """``parse(text)`` if it lies in ``low..high``; else an argparse error from the two message templates."""
    try:
        value = parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(not_parsed.format(text=text)) from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(outside.format(text=text, value=value))
    return value


def positive(text: str) -> int:
    """A whole number of 1 or more (``--count``, ``--width``, ``--samples``, ...)."""
    message = "expected a positive whole number, got {text}"
    return _in_range(text, int, 1, sys.maxsize, message.replace("{text}", "{text!r}"), message)


def non_negative(text: str) -> int:
    """A whole number of 0 or more (``--start``)."""
    not_parsed, outside = "expected a whole number, got {text!r}", "expected a whole number of 0 or more, got {text}"
    return _in_range(text, int, 0, sys.maxsize, not_parsed, outside)


def share(text: str) -> float:
    """A share or rate from 0 to 1 (``--lean-rate``, ``--cls-streaks``, ...)."""
    return _in_range(text, float, 0.0, 1.0, "{text!r} is not a number", "{text} is not a share between 0 and 1")


def copy_count(text: str) -> int:
    """Crops banked per die: a whole number from 1 to 64 (``--flat-copies``, ``--real-flat-copies``)."""
    return _in_range(text, int, 1, 64, "{text!r} is not a whole number", "{value} copies is outside 1..64")


def crop_side(text: str) -> int:
    """A network's square input side in pixels: a whole number from 32 to 256 (``--crop-size``)."""
    return _in_range(text, int, 32, 256, "{text!r} is not a whole number of pixels", "{value} px is outside 32..256")


def crop_context(text: str) -> float:
    """Context around a box in its crop, a fraction of the box's side per side, from 0 to 1 (``--context``)."""
    return _in_range(text, float, 0.0, 1.0, "{text!r} is not a number", "a context of {text} is outside 0..1")


def width_scale(text: str) -> float:
    """A factor on a network's channel widths, from 0.5 to 4 (``--width-scale``)."""
    return _in_range(text, float, 0.5, 4.0, "{text!r} is not a number", "{text} is outside 0.5..4")


def head_grid(text: str) -> int:
    """The side of the grid a network's last feature map is pooled to, from 1 to 8 (``--head-grid``)."""
    return _in_range(text, int, 1, 8, "{text!r} is not a whole number", "a {value}x{value} grid is outside 1..8")


def weight_decay(text: str) -> float:
    """AdamW's decoupled weight decay, from 0 to 1 (``--weight-decay``)."""
    return _in_range(text, float, 0.0, 1.0, "{text!r} is not a number", "a weight decay of {text} is outside 0..1")


def mixup_alpha(text: str) -> float:
    """Mixup's Beta(alpha, alpha) parameter, from 0 (off) to 4 (``--mixup``)."""
    return _in_range(text, float, 0.0, 4.0, "{text!r} is not a number", "a mixup alpha of {text} is outside 0..4")
