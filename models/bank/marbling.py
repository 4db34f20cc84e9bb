"""Marbled-die streaks painted onto training crops.

Why: marbled and swirled dice carry pale curved streaks through the body. On the
held-out real photos every face the classifier misread was such a die, a 2 whose
streak passed for a third pip. Neither the real training photos (a few such dice)
nor the generated scenes (plain bodies) show enough of them, so a share of the
training crops gets a few soft, thin curves across the die: the network learns that
a pip is a round blob and a streak is not, whatever its colour.

A streak is a quadratic Bezier curve 1-2 px wide on a 64 px crop (a pip is 6-9 px
across), anti-aliased and blurred, blended at partial opacity. Thin curves cannot
hide a pip, so the crop's label stays right.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.crops import CROP_CONTEXT

#: Points of each drawn curve (enough for a smooth arc on a 64 px crop).
_CURVE_POINTS = 24
#: Fixed-point bits for sub-pixel polyline coordinates (cv2.polylines ``shift``).
_SHIFT = 3


def _die_span(side: int) -> tuple[float, float]:
    """The die's extent inside a crop cut with :data:`farklecam.vision.crops.CROP_CONTEXT` on each side."""
    margin = side * CROP_CONTEXT / (1 + 2 * CROP_CONTEXT)
    return margin, side - margin


def _streak_mask(side: int, rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """Opacity (0..1) of one to three soft curves across the die's body."""
    low, high = _die_span(side)
    mask = np.zeros((side, side), np.float32)
    t = np.linspace(0.0, 1.0, _CURVE_POINTS)[:, None]
    for _ in range(int(rng.integers(1, 4))):
        start, control, end = rng.uniform(low, high, size=(3, 2))
        curve = (1 - t) ** 2 * start + 2 * (1 - t) * t * control + t**2 * end
        points = np.round(curve * (1 << _SHIFT)).astype(np.int32)
        cv2.polylines(mask, [points], False, 1.0, thickness=int(rng.integers(1, 3)), lineType=cv2.LINE_AA, shift=_SHIFT)
    sigma = float(rng.uniform(0.4, 1.2))
    soft = cv2.GaussianBlur(mask, (0, 0), sigma).astype(np.float32)
    peak = float(soft.max())
    return soft * np.float32(rng.uniform(0.3, 0.8) / peak) if peak > 0 else soft


def _streak_colour(rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """Mostly pale (white, cream, pink) like a marble's veins; sometimes any colour."""
    if rng.random() < 0.75:
        base = rng.uniform(185, 255)
        return np.clip(base + rng.normal(0, 12, size=3), 0, 255).astype(np.float32)
    return rng.uniform(0, 255, size=3).astype(np.float32)


def add_streaks(crops: npt.NDArray[np.uint8], rng: np.random.Generator, p: float) -> npt.NDArray[np.uint8]:
    """Paint marble streaks on a share ``p`` of square BGR ``crops`` (n, s, s, 3); returns a copy.

    ``p`` 0 returns the crops unchanged and draws nothing from ``rng``, so a recipe
    without streaks keeps its random stream.
    """
    if p <= 0 or len(crops) == 0:
        return crops
    out = crops.copy()
    side = crops.shape[1]
    for i in np.flatnonzero(rng.random(len(crops)) < p):
        alpha = _streak_mask(side, rng)[..., None]
        blended = out[i].astype(np.float32) * (1 - alpha) + _streak_colour(rng) * alpha
        out[i] = np.clip(np.round(blended), 0, 255).astype(np.uint8)
    return out
