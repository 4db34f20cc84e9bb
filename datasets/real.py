"""The shared real dice photos: typed loaders, whole-die boxes, a fixed held-out split.

The photos live beside the checkout in ``../shared/datasets/real`` (override
with ``FARKLECAM_REAL_DATA``) and are never copied into the repository. Two
sources use two box conventions (see that folder's README):

- ``byler_d6``: boxes cover the whole die, like farklecam's detector.
- ``matteop65_webcam``: boxes cover only the *pip pattern* on the top face (a
  one's box is a small square around its single pip). :func:`whole_die_boxes`
  enlarges them to the die so both sources can train one "die" detector.

Every source is split once, by a stable hash of the file name, into a training
part and a held-out part (:func:`split`). The held-out photos are for
measurement only: no training code may read them, and ``tests/datasets``
checks that the training sets built from them stay disjoint.

Inside the training part, a further slice is the *validation* photos
(:func:`validation_split`). They are ordinary training photos unless a run
holds them back (``python -m farklecam.models.training --hold-validation``): then they
choose between recipes on real dice without anyone looking at the held-out
photos, which must stay a measurement of the one model finally chosen.

Command line::

    python -m farklecam.datasets.real export-holdout OUT   # OUT/<source>/{images,labels} for
    farklecam.models.evaluate.run
    python -m farklecam.datasets.real export-holdout OUT --validation   # the validation photos instead
    python -m farklecam.datasets.real preview OUT.png      # draws derived matteop boxes for a visual check
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.datasets.yolo import YoloBox, label_path_for, read_labels, write_labels

__all__ = [
    "DIE_PER_PATTERN",
    "HOLDOUT_PERCENT",
    "SIDE_BAND",
    "SOURCES",
    "STRAIGHT_DOWN_SOURCES",
    "VALIDATION_PERCENT",
    "RealImage",
    "export_holdout",
    "is_holdout",
    "is_validation",
    "load_source",
    "real_data_root",
    "split",
    "validation_split",
    "whole_die_boxes",
]

#: Sources under the real-data folder; the value says whether boxes are pip patterns.
SOURCES: dict[str, bool] = {"byler_d6": False, "matteop65_webcam": True}
#: Sources photographed looking straight down (byler: a phone held over the dice), so the camera's
#: vertical is the picture's centre (:func:`farklecam.vision.pose.upright.straight_down_view`). Their flat dice can
#: teach and test the cocked test on real dice; matteop's webcam looks at a tilt nobody measured.
STRAIGHT_DOWN_SOURCES: tuple[str, ...] = ("byler_d6",)
#: Share of each source held out for evaluation (chosen by file-name hash, never trained on).
HOLDOUT_PERCENT = 20
#: Share of each source (of all its photos) that is the validation slice of the training part.
VALIDATION_PERCENT = 15
#: Whole-die box side over pip-pattern box side for faces 4, 5 and 6, whose pips span most of the face.
#: Both boxes are axis-aligned bounds of square shapes, so the ratio holds at any rotation. Measured
#: by drawing matteop photos (``preview``): the pattern of a 4-6 spans about 0.7 of the top face.
DIE_PER_PATTERN = 1.45
#: The matteop webcam looks down at a slight tilt, so a band of the die's near side shows below its
#: top face; whole-die boxes add this share of the side below the top face (measured by drawing).
SIDE_BAND = 0.2
#: Faces whose pip pattern spans most of the face, used to measure the die's size in a photo.
_SPANNING_FACES = (4, 5, 6)


@dataclass(frozen=True, eq=False)
class RealImage:
    """One labelled real photo.

    Attributes:
        source: folder name under the real-data root, e.g. ``"byler_d6"``.
        path: the image file.
        width: image width in pixels.
        height: image height in pixels.
        faces: top face (1..6) of each die, shape (n,), int64.
        boxes: whole-die boxes ``x1, y1, x2, y2`` in pixels, shape (n, 4), float32
            (derived for pip-pattern sources, see :func:`whole_die_boxes`).
        label_boxes: the boxes as labelled in the source, shape (n, 4), float32.
    """

    source: str
    path: Path
    width: int
    height: int
    faces: npt.NDArray[np.int64]
    boxes: npt.NDArray[np.float32]
    label_boxes: npt.NDArray[np.float32]

    @property
    def name(self) -> str:
        """A file name unique across sources: ``<source>__<stem><suffix>``."""
        return f"{self.source}__{self.path.name}"

    def yolo_boxes(self, *, whole_die: bool = True, one_class: bool = False) -> list[YoloBox]:
        """Labels for this image in the YOLO convention of :mod:`farklecam.datasets.yolo`.

        Args:
            whole_die: use the whole-die boxes (else the boxes as labelled).
            one_class: class 0 ("die") for every box instead of ``face - 1``.
        """
        boxes = self.boxes if whole_die else self.label_boxes
        return [
            YoloBox.from_xyxy(0 if one_class else int(f) - 1, b, self.width, self.height)
            for f, b in zip(self.faces, boxes, strict=True)
        ]


def real_data_root() -> Path:
    """The real-data folder: ``$FARKLECAM_REAL_DATA`` or ``<repo>/../shared/datasets/real``."""
    env = os.environ.get("FARKLECAM_REAL_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "real"


def _bucket(file_name: str) -> int:
    """A stable bucket 0-99 from a hash of the file name alone.

    A hash rather than a random draw keeps the split identical on every machine
    and when photos are added (existing ones never change side).
    """
    digest = hashlib.sha256(file_name.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % 100


def is_holdout(file_name: str, percent: int = HOLDOUT_PERCENT) -> bool:
    """Whether a photo is held out: its bucket is below ``percent``."""
    return _bucket(file_name) < percent


def is_validation(file_name: str) -> bool:
    """Whether a training photo is in the validation slice: the buckets just above the held-out ones."""
    return HOLDOUT_PERCENT <= _bucket(file_name) < HOLDOUT_PERCENT + VALIDATION_PERCENT


def whole_die_boxes(
    pattern_xyxy: npt.ArrayLike,
    faces: npt.ArrayLike,
    width: int,
    height: int,
    fallback_side: float | None = None,
) -> npt.NDArray[np.float32]:
    """Enlarge pip-pattern boxes to whole-die boxes (clipped to the image).

    The side is the die's size in this photo: the median over its dice showing
    4, 5 or 6 of ``DIE_PER_PATTERN`` x the pattern's longer side. A photo
    without such a die uses ``fallback_side`` (a dataset-wide median). A box
    already larger than that (some ones are labelled around the whole face)
    keeps its own size, so the result always contains the original box. The
    top face is a square of that side around the pattern's centre; the box
    then reaches ``SIDE_BAND`` of a side further down for the visible near
    side of the die (the webcam is tilted).

    Args:
        pattern_xyxy: labelled boxes, shape (n, 4), pixels.
        faces: top faces 1..6, shape (n,).
        width: image width in pixels.
        height: image height in pixels.
        fallback_side: die side to use when no 4-6 is in the photo.

    Returns:
        Boxes of shape (n, 4), float32, inside the image.
    """
    boxes = np.asarray(pattern_xyxy, dtype=np.float32).reshape(-1, 4)
    faces_arr = np.asarray(faces).reshape(-1)
    if len(boxes) == 0:
        return boxes
    longer = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    spanning = np.isin(faces_arr, _SPANNING_FACES)
    if spanning.any():
        side = float(np.median(longer[spanning])) * DIE_PER_PATTERN
    elif fallback_side is not None:
        side = fallback_side
    else:
        side = float(np.max(longer)) * DIE_PER_PATTERN
    sides = np.maximum(side, longer)
    half = sides[:, None] / 2.0
    centre = (boxes[:, :2] + boxes[:, 2:]) / 2.0
    out = np.concatenate([centre - half, centre + half], axis=1)
    out[:, 3] += SIDE_BAND * sides
    out[:, [0, 2]] = out[:, [0, 2]].clip(0, width)
    out[:, [1, 3]] = out[:, [1, 3]].clip(0, height)
    # The labelled box lies inside the image, so clipping never cuts into it.
    return out.astype(np.float32)


def _image_size(path: Path) -> tuple[int, int]:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ValueError(f"{path}: not a readable image")
    return int(image.shape[1]), int(image.shape[0])


@lru_cache(maxsize=8)
def _load_source_cached(root: Path, source: str) -> tuple[RealImage, ...]:
    folder = root / source
    if source not in SOURCES:
        raise ValueError(f"unknown real source {source!r}; expected one of {sorted(SOURCES)}")
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: real photos not found (set FARKLECAM_REAL_DATA)")
    raw: list[tuple[Path, int, int, npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
    for path in sorted((folder / "images").iterdir()):
        if path.suffix.lower() not in (".jpg", ".jpeg", ".png"):
            continue
        width, height = _image_size(path)
        labels = read_labels(label_path_for(path))
        faces = np.array([b.cls + 1 for b in labels], dtype=np.int64)
        xyxy = np.array([b.to_xyxy(width, height) for b in labels], dtype=np.float32).reshape(-1, 4)
        raw.append((path, width, height, faces, xyxy))
    fallback = _median_die_side(raw) if SOURCES[source] else None
    images = []
    for path, width, height, faces, xyxy in raw:
        boxes = whole_die_boxes(xyxy, faces, width, height, fallback) if SOURCES[source] else xyxy
        images.append(RealImage(source, path, width, height, faces, boxes, xyxy))
    return tuple(images)


def _median_die_side(
    raw: Sequence[tuple[Path, int, int, npt.NDArray[np.int64], npt.NDArray[np.float32]]],
) -> float:
    """Dataset-wide median die side, from the pattern boxes of every 4, 5 and 6."""
    sides = [
        max(b[2] - b[0], b[3] - b[1]) * DIE_PER_PATTERN
        for _, _, _, faces, xyxy in raw
        for f, b in zip(faces, xyxy, strict=True)
        if f in _SPANNING_FACES
    ]
    return float(np.median(sides))


def load_source(source: str, root: Path | None = None) -> list[RealImage]:
    """Every labelled photo of one source, sorted by file name.

    Raises:
        ValueError: an unknown source name.
        FileNotFoundError: the real-data folder is missing.
    """
    return list(_load_source_cached((root or real_data_root()).resolve(), source))


def split(source: str, root: Path | None = None) -> tuple[list[RealImage], list[RealImage]]:
    """The fixed ``(train, holdout)`` split of a source (see :func:`is_holdout`)."""
    images = load_source(source, root)
    train = [im for im in images if not is_holdout(im.path.name)]
    holdout = [im for im in images if is_holdout(im.path.name)]
    return train, holdout


def validation_split(source: str, root: Path | None = None) -> tuple[list[RealImage], list[RealImage]]:
    """The training part of a source as ``(fit, validation)`` (see :func:`is_validation`)."""
    train, _ = split(source, root)
    return (
        [im for im in train if not is_validation(im.path.name)],
        [im for im in train if is_validation(im.path.name)],
    )


def export_holdout(
    out: Path, sources: Sequence[str] = tuple(SOURCES), *, whole_die: bool = True, validation: bool = False
) -> list[Path]:
    """Write each source's held-out photos as a YOLO folder ``out/<source>/{images,labels}``.

    Labels keep the face classes (``face - 1``); boxes are whole-die boxes
    unless ``whole_die`` is false. Images are copied (the output is meant to
    live outside the repository, e.g. under ``data/``). ``validation`` writes
    the validation photos instead of the held-out ones.

    Returns:
        The folders written, one per source.
    """
    folders = []
    for source in sources:
        holdout = validation_split(source)[1] if validation else split(source)[1]
        folder = out / source
        for sub in ("images", "labels"):
            shutil.rmtree(folder / sub, ignore_errors=True)
        (folder / "images").mkdir(parents=True)
        for im in holdout:
            shutil.copy2(im.path, folder / "images" / im.path.name)
            write_labels(folder / "labels" / f"{im.path.stem}.txt", im.yolo_boxes(whole_die=whole_die))
        folders.append(folder)
    return folders


def draw_preview(images: Sequence[RealImage], tile: tuple[int, int] = (480, 360)) -> npt.NDArray[np.uint8]:
    """A grid of photos with labelled boxes (red) and whole-die boxes (green), for a visual check."""
    tiles = []
    for im in images:
        # The images were listed from files on disk, so imread finds each one.
        frame = cast("npt.NDArray[np.uint8]", cv2.imread(str(im.path)))
        for face, lab, box in zip(im.faces, im.label_boxes, im.boxes, strict=True):
            cv2.rectangle(frame, tuple(int(v) for v in lab[:2]), tuple(int(v) for v in lab[2:]), (0, 0, 255), 1)
            cv2.rectangle(frame, tuple(int(v) for v in box[:2]), tuple(int(v) for v in box[2:]), (0, 255, 0), 1)
            org = (int(box[0]), max(int(box[1]) - 3, 10))
            cv2.putText(frame, str(face), org, cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 0), 1)
        tiles.append(cv2.resize(frame, tile))
    while len(tiles) % 4:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i : i + 4]) for i in range(0, len(tiles), 4)]
    return np.vstack(rows).astype(np.uint8)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``export-holdout OUT`` or ``preview OUT.png``."""
    parser = argparse.ArgumentParser(prog="python -m farklecam.datasets.real", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser(
        "export-holdout", help="write held-out photos as YOLO folders for farklecam.models.evaluate.run"
    )
    exp.add_argument("out", type=Path)
    exp.add_argument("--label-boxes", action="store_true", help="keep the source's boxes (pip patterns)")
    exp.add_argument("--validation", action="store_true", help="the validation photos instead of the held-out ones")
    pre = sub.add_parser("preview", help="draw derived matteop whole-die boxes")
    pre.add_argument("out", type=Path)
    pre.add_argument("--count", type=int, default=12)
    args = parser.parse_args(argv)
    if args.command == "export-holdout":
        which = "validation" if args.validation else "held-out"
        for folder in export_holdout(args.out, whole_die=not args.label_boxes, validation=args.validation):
            n = len(list((folder / "images").iterdir()))
            sys.stdout.write(f"{folder}: {n} {which} images\n")
    else:
        images = load_source("matteop65_webcam")
        step = max(1, len(images) // args.count)
        cv2.imwrite(str(args.out), draw_preview(images[::step][: args.count]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
