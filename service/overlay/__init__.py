"""Drawing a reading onto a frame: small annotators, one per file, and one helper.

Example:
    >>> scene = annotate_reading(frame, reading, keep_faces=[1, 5], text_lines=["Keep 1+5: 150"])
"""

from __future__ import annotations

from collections.abc import Iterable

from farklecam.service.overlay.base import KEEP_COLOR, STATUS_COLORS, Annotator, Color, Scene
from farklecam.service.overlay.box import BoxAnnotator
from farklecam.service.overlay.keep import KeepAnnotator, keep_indices
from farklecam.service.overlay.labels import FaceLabelAnnotator, draw_label, place_labels
from farklecam.service.overlay.legend import LEGEND, LegendEntry
from farklecam.service.overlay.panel import TextPanelAnnotator
from farklecam.service.overlay.rethrow import RethrowAnnotator
from farklecam.service.overlay.tray import TrayAnnotator
from farklecam.vision.reading import Reading

__all__ = [
    "KEEP_COLOR",
    "LEGEND",
    "STATUS_COLORS",
    "Annotator",
    "BoxAnnotator",
    "Color",
    "FaceLabelAnnotator",
    "KeepAnnotator",
    "LegendEntry",
    "RethrowAnnotator",
    "Scene",
    "TextPanelAnnotator",
    "TrayAnnotator",
    "annotate_reading",
    "draw_label",
    "keep_indices",
    "place_labels",
]


def annotate_reading(
    frame: Scene,
    reading: Reading,
    keep_faces: Iterable[int] = (),
    text_lines: Iterable[str] = (),
    *,
    number_all: bool = False,
) -> Scene:
    """A copy of ``frame`` with everything drawn: tray, boxes, keep, the dice's tags, text panel, rethrow banner.

    The tags (face, why a die is not scored, its number, KEEP) are laid out so that none covers
    another die or tag (:func:`place_labels`); :data:`LEGEND` says what each means.

    Args:
        frame: BGR uint8 frame (not modified).
        reading: the reading of that frame.
        keep_faces: faces of the advised keep, highlighted on the dice (e.g. ``[1, 5, 5]``).
        text_lines: lines for the panel in the top-left corner (options, advice, scores).
        number_all: number every die, not only those the text names (to pick a die by its number).

    Returns:
        The annotated copy.
    """
    scene = frame.copy()
    keep = tuple(keep_faces)
    annotators: list[Annotator] = [
        TrayAnnotator(),
        BoxAnnotator(),
        KeepAnnotator(keep),
        FaceLabelAnnotator(keep_faces=keep, number_all=number_all),
        TextPanelAnnotator(text_lines),
        RethrowAnnotator(),
    ]
    for annotator in annotators:
        scene = annotator.annotate(scene, reading)
    return scene
