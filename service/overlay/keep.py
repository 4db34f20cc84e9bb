"""Highlighting the dice of the advised keep."""

from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np

from farklecam.service.overlay.base import KEEP_COLOR, Annotator, Color, Scene
from farklecam.vision.reading import DieStatus, Reading

__all__ = ["KeepAnnotator", "keep_indices", "keep_margin"]


def keep_indices(reading: Reading, faces: Iterable[int]) -> list[int]:
    """Which dice of a reading make up ``faces`` (a multiset, e.g. ``[1, 5, 5]``).

    Only dice with status ok count; among dice of the same face the most confident
    are taken first. Faces with no matching die are skipped.
    """
    wanted = list(faces)
    ok = np.flatnonzero(reading.status == DieStatus.OK)
    order = ok[np.argsort(-reading.face_confidence[ok], kind="stable")]
    chosen: list[int] = []
    for face in wanted:
        for i in order:
            if int(reading.face[i]) == face and int(i) not in chosen:
                chosen.append(int(i))
                break
    return sorted(chosen)


def _thickness(width: int) -> int:
    return max(2, round(width / 200))


def keep_margin(width: int, thickness: int | None = None) -> int:
    """How far the keep's outline reaches outside a die's box on a frame ``width`` pixels wide.

    The tags keep clear of it (:func:`farklecam.service.overlay.labels.place_labels`), so a kept die's
    outline never runs through a tag.
    """
    line = thickness or _thickness(width)
    return line + 2 + (line + 1) // 2


class KeepAnnotator(Annotator):
    """A thick outline around the dice of the best keep.

    The faces to keep come from the caller (the scorer's advice) as plain ints, so
    the overlay never imports the scoring engine. Their "KEEP" tag is drawn by
    :class:`farklecam.service.overlay.labels.FaceLabelAnnotator` (given the same faces),
    which lays every tag out so that none covers a neighbouring die.

    Args:
        faces: the faces to set aside, e.g. ``[1, 5, 5]``.
        color: outline colour (BGR).
        thickness: line width; None scales it with the frame.
    """

    def __init__(self, faces: Iterable[int] = (), color: Color = KEEP_COLOR, thickness: int | None = None) -> None:
        self.faces = tuple(int(f) for f in faces)
        self.color = color
        self.thickness = thickness

    def annotate(self, scene: Scene, reading: Reading) -> Scene:
        """Outline each kept die just outside its box."""
        thickness = self.thickness or _thickness(scene.shape[1])
        for i in keep_indices(reading, self.faces):
            x1, y1, x2, y2 = (round(float(v)) for v in reading.xyxy[i])
            m = thickness + 2
            cv2.rectangle(scene, (x1 - m, y1 - m), (x2 + m, y2 + m), self.color, thickness, cv2.LINE_AA)
        return scene
