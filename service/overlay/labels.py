"""Text labels on the dice: the face read, why a die must be thrown again, the advised keep.

A die's tag is drawn beside it, never over a neighbour: dice often lie close together, and a tag
covering the next die hides the very face a player is asked to check. :func:`place_labels`
chooses each tag's spot (above its die first, then below, then at its sides, a step further out
each time) so that it covers no die and no tag placed before it.

The tags (the legend, :data:`farklecam.service.overlay.legend.LEGEND`, explains them):

* ``5``: the face read, which scores;
* ``LEAN``: leaning (cocked), throw it again;
* ``4 OUT``: off the tray, throw it again;
* ``?`` or ``3?``: unclear (with the reader's best guess, if any): check this die;
* ``#2``: the die's number, on every die the text names (the second die of the reading is "#2" there too);
* ``KEEP``: a die of the advised keep.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import cv2

from farklecam.service.overlay.base import KEEP_COLOR, STATUS_COLORS, Annotator, Color, Scene, ink_for
from farklecam.service.overlay.keep import keep_indices, keep_margin
from farklecam.vision.reading import Die, DieStatus, Reading

__all__ = ["FaceLabelAnnotator", "Rect", "draw_label", "label_text", "leader_line", "place_labels", "tag_size"]

_FONT = cv2.FONT_HERSHEY_SIMPLEX
_SHORT = {DieStatus.COCKED: "LEAN", DieStatus.OFF_TRAY: "OUT", DieStatus.UNCERTAIN: "?"}
#: How many steps further out a tag may move from its die, looking for a free spot.
_RINGS = 6

#: A rectangle ``(x1, y1, x2, y2)`` in pixels.
Rect = tuple[float, float, float, float]


def draw_label(
    scene: Scene, text: str, origin: tuple[int, int], color: tuple[int, int, int], scale: float, above: bool = True
) -> None:
    """Draw ``text`` on a filled tag of ``color`` whose corner is ``origin`` (x, y), in place.

    The tag sits above ``origin`` (or below it with ``above=False``) and is kept inside the frame.
    """
    _, height = tag_size(text, scale)
    y_top = origin[1] - height if above else origin[1]
    _draw_tag(scene, text, (origin[0], y_top), color, scale)


def _thickness(scale: float) -> int:
    return max(1, round(scale * 2))


def _pad(scale: float) -> int:
    return max(2, round(3 * scale))


def tag_size(text: str, scale: float) -> tuple[int, int]:
    """Width and height in pixels of the tag :func:`draw_label` draws for ``text``."""
    (tw, th), base = cv2.getTextSize(text, _FONT, scale, _thickness(scale))
    pad = _pad(scale)
    return tw + 2 * pad, th + base + 2 * pad


def _draw_tag(scene: Scene, text: str, top_left: tuple[int, int], color: Color, scale: float) -> None:
    """The tag with its top-left corner at ``top_left``, moved inside the frame where it would leave it."""
    thickness, pad = _thickness(scale), _pad(scale)
    (tw, th), base = cv2.getTextSize(text, _FONT, scale, thickness)
    x = min(max(0, top_left[0]), max(0, scene.shape[1] - tw - 2 * pad))
    y_top = min(max(0, top_left[1]), max(0, scene.shape[0] - th - base - 2 * pad))
    cv2.rectangle(scene, (x, y_top), (x + tw + 2 * pad, y_top + th + base + 2 * pad), color, -1)
    cv2.putText(scene, text, (x + pad, y_top + pad + th), _FONT, scale, ink_for(color), thickness, cv2.LINE_AA)


def _overlap(a: Rect, b: Rect) -> float:
    """Area shared by two rectangles (0 when they only touch)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _candidates(box: Rect, w: float, h: float, gap: float) -> list[tuple[float, float]]:
    """Top-left corners to try for a ``w`` x ``h`` tag of ``box``, nearest first: ring by ring, outwards."""
    x1, y1, x2, y2 = box
    centre = (x1 + x2 - w) / 2
    out: list[tuple[float, float]] = []
    for ring in range(_RINGS + 1):
        up, down = y1 - h - gap - ring * (h + gap), y2 + gap + ring * (h + gap)
        right, left = x2 + gap + ring * (h + gap), x1 - w - gap - ring * (h + gap)
        out += [(x1, up), (x2 - w, up), (centre, up), (x1, down), (x2 - w, down), (centre, down)]
        out += [(right, y1), (left, y1), (right, y2 - h), (left, y2 - h)]
    return out


def place_labels(
    boxes: Sequence[Rect],
    sizes: Sequence[tuple[float, float]],
    frame: tuple[float, float],
    gap: float = 2.0,
    order: Iterable[int] | None = None,
) -> list[Rect]:
    """Where each die's tag goes: beside its die, covering no die's box and no tag placed before it.

    Each tag tries the spots beside its die, nearest first (above, below, at the sides), then the
    same a step further out, up to six steps; the first spot inside the frame that covers nothing
    wins. Where every spot covers something (dice packed edge to edge), the one that covers least.

    Args:
        boxes: each die's box ``(x1, y1, x2, y2)``, in pixels.
        sizes: each tag's width and height, in the same order.
        frame: the frame's width and height: tags stay inside it.
        gap: pixels kept between a tag and its die.
        order: which tags are placed first (they get the nearest spots); default the given order.

    Returns:
        Each tag's rectangle ``(x1, y1, x2, y2)``, in the order of ``boxes``.
    """
    if len(boxes) != len(sizes):
        raise ValueError(f"{len(boxes)} boxes but {len(sizes)} tag sizes")
    width, height = frame
    placed: dict[int, Rect] = {}
    for i in range(len(boxes)) if order is None else order:
        w, h = sizes[i]
        obstacles = [*boxes, *placed.values()]
        best: tuple[float, Rect] | None = None
        for x, y in _candidates(boxes[i], w, h, gap):
            x, y = min(max(0.0, x), max(0.0, width - w)), min(max(0.0, y), max(0.0, height - h))
            rect = (x, y, x + w, y + h)
            cost = sum(_overlap(rect, other) for other in obstacles)
            if best is None or cost < best[0]:
                best = (cost, rect)
            if cost == 0:
                break
        assert best is not None  # there is always a candidate
        placed[i] = best[1]
    return [placed[i] for i in range(len(boxes))]


def _grown(box: Rect, by: float) -> Rect:
    return box[0] - by, box[1] - by, box[2] + by, box[3] + by


def leader_line(box: Rect, tag: Rect, gap: float = 2.0) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """A line from a tag that had to move away from its die to that die, or None when it lies beside it."""
    dx = max(box[0] - tag[2], tag[0] - box[2], 0.0)
    dy = max(box[1] - tag[3], tag[1] - box[3], 0.0)
    if max(dx, dy) <= 2 * gap + 1:
        return None

    def nearest(rect: Rect, x: float, y: float) -> tuple[int, int]:
        return round(min(max(x, rect[0]), rect[2])), round(min(max(y, rect[1]), rect[3]))

    box_centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    start = nearest(tag, *box_centre)
    return start, nearest(box, *start)


class FaceLabelAnnotator(Annotator):
    """A tag beside each die: its face, or why it must be thrown again or checked; its number; KEEP.

    Args:
        scale: font scale; None scales it with the frame (0.6 at 640 wide).
        show_confidence: append the face confidence ("5 0.97").
        keep_faces: faces of the advised keep: those dice's tags say KEEP (the keep's colour).
        number_flagged: number every die that is not read as scoring ("#2 LEAN"), as the text names it.
        number_all: number every die ("#3 5"), while the players pick one by its number to correct it.
    """

    def __init__(
        self,
        scale: float | None = None,
        show_confidence: bool = False,
        keep_faces: Iterable[int] = (),
        number_flagged: bool = True,
        number_all: bool = False,
    ) -> None:
        self.scale = scale
        self.show_confidence = show_confidence
        self.keep_faces = tuple(int(f) for f in keep_faces)
        self.number_flagged = number_flagged
        self.number_all = number_all

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Draw each die's tag where it covers no other die and no other tag."""
        scale = self.scale or max(0.4, scene.shape[1] / 1070)
        kept = set(keep_indices(reading, self.keep_faces))
        dice = reading.dice()
        texts = [
            label_text(
                die,
                self.show_confidence,
                number=i + 1 if self.number_all or (self.number_flagged and die.status is not DieStatus.OK) else None,
                keep=i in kept,
            )
            for i, die in enumerate(dice)
        ]
        ring = keep_margin(scene.shape[1])  # a kept die's outline: its tag keeps clear of it
        boxes = [_grown(die.box, ring) if i in kept else die.box for i, die in enumerate(dice)]
        sizes = [tag_size(text, scale) for text in texts]
        # The dice a player must act on first, so that theirs are the tags beside their dice.
        order = sorted(range(len(dice)), key=lambda i: (dice[i].status is DieStatus.OK, i not in kept, i))
        tags = place_labels(boxes, sizes, (scene.shape[1], scene.shape[0]), gap=2.0, order=order)
        for i, (die, text, tag) in enumerate(zip(dice, texts, tags, strict=True)):
            color = KEEP_COLOR if i in kept else STATUS_COLORS[die.status]
            line = leader_line(boxes[i], tag)
            if line is not None:
                cv2.line(scene, line[0], line[1], color, max(1, round(scale * 2)), cv2.LINE_AA)
            _draw_tag(scene, text, (round(tag[0]), round(tag[1])), color, scale)
        return scene


def label_text(die: Die, show_confidence: bool = False, number: int | None = None, keep: bool = False) -> str:
    """A die's tag: ``"5"``, ``"4 OUT"``, ``"3?"`` or ``"?"``, ``"LEAN"``; ``"#2 LEAN"`` numbered, ``"5 KEEP"`` kept."""
    text = str(die.face) if die.face is not None else ""
    if die.status is DieStatus.COCKED:
        text = _SHORT[die.status]  # a leaning die shows no face worth naming
    elif die.status is DieStatus.UNCERTAIN:
        text += _SHORT[die.status]  # "3?": the reader's best guess, to be checked
    elif die.status is not DieStatus.OK:
        text = f"{text} {_SHORT[die.status]}".strip()
    if number is not None:
        text = f"#{number} {text}"
    if keep:
        text += " KEEP"
    if show_confidence:
        text = f"{text} {die.face_confidence:.2f}"
    return text
