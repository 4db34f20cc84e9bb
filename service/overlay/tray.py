"""The tray outline the off-tray test used."""

from __future__ import annotations

import cv2
import numpy as np

from farklecam.service.overlay.base import Annotator, Color, Scene
from farklecam.vision.reading import Reading

__all__ = ["TrayAnnotator"]


class TrayAnnotator(Annotator):
    """The tray outline of the reading as a thin polygon (nothing when the tray is unknown).

    Args:
        color: line colour (BGR).
        thickness: line width in pixels.
    """

    def __init__(self, color: Color = (255, 255, 0), thickness: int = 1) -> None:
        self.color = color
        self.thickness = thickness

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw the outline."""
        if reading.tray is None:
            return scene
        pts = np.round(reading.tray).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(scene, [pts], True, self.color, self.thickness, cv2.LINE_AA)
        return scene
