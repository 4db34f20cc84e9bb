"""YOLO-format labels: the one reader and writer every dataset in farklecam goes through.

A label file holds one line per object, ``class cx cy w h``, normalised to the
image size. farklecam's class ids follow the real photo sets
(``../shared/datasets/real``): ``class = top face - 1`` (0 is a one, 5 is a six),
and generated scenes add class 6 for a cocked die (no face flat up).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "CLASS_NAMES",
    "COCKED_CLASS",
    "HIDDEN_BELOW",
    "IMAGE_SUFFIXES",
    "LINE_STATUSES",
    "OCCLUDED_BELOW",
    "DieLabel",
    "YoloBox",
    "find_images",
    "label_file",
    "label_path_for",
    "read_labels",
    "read_sidecar",
    "write_example",
    "write_labels",
]

#: Class id of a die that leans with no face flat up (generated scenes only).
COCKED_CLASS = 6
#: Names of the class ids, in order.
CLASS_NAMES: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", "cocked")
#: File suffixes treated as images when scanning a folder.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")


@dataclass(frozen=True, slots=True)
class YoloBox:
    """One labelled object, normalised to the image (all four numbers in 0..1)."""

    cls: int
    cx: float
    cy: float
    w: float
    h: float

    def to_xyxy(self, width: int, height: int) -> tuple[float, float, float, float]:
        """The box in pixels of an image of the given size."""
        return (
            (self.cx - self.w / 2) * width,
            (self.cy - self.h / 2) * height,
            (self.cx + self.w / 2) * width,
            (self.cy + self.h / 2) * height,
        )

    @classmethod
    def from_xyxy(cls, class_id: int, xyxy: Sequence[float], width: int, height: int) -> YoloBox:
        """Build a normalised box from pixel corners, clipped to the image."""
        x1, y1, x2, y2 = (float(v) for v in xyxy)
        x1, x2 = max(0.0, min(x1, width)), max(0.0, min(x2, width))
        y1, y2 = max(0.0, min(y1, height)), max(0.0, min(y2, height))
        return cls(class_id, (x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height)


#: A die showing less than this share of itself to the camera is left out of the labels (every generator).
HIDDEN_BELOW = 0.12
#: A die showing less than this share (or clipped to less of its box) is marked ``occluded`` in its sidecar.
OCCLUDED_BELOW = 0.5


@dataclass(frozen=True, slots=True)
class DieLabel:
    """One labelled die, as a generator writes it: its YOLO box and its sidecar entry."""

    box: YoloBox
    entry: dict[str, Any]


def label_path_for(image_path: Path) -> Path:
    """The label file of an image: ``.../images/x.jpg`` -> ``.../labels/x.txt`` (else beside it)."""
    parts = list(image_path.parts)
    if "images" in parts:
        i = len(parts) - 1 - parts[::-1].index("images")
        parts[i] = "labels"
        return Path(*parts).with_suffix(".txt")
    return image_path.with_suffix(".txt")


def label_file(image_path: Path) -> Path:
    """The label file to read for an image: :func:`label_path_for`, else ``labels/x.txt`` beside it.

    The second form is the layout of the bundled ``examples/`` (images at the top, labels below).
    """
    path = label_path_for(image_path)
    beside = image_path.parent / "labels" / f"{image_path.stem}.txt"
    return path if path.exists() or not beside.exists() else beside


def read_sidecar(image_path: Path) -> dict[str, Any]:
    """A generated scene's JSON sidecar beside its label file (tray, camera, every die's truth); ``{}`` if none."""
    path = label_file(image_path).with_suffix(".json")
    return dict(json.loads(path.read_text())) if path.exists() else {}


#: Statuses a label line may end with (a profile's export, ``farklecam profiles export``); the class alone trains.
LINE_STATUSES = ("ok", "cocked", "off_tray")


def read_labels(path: Path) -> list[YoloBox]:
    """Read a YOLO label file; a missing file means an image with no objects.

    A line may end with a die's status (:data:`LINE_STATUSES`), which is read past: a leaning
    die's class is already 6, and a die off the tray shows its face like any other.

    Raises:
        ValueError: a line that is not ``class cx cy w h [status]`` (the message names file and line).
    """
    if not path.exists():
        return []
    boxes = []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) == 6 and fields[5] in LINE_STATUSES:
            fields = fields[:5]
        if len(fields) != 5:
            raise ValueError(f"{path}:{n}: expected 'class cx cy w h [ok|cocked|off_tray]', got {line!r}")
        boxes.append(YoloBox(int(float(fields[0])), *(float(f) for f in fields[1:])))
    return boxes


def write_labels(path: Path, boxes: Iterable[YoloBox]) -> None:
    """Write a YOLO label file (creating its folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{b.cls} {b.cx:.6f} {b.cy:.6f} {b.w:.6f} {b.h:.6f}" for b in boxes]
    path.write_text("\n".join(lines) + ("\n" if lines else ""))


def write_example(
    out: Path, name: str, image: npt.NDArray[np.uint8], boxes: Iterable[YoloBox], sidecar: dict[str, Any]
) -> Path:
    """Write one labelled picture under ``out``: ``images/NAME.jpg``, its YOLO labels and its sidecar.

    The JPEG quality is the sidecar's ``post.jpeg_quality`` (default 90). The sidecar is
    written last, so it marks a finished example (generators resume by it). Returns the image path.
    """
    path = out / "images" / f"{name}.jpg"
    path.parent.mkdir(parents=True, exist_ok=True)
    quality = int(sidecar.get("post", {}).get("jpeg_quality", 90))
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    write_labels(out / "labels" / f"{name}.txt", boxes)
    (out / "labels" / f"{name}.json").write_text(json.dumps(sidecar, indent=1))
    return path


def find_images(root: Path) -> list[Path]:
    """Every image below ``root`` (or ``root`` itself if it is an image), sorted."""
    if root.is_file():
        return [root] if root.suffix.lower() in IMAGE_SUFFIXES else []
    return sorted(p for p in root.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
