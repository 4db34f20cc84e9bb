"""Has a fixed camera moved since its last read? The picture's shift and roll, by phase correlation.

The settle gate cannot tell a bumped camera from rolling dice, so the question is asked
between two reads. Phase correlation of two grey thumbnails gives a shift and a response:
moved dice or a lamp leave the background in place, a panned camera moves all of it, and
a picture no shift explains counts as moved. A roll about the lens axis is measured as in
Fourier-Mellin registration: the magnitude spectrum turns with the picture but ignores
its shift, and in log-polar coordinates that turn is a shift.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["CameraMotion", "MotionConfig", "log_polar_spectrum", "roll_degrees", "thumbnail"]


@dataclass(frozen=True, slots=True)
class MotionConfig:
    """When two reads' pictures count as taken from another place."""

    width: int = 128  #: thumbnail width in pixels (the height keeps the frame's aspect)
    max_shift: float = 0.015  #: largest shift of a still camera, a fraction of the thumbnail's width
    min_response: float = 0.2  #: phase-correlation response below which the pictures are unrelated
    min_contrast: float = 4.0  #: grey-level deviation below which the picture is too plain to tell
    max_roll: float = 1.0  #: largest roll about the lens axis of a still camera, degrees
    min_roll_response: float = 0.3  #: spectra correlation below which a roll is not believed (a passing hand)

    def __post_init__(self) -> None:
        if self.width < 16 or not 0.0 < self.max_shift < 1.0 or not 0.0 <= self.min_response < 1.0:
            raise ValueError("width must be >= 16, max_shift in (0, 1) and min_response in [0, 1)")
        if not 0.0 < self.max_roll < 90.0 or not 0.0 <= self.min_roll_response < 1.0:
            raise ValueError("max_roll must be in (0, 90) degrees and min_roll_response in [0, 1)")


#: Rows of the log-polar spectrum: one per degree over the half turn a magnitude spectrum repeats in.
_ANGLE_ROWS = 180


def thumbnail(frame: npt.NDArray[np.uint8], width: int) -> npt.NDArray[np.float32] | None:
    """A grey thumbnail ``width`` pixels wide keeping the frame's aspect; None for a strip too thin to compare."""
    height, frame_width = frame.shape[:2]
    thumb_h = round(height * width / frame_width)
    if thumb_h < 8:
        return None
    grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.resize(grey, (width, thumb_h), interpolation=cv2.INTER_AREA), np.float32)


@lru_cache(maxsize=8)
def _window(shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
    """A 2-D Hann window for an array of ``shape`` (rows, columns); shared, never written to."""
    return np.asarray(cv2.createHanningWindow((shape[1], shape[0]), cv2.CV_32F), np.float32)


@lru_cache(maxsize=4)
def _high_pass(side: int) -> npt.NDArray[np.float32]:
    """Weights rising from 0 at the spectrum's centre (the picture's mean and its slow shading) to 1 at Nyquist."""
    freq = np.fft.fftshift(np.fft.fftfreq(side)).astype(np.float32)
    radius = np.clip(2.0 * np.hypot(freq[:, None], freq[None, :]), 0.0, 1.0)
    return np.asarray(0.5 - 0.5 * np.cos(np.pi * radius), np.float32)


def log_polar_spectrum(thumb: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The log-polar magnitude spectrum (degrees 0-180 by log radius) of a thumbnail's central square."""
    side = min(thumb.shape)
    top, left = (thumb.shape[0] - side) // 2, (thumb.shape[1] - side) // 2
    square = thumb[top : top + side, left : left + side]
    windowed = (square - square.mean()) * _window(square.shape)
    magnitude = np.log1p(np.abs(np.fft.fftshift(np.fft.fft2(windowed)))).astype(np.float32) * _high_pass(side)
    radius = side // 2
    polar = cv2.warpPolar(
        magnitude, (radius, 2 * _ANGLE_ROWS), (side / 2, side / 2), radius, cv2.WARP_POLAR_LOG | cv2.INTER_LINEAR
    )
    return np.ascontiguousarray(polar[:_ANGLE_ROWS])


def roll_degrees(before: npt.NDArray[np.float32], after: npt.NDArray[np.float32]) -> tuple[float, float]:
    """Degrees the picture turned (counter-clockwise) between two log-polar spectra, and the response."""
    (_, rows), response = cv2.phaseCorrelate(before.copy(), after.copy(), _window(before.shape))
    return -float(rows) * 180.0 / _ANGLE_ROWS, float(response)


class CameraMotion:
    """Remembers the last picture it was shown and says whether the next one was taken from elsewhere."""

    def __init__(self, config: MotionConfig | None = None, *, keep_first: bool = False) -> None:
        self.config = config or MotionConfig()
        #: Compare every frame with the first one shown (a calibration's picture) instead of the last.
        self.keep_first = keep_first
        self._previous: npt.NDArray[np.float32] | None = None
        self._previous_spectrum: npt.NDArray[np.float32] | None = None

    def moved(self, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether ``frame`` was taken from elsewhere than the last (``keep_first``: the first) frame shown."""
        thumb = thumbnail(frame, self.config.width)
        previous, previous_spectrum = self._previous, self._previous_spectrum
        if not (self.keep_first and previous is not None):
            self._previous, self._previous_spectrum = thumb, None
        if thumb is None or previous is None or previous.shape != thumb.shape:
            return previous is not None and thumb is not None  # a new picture size: another camera mode
        if min(float(thumb.std()), float(previous.std())) < self.config.min_contrast:
            return False
        # phaseCorrelate may write its window into its inputs: give it copies.
        (dx, dy), response = cv2.phaseCorrelate(previous.copy(), thumb.copy(), _window(thumb.shape))
        shift = float(np.hypot(dx, dy)) / self.config.width
        if shift > self.config.max_shift or response < self.config.min_response:
            return True
        spectrum = log_polar_spectrum(thumb)
        if previous_spectrum is None:
            previous_spectrum = log_polar_spectrum(previous)
        if self.keep_first:
            self._previous_spectrum = previous_spectrum  # the first frame's, computed once
        else:
            self._previous_spectrum = spectrum
        roll, roll_response = roll_degrees(previous_spectrum, spectrum)
        return abs(roll) > self.config.max_roll and roll_response >= self.config.min_roll_response

    def reset(self) -> None:
        """Forget the last picture (the next one is compared with nothing)."""
        self._previous = self._previous_spectrum = None
