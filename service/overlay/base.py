"""The annotator interface and the colours shared by every annotator."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import numpy.typing as npt

from farklecam.vision.reading import DieStatus, Reading

__all__ = ["KEEP_COLOR", "STATUS_COLORS", "Annotator", "Color", "Scene", "ink_for"]

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

#: Outline and tag colour of the dice of the advised keep (light blue, apart from every status colour).
KEEP_COLOR: Color = (255, 200, 0)


def ink_for(color: Color) -> Color:
    """Black or white, whichever reads better on a tag of ``color`` (BGR)."""
    luminance = 0.114 * color[0] + 0.587 * color[1] + 0.299 * color[2]
    return (0, 0, 0) if luminance > 128 else (255, 255, 255)


class Annotator(ABC):
    """Draws one aspect of a reading onto a frame.

    Style goes to ``__init__``; ``annotate`` only draws, in place, and returns the same
    array so that annotators chain: ``b.annotate(a.annotate(scene, r), r)``.
    """

    @abstractmethod
    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw on ``scene`` (BGR uint8, modified in place) and return it."""
