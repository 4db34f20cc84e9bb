"""The annotator interface and the colours shared by every annotator."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import numpy.typing as npt

from farklecam.vision.reading import DieStatus, Reading

__all__ = ["STATUS_COLORS", "Annotator", "Color", "Scene"]

#: A BGR colour, as OpenCV draws it.
Color = tuple[int, int, int]
#: A BGR uint8 image that annotators draw on.
Scene = npt.NDArray[np.uint8]

#: Box colour of each status: green scores, orange leans, red is off the tray, yellow needs a look.
STATUS_COLORS: dict[DieStatus, Color] = {
    DieStatus.OK: (60, 200, 60),
    DieStatus.COCKED: (0, 140, 255),
    DieStatus.OFF_TRAY: (40, 40, 230),
    DieStatus.UNCERTAIN: (0, 220, 240),
}


class Annotator(ABC):
    """Draws one aspect of a reading onto a frame.

    Style goes to ``__init__``; ``annotate`` only draws, in place, and returns the same
    array so that annotators chain: ``b.annotate(a.annotate(scene, r), r)``.
    """

    @abstractmethod
    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw on ``scene`` (BGR uint8, modified in place) and return it."""
