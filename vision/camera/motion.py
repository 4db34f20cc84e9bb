"""Has a fixed camera moved since its last read? The picture's shift, by phase correlation.

A camera's learned vertical (:class:`farklecam.vision.pose.view_search.VerticalMemory`) is
only as good as the camera's stillness: bump the webcam and flat dice start to
look cocked under the old vertical. The settle gate cannot tell a bumped camera
from rolling dice (both are motion), and the reader reads only still frames,
so the question is asked between two *reads*: did the whole picture shift?

Phase correlation of two small grey thumbnails (OpenCV's ``phaseCorrelate``,
with a Hann window) answers with a sub-pixel shift and a response (how alike
the two pictures are once shifted). Dice that moved, or a lamp switched on,
leave the background where it was (shift ~0); a camera that panned or tilted
moves all of it. A picture so changed that no shift explains it (a very low
response) counts as moved too. On the bundled examples a 27 px pan of a
640 px frame measures 5.3-5.4 thumbnail pixels, two dice moved or 30 % more
light at most 0.3 (``tests/vision/test_camera_motion.py``).

A camera rolled about its lens axis barely shifts the picture (5 degrees: 0.5-2.7
thumbnail pixels), so a second test measures the roll itself, as in
Fourier-Mellin registration: the magnitude spectrum of a picture does not move
when the picture shifts, but turns when it turns, and in log-polar coordinates
that turn is a shift that phase correlation finds. On the examples a 2 degree roll
measures at least 1.85 degrees; an empty tray against the same tray with thrown
dice (rendered throws, ``farklecam.datasets.synthetic.render_throw_sequence``) at most
0.38. The same transform's scale axis was tried for a zoom and left out: on
these 128 px thumbnails a 5 % zoom measured as little as 1.9 % while thrown
dice measured up to 2 %.
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
    """When two reads' pictures count as taken from another place.

    Attributes:
        width: thumbnail width in pixels (the height keeps the frame's aspect).
        max_shift: largest shift of a still camera, as a fraction of the thumbnail's
            width (0.015: 2 px of 128, about 10 px of a 640 px frame, well under a
            degree for a webcam; an extra search costs one read about 20 ms).
        min_response: phase-correlation response below which the pictures are unrelated.
        min_contrast: standard deviation of the thumbnail's grey levels below which the
            picture is too plain to tell (sensor noise alone would seem to shift).
        max_roll: largest roll about the lens axis of a still camera, in degrees
            (thrown dice measure at most 0.4, a 2 degree roll at least 1.85).
        min_roll_response: spectra correlation below which the roll measured is not
            believed (a hand over the tray gives wild rolls at 0.04-0.24; still frames
            and rolled ones 0.42 and more).
    """

    width: int = 128
    max_shift: float = 0.015
    min_response: float = 0.2
    min_contrast: float = 4.0
    max_roll: float = 1.0
    min_roll_response: float = 0.3

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
    """The log-polar magnitude spectrum of a thumbnail's central square: a turn of the picture is a row shift.

    Rows are degrees (0-180: a real picture's spectrum repeats after half a
    turn), columns log radius. The square keeps the spectrum's axes equally
    scaled, so a turn of the picture is a turn of its spectrum.
    """
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
    """How far the picture turned from ``before`` to ``after`` (log-polar spectra), and the correlation's response.

    The sign follows OpenCV's rotation angle (counter-clockwise positive); the
    size is what matters here.
    """
    (_, rows), response = cv2.phaseCorrelate(before.copy(), after.copy(), _window(before.shape))
    return -float(rows) * 180.0 / _ANGLE_ROWS, float(response)


class CameraMotion:
    """Remembers the last picture it was shown and says whether the next one was taken from elsewhere.

    Example:
        >>> motion = CameraMotion()
        >>> motion.moved(first_frame)   # nothing to compare with yet
        False
        >>> motion.moved(frame_after_a_bump)
        True
    """

    def __init__(self, config: MotionConfig | None = None, *, keep_first: bool = False) -> None:
        self.config = config or MotionConfig()
        #: Compare every frame with the first one shown (a calibration's picture) instead of the last.
        self.keep_first = keep_first
        self._previous: npt.NDArray[np.float32] | None = None
        self._previous_spectrum: npt.NDArray[np.float32] | None = None

    def moved(self, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether ``frame`` was taken from another place than the last frame shown; remembers ``frame``.

        With ``keep_first`` the comparison is always with the first frame shown, which is kept.
        """
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
