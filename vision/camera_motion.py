"""Has a fixed camera moved since its last read? The picture's shift, by phase correlation.

A camera's learned vertical (:class:`vision.view_search.VerticalMemory`) is
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
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["CameraMotion", "MotionConfig"]


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
    """

    width: int = 128
    max_shift: float = 0.015
    min_response: float = 0.2
    min_contrast: float = 4.0

    def __post_init__(self) -> None:
        if self.width < 16 or not 0.0 < self.max_shift < 1.0 or not 0.0 <= self.min_response < 1.0:
            raise ValueError("width must be >= 16, max_shift in (0, 1) and min_response in [0, 1)")


class CameraMotion:
    """Remembers the last picture it was shown and says whether the next one was taken from elsewhere.

    Example:
        >>> motion = CameraMotion()
        >>> motion.moved(first_frame)   # nothing to compare with yet
        False
        >>> motion.moved(frame_after_a_bump)
        True
    """

    def __init__(self, config: MotionConfig | None = None) -> None:
        self.config = config or MotionConfig()
        self._previous: npt.NDArray[np.float32] | None = None
        self._window: npt.NDArray[np.float32] | None = None

    def _thumbnail(self, frame: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32] | None:
        height, width = frame.shape[:2]
        thumb_h = round(height * self.config.width / width)
        if thumb_h < 8:
            return None  # a strip of a picture: nothing to correlate
        grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        small = cv2.resize(grey, (self.config.width, thumb_h), interpolation=cv2.INTER_AREA)
        return np.asarray(small, np.float32)

    def moved(self, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether ``frame`` was taken from another place than the last frame shown; remembers ``frame``."""
        thumb = self._thumbnail(frame)
        previous, self._previous = self._previous, thumb
        if thumb is None or previous is None or previous.shape != thumb.shape:
            return previous is not None and thumb is not None  # a new picture size: another camera mode
        if min(float(thumb.std()), float(previous.std())) < self.config.min_contrast:
            return False
        if self._window is None or self._window.shape != thumb.shape:
            self._window = np.asarray(cv2.createHanningWindow(thumb.shape[::-1], cv2.CV_32F), np.float32)
        # phaseCorrelate may write its window into its inputs: give it copies.
        (dx, dy), response = cv2.phaseCorrelate(previous.copy(), thumb.copy(), self._window)
        shift = float(np.hypot(dx, dy)) / self.config.width
        return shift > self.config.max_shift or response < self.config.min_response

    def reset(self) -> None:
        """Forget the last picture (the next one is compared with nothing)."""
        self._previous = None
