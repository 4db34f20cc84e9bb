"""Labelled pictures a profile is taught from: YOLO label files beside their images, or in ``labels/``.

A label line is ``class cx cy w h`` normalised to the picture, ``class`` = top face - 1 (6: a
die leaning with no face up, as the project's generated scenes write it), then optionally the
die's status, ``ok``, ``cocked`` or ``off_tray``; anything after it is ignored. A box may cover
the whole die or only its top face: it is matched to the reader's own boxes by centre.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from farklecam.vision.faces.classifier import COCKED_NAME
from farklecam.vision.profiles.profile import OFF_TRAY

__all__ = [
    "COCKED_CLASS",
    "IMAGE_SUFFIXES",
    "STATUSES",
    "LabelledDie",
    "label_file_for",
    "labelled_pictures",
    "read_label_file",
]

#: Class id of a die leaning with no face up.
COCKED_CLASS = 6
#: The statuses a label line may end with.
STATUSES: tuple[str, ...] = ("ok", COCKED_NAME, OFF_TRAY)
#: Pictures looked for in a labelled folder.
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"})


@dataclass(frozen=True, slots=True)
class LabelledDie:
    """One labelled die: its truth (a profile's), the face where known, and its box normalised to the picture."""

    truth: str
    face: int | None
    cx: float
    cy: float
    w: float
    h: float

    def xyxy(self, width: int, height: int) -> tuple[float, float, float, float]:
        """The box in pixels of a picture of this size."""
        return (
            (self.cx - self.w / 2) * width,
            (self.cy - self.h / 2) * height,
            (self.cx + self.w / 2) * width,
            (self.cy + self.h / 2) * height,
        )


def _die(fields: list[str]) -> LabelledDie:
    """One label line's die (ValueError saying what is wrong with it)."""
    if len(fields) < 5:
        raise ValueError("expected 'class cx cy w h [ok|cocked|off_tray]'")
    try:
        cls = int(fields[0])
        cx, cy, w, h = (float(v) for v in fields[1:5])
    except ValueError:
        raise ValueError("class must be a whole number and cx cy w h numbers") from None
    if not 0 <= cls <= COCKED_CLASS:
        raise ValueError(f"class {cls} is no die: 0-5 are faces 1-6, 6 a die leaning with no face up")
    if not all(math.isfinite(v) for v in (cx, cy, w, h)) or not (
        0 <= cx <= 1 and 0 <= cy <= 1 and 0 < w <= 1 and 0 < h <= 1
    ):
        raise ValueError("cx cy must lie in 0..1 and w h in (0, 1]: the box normalised to the picture")
    status = fields[5] if len(fields) > 5 else None
    if status is not None and status not in STATUSES:
        raise ValueError(f"status {status!r} is none of {', '.join(STATUSES)}")
    face = cls + 1 if cls < COCKED_CLASS else None
    if face is None and status == "ok":
        raise ValueError("class 6 is a die leaning with no face up, yet its status says ok")
    if status == COCKED_NAME or (face is None and status is None):
        return LabelledDie(COCKED_NAME, None, cx, cy, w, h)
    if status == OFF_TRAY:
        return LabelledDie(OFF_TRAY, face, cx, cy, w, h)
    return LabelledDie(str(face), face, cx, cy, w, h)


def read_label_file(path: Path) -> list[LabelledDie]:
    """Every labelled die of one label file.

    Raises:
        OSError: the file cannot be read.
        ValueError: a line that is no label (the message names the line).
    """
    dice = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        try:
            dice.append(_die(fields))
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}, got {line.strip()!r}") from None
    return dice


def label_file_for(image: Path) -> Path:
    """Where an image's labels are: ``x.txt`` beside it, else ``labels/x.txt`` for ``images/x.jpg`` or beside it."""
    beside = image.with_suffix(".txt")
    if beside.is_file():
        return beside
    if image.parent.name == "images":
        swapped = image.parent.parent / "labels" / f"{image.stem}.txt"
        if swapped.is_file():
            return swapped
    below = image.parent / "labels" / f"{image.stem}.txt"
    return below if below.is_file() else beside


def labelled_pictures(folder: Path) -> list[tuple[Path, Path]]:
    """Every picture below ``folder`` and the label file it should have (which may be missing), sorted."""
    images = sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    return [(image, label_file_for(image)) for image in images]
