"""Can a die lean here? A cocked die rests on something: another die or the tray's wall.

A die on a flat floor with nothing beside it falls flat; it can only stay tilted
when something props it up. The face classifier sees one crop and cannot know
that, so it sometimes calls a flat die in a perspective view "cocked". This
module supplies the missing fact from the whole frame: which dice have a
possible support (another die's box within reach, the tray outline's edge
within reach, or the edge of the picture, beyond which a support may hide).
The reader only lets a die be cocked where it has one.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from vision.tray.outline import TrayOutline

__all__ = ["SUPPORT_REACH", "covered_fraction", "may_lean", "near_picture_edge"]

#: How far a support may be from a die's box, as a fraction of the die's side.
SUPPORT_REACH = 0.35


def may_lean(
    xyxy: npt.ArrayLike,
    tray: TrayOutline | None,
    image_size: tuple[int, int],
    reach: float = SUPPORT_REACH,
) -> npt.NDArray[np.bool_]:
    """Which dice have something within reach to lean on.

    Args:
        xyxy: boxes, shape (n, 4), frame pixels.
        tray: the tray outline; None when unknown (then the wall may be anywhere,
            and every die may lean).
        image_size: ``(width, height)`` of the frame.
        reach: how far a support may be, as a fraction of each die's side.

    Returns:
        Shape (n,) booleans.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    n = len(boxes)
    if tray is None:
        return np.ones(n, bool)
    side = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    margin = (reach * side)[:, None]
    grown = boxes + np.concatenate([-margin, -margin, margin, margin], axis=1)
    # Another die: the grown boxes of the two overlap.
    overlap = (
        (grown[:, None, 0] <= grown[None, :, 2])
        & (grown[None, :, 0] <= grown[:, None, 2])
        & (grown[:, None, 1] <= grown[None, :, 3])
        & (grown[None, :, 1] <= grown[:, None, 3])
    )
    np.fill_diagonal(overlap, False)
    near_die = overlap.any(axis=1)
    # The picture's edge: the support may be out of view.
    near_edge = near_picture_edge(boxes, image_size, reach * side)
    # The wall: the tray outline's edge within half a side plus the reach of the box centre.
    contour = tray.polygon.astype(np.float32).reshape(-1, 1, 2)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    wall_dist = np.array(
        [abs(cv2.pointPolygonTest(contour, (float(x), float(y)), True)) for x, y in centres], np.float32
    )
    near_wall = wall_dist <= (0.5 + reach) * side
    return np.asarray(near_die | near_edge | near_wall, dtype=bool)


def near_picture_edge(
    xyxy: npt.ArrayLike, image_size: tuple[int, int], margin: float | npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Which boxes come within ``margin`` pixels (one for all, or one per box) of the picture's edge.

    With a margin of a pixel or two: the dice the picture cuts, whose footprint, and
    whatever they may lean on, is partly out of view.

    Args:
        xyxy: boxes, shape (n, 4), frame pixels.
        image_size: ``(width, height)`` of the frame.
        margin: pixels, a scalar or shape (n,).

    Returns:
        Shape (n,) booleans.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    pad = np.broadcast_to(np.asarray(margin, np.float32), (len(boxes),))
    width, height = image_size
    return np.asarray(
        (boxes[:, 0] <= pad) | (boxes[:, 1] <= pad) | (boxes[:, 2] >= width - pad) | (boxes[:, 3] >= height - pad),
        dtype=bool,
    )


def covered_fraction(xyxy: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """The largest fraction of each box that one other box covers.

    A die partly hidden behind a nearer one shows that die's top where its own side
    would be, which looks like a lean to a crop: the cocked fusion weighs this
    (:class:`vision.pose.cocked.CockedEvidence`). A die leaning on another overlaps it too,
    so the fraction is evidence either way, weighed on calibration scenes.

    Args:
        xyxy: boxes, shape (n, 4), frame pixels.

    Returns:
        Shape (n,), in [0, 1]; 0 for a lone die.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    if len(boxes) < 2:
        return np.zeros(len(boxes), np.float32)
    lo = np.maximum(boxes[:, None, :2], boxes[None, :, :2])
    hi = np.minimum(boxes[:, None, 2:], boxes[None, :, 2:])
    w, h = np.clip(hi - lo, 0.0, None).transpose(2, 0, 1)
    area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-6)
    share = (w * h) / area[:, None]
    np.fill_diagonal(share, 0.0)
    covered: npt.NDArray[np.float32] = np.clip(share.max(axis=1), 0.0, 1.0).astype(np.float32)
    return covered
