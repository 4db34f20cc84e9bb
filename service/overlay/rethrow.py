"""The rethrow banner: how many dice must be thrown again."""

from __future__ import annotations

from farklecam.service.overlay.base import STATUS_COLORS, Annotator, Scene
from farklecam.service.overlay.labels import draw_label
from farklecam.vision.reading import DieStatus, Reading

__all__ = ["RethrowAnnotator"]


class RethrowAnnotator(Annotator):
    """A "RETHROW n" banner in the top-right corner when some dice are cocked, off the tray or unread.

    Args:
        scale: font scale; None scales it with the frame.
    """

    def __init__(self, scale: float | None = None) -> None:
        self.scale = scale

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw the banner, or nothing when every die scores."""
        n = reading.rethrow
        if n == 0:
            return scene
        scale = self.scale or max(0.5, scene.shape[1] / 800)
        text = f"RETHROW {n}"
        draw_label(scene, text, (scene.shape[1], 0), STATUS_COLORS[DieStatus.OFF_TRAY], scale, above=False)
        return scene
