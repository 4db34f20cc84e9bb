"""Boxes around the dice, coloured by status."""

from __future__ import annotations

import cv2

from farklecam.service.overlay.base import STATUS_COLORS, Annotator, Scene
from farklecam.vision.reading import DieStatus, Reading

__all__ = ["BoxAnnotator"]


class BoxAnnotator(Annotator):
    """A rectangle around each die: ok green, cocked orange, off-tray red, uncertain yellow.

    Args:
        thickness: line width in pixels; None scales it with the frame (2 px at 640 wide).
    """

    def __init__(self, thickness: int | None = None) -> None:
        self.thickness = thickness

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw one box per die."""
        thickness = self.thickness or max(1, round(scene.shape[1] / 320))
        for (x1, y1, x2, y2), status in zip(reading.xyxy, reading.status, strict=True):
            color = STATUS_COLORS[DieStatus(str(status))]
            cv2.rectangle(scene, (round(x1), round(y1)), (round(x2), round(y2)), color, thickness, cv2.LINE_AA)
        return scene
