"""Training sets for the two models, built from the real photos and the generated scenes.

Both models learn from the same labelled frames (:class:`Frame`): the training
part of each real source (:func:`farklecam.datasets.real.split`) and the training part
of a folder of generated scenes (:func:`synthetic_split`). Held-out frames of
either kind never reach a training set; the generated ones are split by the
same stable file-name hash as the real ones, at :data:`SYNTH_HOLDOUT_PERCENT`.

- :func:`build_detector_dataset` writes a one-class ("die") YOLO folder with a
  ``data.yaml`` for ultralytics (ASCII names and an absolute ``path:`` so it
  stays offline); images are symbolic links, labels are rewritten.
- ``farklecam.models.training.classifier`` cuts face crops from the same frames.

Command line::

    python -m farklecam.datasets.training_sets export-synth-holdout SYNTH_DIR OUT   # generated holdout for evaluation
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.datasets.real import SOURCES, RealImage, is_holdout, split, validation_split
from farklecam.datasets.yolo import YoloBox, find_images, label_path_for, read_labels, write_labels

__all__ = [
    "SYNTH_HOLDOUT_PERCENT",
    "SYNTH_SOURCE",
    "VAL_PERCENT",
    "DetectorDataset",
    "Frame",
    "build_detector_dataset",
    "export_synthetic_holdout",
    "is_synthetic_holdout",
    "read_synthetic_frame",
    "real_frames",
    "synthetic_frames",
    "synthetic_paths",
    "synthetic_split",
]

#: Share of generated scenes held out for evaluation.
SYNTH_HOLDOUT_PERCENT = 10
#: Share of the *training* frames that ultralytics validates on each epoch (picks ``best.pt``).
VAL_PERCENT = 8
#: Source name of generated scenes in data-mix counts.
SYNTH_SOURCE = "synthetic"


@dataclass(frozen=True, eq=False)
class Frame:
    """One labelled training frame, whatever its source.

    Attributes:
        source: ``"byler_d6"``, ``"matteop65_webcam"`` or ``"synthetic"``.
        path: the image file (full resolution).
        classes: class id per die, ``face - 1`` or 6 for cocked, shape (n,).
        boxes: whole-die boxes ``x1, y1, x2, y2`` in pixels, shape (n, 4), float32;
            empty (0, 4) with ``size`` None means "read the image to convert".
        size: ``(width, height)``.
    """

    source: str
    path: Path
    classes: npt.NDArray[np.int64]
    boxes: npt.NDArray[np.float32]
    size: tuple[int, int]

    @property
    def name(self) -> str:
        """A file name unique across sources: ``<source>__<file name>``."""
        return f"{self.source}__{self.path.name}"

    @classmethod
    def from_real(cls, image: RealImage) -> Frame:
        """A real photo with its whole-die boxes (derived ones for pip-pattern sources)."""
        return cls(image.source, image.path, image.faces - 1, image.boxes, (image.width, image.height))


def real_frames(sources: Iterable[str] = tuple(SOURCES), *, hold_validation: bool = False) -> list[Frame]:
    """The training part of each real source (never the held-out photos).

    ``hold_validation`` also leaves out the validation photos, for a run whose
    recipe they are to judge.
    """
    frames = []
    for source in sources:
        photos = validation_split(source)[0] if hold_validation else split(source)[0]
        frames += [Frame.from_real(im) for im in photos]
    return frames


def is_synthetic_holdout(image_name: str) -> bool:
    """Whether a generated scene's image (``s1_000042.jpg``) is held out, by its file-name hash.

    A scene's name fixes its split, so the generator can write a run's held-out scenes
    alone (``--holdout-only``) and they are the very scenes a full run would hold out.
    """
    return is_holdout(image_name, SYNTH_HOLDOUT_PERCENT)


def synthetic_split(folder: Path) -> tuple[list[Path], list[Path]]:
    """``(train, holdout)`` image paths of a folder of generated scenes, by file-name hash."""
    images = find_images(folder / "images" if (folder / "images").is_dir() else folder)
    train = [p for p in images if not is_synthetic_holdout(p.name)]
    holdout = [p for p in images if is_synthetic_holdout(p.name)]
    return train, holdout


def _stable_order(paths: Sequence[Path]) -> list[Path]:
    """Paths in a fixed pseudo-random order, so ``limit`` picks a spread-out, reproducible subset."""
    return sorted(paths, key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())


def read_synthetic_frame(path: Path) -> Frame | None:
    """One generated scene as a :class:`Frame` (None when the image is unreadable)."""
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        return None
    height, width = image.shape[:2]
    labels = read_labels(label_path_for(path))
    return Frame(
        SYNTH_SOURCE,
        path,
        np.array([b.cls for b in labels], dtype=np.int64),
        np.array([b.to_xyxy(width, height) for b in labels], dtype=np.float32).reshape(-1, 4),
        (width, height),
    )


def synthetic_paths(folder: Path, limit: int | None = None, *, holdout: bool = False) -> list[Path]:
    """The image paths :func:`synthetic_frames` reads, sorted: for callers that read the images themselves."""
    train, held = synthetic_split(folder)
    paths = held if holdout else train
    return sorted(_stable_order(paths)[:limit] if limit is not None else paths)


def synthetic_frames(folder: Path, limit: int | None = None, *, holdout: bool = False) -> list[Frame]:
    """Generated scenes as frames: the training part (default) or the holdout, at most ``limit``."""
    frames = (read_synthetic_frame(p) for p in synthetic_paths(folder, limit, holdout=holdout))
    return [f for f in frames if f is not None]


@dataclass
class DetectorDataset:
    """A written one-class detector dataset.

    Attributes:
        yaml: the ``data.yaml`` to pass to ultralytics.
        counts: ``{"train"|"val": {source: images}}``.
        dice: ``{"train"|"val": {source: boxes}}``.
    """

    yaml: Path
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    dice: dict[str, dict[str, int]] = field(default_factory=dict)


def build_detector_dataset(
    out: Path,
    frames: Sequence[Frame],
    val_percent: int = VAL_PERCENT,
    *,
    names: Sequence[str] = ("die",),
    label_class: Callable[[int], int] | None = None,
) -> DetectorDataset:
    """Write a YOLO dataset of ``frames`` under ``out`` (replacing an earlier one): one class by default.

    ``label_class`` maps a frame's class (``face - 1`` or 6 for cocked) to the detector's
    class in ``names`` (default: every die is class 0, the shipped one-class detector).

    A ``val_percent`` share of the frames (by file-name hash) becomes the
    validation split ultralytics uses to pick its best epoch (the training
    split itself when that leaves none); the held-out
    photos are not in ``frames`` and stay unseen.

    Returns:
        The dataset's YAML path and its per-source counts.
    """
    out = out.resolve()
    for sub in ("images", "labels"):
        shutil.rmtree(out / sub, ignore_errors=True)
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    dice: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    for frame in frames:
        part = "val" if is_holdout("val:" + frame.name, val_percent) else "train"
        image_dir = out / "images" / part
        image_dir.mkdir(parents=True, exist_ok=True)
        link = image_dir / frame.name
        os.symlink(frame.path.resolve(), link)
        width, height = frame.size
        classes = [0 if label_class is None else label_class(int(c)) for c in frame.classes]
        boxes = [YoloBox.from_xyxy(c, b, width, height) for c, b in zip(classes, frame.boxes, strict=True)]
        write_labels(out / "labels" / part / f"{link.stem}.txt", boxes)
        counts[part][frame.source] += 1
        dice[part][frame.source] += len(boxes)
    # A handful of frames (smoke tests) may leave no validation frame: validate on the training ones.
    val = "images/val" if counts["val"] else "images/train"
    yaml = out / "data.yaml"
    yaml.write_text(
        f"# die detector dataset written by farklecam.datasets.training_sets\n"
        f"path: {out}\ntrain: images/train\nval: {val}\nnames:\n"
        + "".join(f"  {i}: {name}\n" for i, name in enumerate(names))
    )
    return DetectorDataset(
        yaml,
        {k: dict(sorted(v.items())) for k, v in counts.items()},
        {k: dict(sorted(v.items())) for k, v in dice.items()},
    )


def export_synthetic_holdout(folder: Path, out: Path) -> int:
    """Copy the held-out generated scenes (images, YOLO labels, JSON sidecars) to ``out``.

    Returns:
        The number of scenes written.
    """
    _, holdout = synthetic_split(folder)
    for sub in ("images", "labels"):
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir(parents=True)
    for path in holdout:
        shutil.copy2(path, out / "images" / path.name)
        label = label_path_for(path)
        for extra in (label, label.with_suffix(".json")):
            if extra.exists():
                shutil.copy2(extra, out / "labels" / extra.name)
    meta = folder / "dataset.json"
    if meta.exists():
        shutil.copy2(meta, out / meta.name)
    return len(holdout)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``export-synth-holdout SYNTH_DIR OUT``."""
    parser = argparse.ArgumentParser(prog="python -m farklecam.datasets.training_sets")
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser(
        "export-synth-holdout", help="copy held-out generated scenes for farklecam.models.evaluate.run"
    )
    exp.add_argument("synth", type=Path)
    exp.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    n = export_synthetic_holdout(args.synth, args.out)
    sys.stdout.write(json.dumps({"out": str(args.out), "scenes": n}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
