"""Argument types the command lines share: a bad value becomes one clear argparse line, not a traceback."""

from __future__ import annotations

import argparse

__all__ = ["crop_side", "share"]


def share(text: str) -> float:
    """A share or rate from 0 to 1 (``--lean-rate``, ``--cls-streaks``, ...)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a share between 0 and 1")
    return value


def crop_side(text: str) -> int:
    """A network's square input side in pixels: a whole number from 32 to 256 (``--crop-size``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of pixels") from None
    if not 32 <= value <= 256:
        raise argparse.ArgumentTypeError(f"{value} px is outside 32..256")
    return value
