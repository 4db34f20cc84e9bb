"""Text labels on the dice: the face read, or why a die must be thrown again."""

from __future__ import annotations

import cv2

from farklecam.service.overlay.base import STATUS_COLORS, Annotator, Scene
from farklecam.vision.reading import Die, DieStatus, Reading

__all__ = ["FaceLabelAnnotator", "draw_label", "label_text"]

_FONT = cv2.FONT_HERSHEY_SIMPLEX
_SHORT = {DieStatus.COCKED: "C", DieStatus.OFF_TRAY: "OUT", DieStatus.UNCERTAIN: "?"}


def draw_label(
    scene: Scene, text: str, origin: tuple[int, int], color: tuple[int, int, int], scale: float, above: bool = True
) -> None:
    """Draw ``text`` on a filled tag of ``color`` whose corner is ``origin`` (x, y), in place.

    The tag sits above ``origin`` (or below it with ``above=False``) and is kept inside the frame.
    """
    thickness = max(1, round(scale * 2))
    (tw, th), base = cv2.getTextSize(text, _FONT, scale, thickness)
    pad = max(2, round(3 * scale))
    x = min(max(0, origin[0]), max(0, scene.shape[1] - tw - 2 * pad))
    y_top = origin[1] - th - base - 2 * pad if above else origin[1]
    y_top = min(max(0, y_top), max(0, scene.shape[0] - th - base - 2 * pad))
    cv2.rectangle(scene, (x, y_top), (x + tw + 2 * pad, y_top + th + base + 2 * pad), color, -1)
    luminance = 0.114 * color[0] + 0.587 * color[1] + 0.299 * color[2]
    ink = (0, 0, 0) if luminance > 128 else (255, 255, 255)
    cv2.putText(scene, text, (x + pad, y_top + pad + th), _FONT, scale, ink, thickness, cv2.LINE_AA)


class FaceLabelAnnotator(Annotator):
    """The face read on each die ("5"), or "C" (cocked), "OUT" (off the tray), "?" (unsure).

    Args:
        scale: font scale; None scales it with the frame (0.6 at 640 wide).
        show_confidence: append the face confidence ("5 0.97").
    """

    def __init__(self, scale: float | None = None, show_confidence: bool = False) -> None:
        self.scale = scale
        self.show_confidence = show_confidence

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw a tag above each die's box."""
        scale = self.scale or max(0.4, scene.shape[1] / 1070)
        for die in reading.dice():
            text = label_text(die, self.show_confidence)
            x1, y1 = round(die.box[0]), round(die.box[1])
            draw_label(scene, text, (x1, y1), STATUS_COLORS[die.status], scale)
        return scene


def label_text(die: Die, show_confidence: bool = False) -> str:
    """A die's tag: ``"5"``, ``"4 OUT"``, ``"?"`` or ``"C"``."""
    text = str(die.face) if die.face is not None else ""
    if die.status is not DieStatus.OK:
        short = _SHORT[die.status]
        text = f"{text} {short}".strip() if die.status is not DieStatus.COCKED else short
    if show_confidence:
        text = f"{text} {die.face_confidence:.2f}"
    return text
