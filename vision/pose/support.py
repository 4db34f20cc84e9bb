"""What the boxes around a die say of it: whether the picture's edge cuts it, and how much a neighbour hides.

A die the picture's edge cuts shows only part of itself (and not what it may
lean on), so the reader never calls it cocked (:data:`CUT_DIE_MARGIN_PX`).
The share of a die's box its largest neighbour covers is evidence the cocked
fusion weighs (:class:`farklecam.vision.pose.cocked.CockedEvidence`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["CUT_DIE_MARGIN_PX", "covered_fraction", "near_picture_edge"]

#: A die whose box comes within this many pixels of the picture's edge is cut by it.
CUT_DIE_MARGIN_PX = 2.0


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
    (:class:`farklecam.vision.pose.cocked.CockedEvidence`). A die leaning on another overlaps it too,
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
