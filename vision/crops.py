"""Square die crops cut from the full-resolution frame: the one piece of code training and run time share.

A crop keeps some context around the die (a cocked die is recognised partly by its
shadow); training and run time both call :func:`extract_crops`, so the networks never
meet crops cut another way.
"""

from __future__ import annotations

from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

__all__ = [
    "CROP_CONTEXT",
    "CROP_SIZE",
    "centre_distances",
    "crop_affines",
    "crops_to_tensor",
    "extract_crops",
    "neighbour_planes",
    "square_boxes",
    "turn_and_squeeze",
]

#: Context added on each side of a box, as a fraction of the box's longer side.
CROP_CONTEXT = 0.15
#: Side in pixels of the crops fed to the face classifier.
CROP_SIZE = 64


def square_boxes(xyxy: npt.ArrayLike, context: float = CROP_CONTEXT) -> npt.NDArray[np.float32]:
    """Square boxes (n, 4) centred on each box, ``context`` of its longer side added on each side."""
    boxes = np.asarray(xyxy, dtype=np.float32).reshape(-1, 4)
    centre = (boxes[:, :2] + boxes[:, 2:]) / 2.0
    side = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) * (1.0 + 2.0 * context)
    half = np.maximum(side, 1.0)[:, None] / 2.0
    return np.concatenate([centre - half, centre + half], axis=1).astype(np.float32)


def turn_and_squeeze(side: int, angle_deg: float, squeeze: float = 1.0) -> npt.NDArray[np.float64]:
    """The 2x3 affine map that turns a ``side`` square crop about its centre, then squeezes it across.

    ``angle_deg`` turns counter-clockwise on screen, as ``cv2.getRotationMatrix2D``; ``squeeze``
    scales the turned crop's horizontal axis (1 leaves it; see
    :func:`farklecam.vision.pose.cocked.foreshortening`).
    """
    c = (side - 1) / 2.0
    turn = cast("npt.NDArray[np.float64]", cv2.getRotationMatrix2D((c, c), float(angle_deg), 1.0))
    if squeeze == 1.0:
        return turn
    across = np.array([[squeeze, 0.0, (1.0 - squeeze) * c], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    turned: npt.NDArray[np.float64] = (across @ np.vstack([turn, [0.0, 0.0, 1.0]]))[:2]
    return turned


def _square_maps(
    xyxy: npt.ArrayLike,
    size: int,
    context: float,
    angles_deg: npt.ArrayLike | None,
    squeeze: npt.ArrayLike | None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]:
    """:func:`crop_affines`' maps, with each square box's scale to the crop (below 1: the crop shrinks it)."""
    squares = square_boxes(xyxy, context)
    angles = None if angles_deg is None else np.asarray(angles_deg, np.float64).reshape(-1)
    squeezes = None if squeeze is None else np.asarray(squeeze, np.float64).reshape(-1)
    out = np.empty((len(squares), 2, 3), np.float32)
    scales = np.empty(len(squares), np.float64)
    for i, (x1, y1, x2, _y2) in enumerate(squares):
        scale = size / float(x2 - x1)
        # Affine map from the square box to the crop: one warp does crop, resize and border at once.
        m = np.array([[scale, 0.0, -x1 * scale], [0.0, scale, -y1 * scale]], dtype=np.float32)
        angle = 0.0 if angles is None else float(angles[i])
        across = 1.0 if squeezes is None else float(squeezes[i])
        if angle != 0.0 or across != 1.0:
            m = (turn_and_squeeze(size, angle, across) @ np.vstack([m, [0.0, 0.0, 1.0]])).astype(np.float32)
        out[i], scales[i] = m, scale
    return out, scales


def crop_affines(
    xyxy: npt.ArrayLike,
    size: int = CROP_SIZE,
    context: float = CROP_CONTEXT,
    angles_deg: npt.ArrayLike | None = None,
    squeeze: npt.ArrayLike | None = None,
) -> npt.NDArray[np.float32]:
    """The 2x3 affine maps (n, 2, 3) from frame pixels to each crop's, for the arguments of :func:`extract_crops`."""
    return _square_maps(xyxy, size, context, angles_deg, squeeze)[0]


def extract_crops(
    image: npt.NDArray[np.uint8],
    xyxy: npt.ArrayLike,
    size: int = CROP_SIZE,
    context: float = CROP_CONTEXT,
    angles_deg: npt.ArrayLike | None = None,
    squeeze: npt.ArrayLike | None = None,
) -> npt.NDArray[np.uint8]:
    """Cut one square crop (n, size, size, 3) per box of a BGR image; parts outside the image repeat its border.

    ``context`` is as :func:`square_boxes`; each crop may be turned by ``angles_deg`` and then
    squeezed across by ``squeeze`` (both (n,), as :func:`turn_and_squeeze`; None leaves them).
    """
    affines, scales = _square_maps(xyxy, size, context, angles_deg, squeeze)
    out = np.empty((len(affines), size, size, 3), dtype=np.uint8)
    for i, m in enumerate(affines):
        interp = cv2.INTER_AREA if scales[i] < 1.0 else cv2.INTER_LINEAR
        out[i] = cv2.warpAffine(image, m, (size, size), flags=interp, borderMode=cv2.BORDER_REPLICATE)
    return out


def centre_distances(
    xyxy: npt.ArrayLike, others: npt.ArrayLike
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """How far each of ``others``' centres (m) lies from each box's centre (n), and each box's reach.

    A box of ``others`` is the same die as a box of ``xyxy`` when its centre lies within that
    box's reach, half its longer side (box conventions differ, centres agree).
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    other = np.asarray(others, np.float32).reshape(-1, 4)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    other_centres = (other[:, :2] + other[:, 2:]) / 2
    distance = np.linalg.norm(centres[:, None, :] - other_centres[None, :, :], axis=2)
    reach = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) / 2
    return distance, reach


def neighbour_planes(
    xyxy: npt.ArrayLike,
    dice: npt.ArrayLike,
    size: int = CROP_SIZE,
    context: float = CROP_CONTEXT,
    angles_deg: npt.ArrayLike | None = None,
    squeeze: npt.ArrayLike | None = None,
) -> npt.NDArray[np.uint8]:
    """Per crop (n, size, size), 255 where another of the frame's ``dice`` boxes covers the crop's pixel, else 0.

    A flat die half behind a nearer one shows that die's top where a leaning die would show
    its own side; this plane tells the cocked test which pixels belong to another die. A box
    of ``dice`` is the crop's own die when its centre lies within its reach
    (:func:`centre_distances`). The other arguments are those of :func:`extract_crops`.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    frame_dice = np.asarray(dice, np.float32).reshape(-1, 4)
    out = np.zeros((len(boxes), size, size), np.uint8)
    if len(boxes) == 0 or len(frame_dice) == 0:
        return out
    distance, reach = centre_distances(boxes, frame_dice)
    other = distance >= reach[:, None]  # (n, m)
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64)
    pixels = np.stack([xs.ravel(), ys.ravel(), np.ones(size * size)])  # crop pixel centres, homogeneous
    for i, m in enumerate(crop_affines(boxes, size, context, angles_deg, squeeze)):
        if not other[i].any():
            continue
        x, y = cv2.invertAffineTransform(m).astype(np.float64) @ pixels  # back to frame pixels
        near = frame_dice[other[i]]
        inside = (
            (x[:, None] >= near[None, :, 0])
            & (x[:, None] < near[None, :, 2])
            & (y[:, None] >= near[None, :, 1])
            & (y[:, None] < near[None, :, 3])
        )
        out[i] = np.where(inside.any(axis=1), 255, 0).reshape(size, size)
    return out


def crops_to_tensor(crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """BGR uint8 crops (n, s, s, 3) to the classifier's input: RGB float32 (n, 3, s, s) in 0..1."""
    rgb = crops[..., ::-1].astype(np.float32) / 255.0
    return np.ascontiguousarray(rgb.transpose(0, 3, 1, 2))
