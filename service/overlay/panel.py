"""A panel of text lines: scoring options, advice, the scoreboard."""

from __future__ import annotations

from collections.abc import Iterable

import cv2

from farklecam.service.overlay.base import Annotator, Color, Scene
from farklecam.vision.reading import Reading

__all__ = ["TextPanelAnnotator"]

_FONT = cv2.FONT_HERSHEY_SIMPLEX


class TextPanelAnnotator(Annotator):
    """Lines of text on a translucent dark panel in the top-left corner.

    The lines are plain strings, so any caller (CLI, web service) decides the wording.
    Hershey fonts draw ASCII only; other characters become "?".

    Args:
        lines: the text, one string per line.
        scale: font scale; None scales it with the frame.
        color: text colour (BGR).
        opacity: panel opacity, 0..1.
    """

    def __init__(
        self,
        lines: Iterable[str] = (),
        scale: float | None = None,
        color: Color = (255, 255, 255),
        opacity: float = 0.6,
    ) -> None:
        self.lines = [line.encode("ascii", "replace").decode() for line in lines]
        self.scale = scale
        self.color = color
        self.opacity = opacity

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw the panel (nothing when there are no lines)."""
        if not self.lines:
            return scene
        scale = self.scale or max(0.4, scene.shape[1] / 1400)
        thickness = max(1, round(scale * 1.5))
        sizes = [cv2.getTextSize(line, _FONT, scale, thickness) for line in self.lines]
        line_h = max(h + b for (_, h), b in sizes) + max(3, round(6 * scale))
        pad = max(4, round(8 * scale))
        width = min(scene.shape[1], max(w for (w, _), _ in sizes) + 2 * pad)
        height = min(scene.shape[0], line_h * len(self.lines) + 2 * pad)
        region = scene[:height, :width]
        region[:] = (region * (1.0 - self.opacity)).astype(scene.dtype)
        for k, (line, ((_, h), _)) in enumerate(zip(self.lines, sizes, strict=True)):
            y = pad + k * line_h + h
            cv2.putText(scene, line, (pad, y), _FONT, scale, self.color, thickness, cv2.LINE_AA)
        return scene
