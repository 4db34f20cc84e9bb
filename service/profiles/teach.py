"""Teaching a profile from a labelled picture: each labelled die becomes a correction of the reader's own box.

The crop is cut around the box the reader's detector found, not the labelled one, so that what
the profile holds is what a read will compare: label boxes differ in convention (the whole die,
or only its top face) but agree with the detector's on the die's centre.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from farklecam.service.profiles.labels import read_label_file
from farklecam.vision.images import load_image
from farklecam.vision.profiles.adapter import ProfileAdapter
from farklecam.vision.reading import Reading

__all__ = ["TaughtPicture", "match_by_centre", "teach_picture"]


@dataclass(frozen=True, slots=True)
class TaughtPicture:
    """What one picture taught: corrections added, and labelled dice the detector found no box for."""

    path: Path
    added: int
    unmatched: int


def match_by_centre(found: npt.ArrayLike, labelled: npt.ArrayLike) -> list[tuple[int, int]]:
    """Pairs ``(found index, labelled index)``, one to one, closest centres first.

    A found box stands for a labelled one when the centre of either lies inside the other.
    """
    a = np.asarray(found, np.float64).reshape(-1, 4)
    b = np.asarray(labelled, np.float64).reshape(-1, 4)
    if not len(a) or not len(b):
        return []
    ca, cb = (a[:, :2] + a[:, 2:]) / 2, (b[:, :2] + b[:, 2:]) / 2

    def inside(points: npt.NDArray[np.float64], boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        x, y = points[:, None, 0], points[:, None, 1]
        return np.asarray((x >= boxes[:, 0]) & (x <= boxes[:, 2]) & (y >= boxes[:, 1]) & (y <= boxes[:, 3]), bool)

    may = inside(ca, b) | inside(cb, a).T
    distance = np.linalg.norm(ca[:, None] - cb[None], axis=2)
    rows, cols = np.nonzero(may)
    pairs, used_a, used_b = [], set(), set()
    for k in np.argsort(distance[rows, cols], kind="stable"):
        i, j = int(rows[k]), int(cols[k])
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def teach_picture(
    adapter: ProfileAdapter,
    detector: Callable[[npt.NDArray[np.uint8]], Reading],
    image: Path,
    labels: Path,
) -> TaughtPicture:
    """Add every labelled die of one picture to the adapter's profile.

    Raises:
        ImageError: the picture cannot be read.
        OSError: the label file cannot be read (missing included).
        ValueError: a label line is malformed.
        ProfileError: the profile cannot be written.
    """
    dice = read_label_file(labels)
    frame = load_image(image)
    height, width = frame.shape[:2]
    boxes = np.array([d.xyxy(width, height) for d in dice], np.float32).reshape(-1, 4)
    found = detector(frame) if dice else Reading.empty((width, height))
    pairs = match_by_centre(found.xyxy, boxes)
    if pairs:
        adapter.correct(
            frame,
            found.xyxy[[i for i, _ in pairs]],
            [dice[j].truth for _, j in pairs],
            faces=[dice[j].face for _, j in pairs],
            source=image.name,
        )
    return TaughtPicture(image, len(pairs), len(dice) - len(pairs))
