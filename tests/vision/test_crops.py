"""Crop geometry: the affine maps both crops and neighbour planes go through, and the planes themselves."""

from __future__ import annotations

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.crops import crop_affines, extract_crops, neighbour_planes


@settings(max_examples=3000, deadline=None)
@given(
    st.floats(40, 560),
    st.floats(40, 400),
    st.floats(12, 80),
    st.floats(-180, 180),
    st.floats(0.3, 1.0),
    st.floats(0.0, 0.6),
)
def test_a_crops_affine_takes_its_box_centre_to_the_crops_centre(
    x: float, y: float, side: float, angle: float, squeeze: float, context: float
) -> None:
    box = np.array([[x, y, x + side, y + 0.8 * side]])
    m = crop_affines(box, 64, context, [angle], [squeeze])[0].astype(np.float64)
    centre = m @ np.array([x + side / 2, y + 0.4 * side, 1.0])
    # Within a pixel of the crop's middle (the square maps its centre to 32, turns go about 31.5).
    np.testing.assert_allclose(centre, [31.5, 31.5], atol=1.0)


_BOX = np.array([280.0, 200.0, 330.0, 250.0])


def moved(box: np.ndarray, dx: float, dy: float, grow: float = 0.0) -> np.ndarray:
    """``box`` shifted by (dx, dy) and grown by ``grow`` on its right and bottom."""
    return box + np.array([dx, dy, dx + grow, dy + grow])


@settings(max_examples=30, deadline=None)
@given(
    st.floats(-20, 60),  # a neighbour's centre at least half a side off this die's (else it is this die)
    st.floats(-60, 60),
    st.floats(-180, 180),
    st.floats(0.4, 1.0),
    st.sampled_from([0.15, 0.35]),
)
def test_the_plane_marks_what_a_painted_neighbour_shows_in_the_crop(
    dx: float, dy: float, angle: float, squeeze: float, context: float
) -> None:
    # Paint a neighbour's box white on a black frame and cut the crop: its white pixels are where
    # the plane must be set (up to the one-pixel seam the interpolation blurs).
    neighbour = moved(_BOX, 50.0 + dx, dy)
    painted = np.zeros((480, 640, 3), np.uint8)
    x1, y1, x2, y2 = np.ceil(neighbour).astype(int)  # the pixels whose centres lie inside (x1 <= c < x2)
    painted[max(y1, 0) : y2, max(x1, 0) : x2] = 255
    boxes = np.array([_BOX, neighbour])
    cut = extract_crops(painted, boxes[:1], 64, context, [angle], [squeeze])[0, ..., 0]
    plane = neighbour_planes(boxes[:1], boxes, 64, context, [angle], [squeeze])[0]
    white = (cut > 127).astype(np.uint8)
    ring = np.ones((3, 3), np.uint8)
    seam = cv2.dilate(white, ring) != cv2.erode(white, ring)  # within a pixel of the painted edge
    seam[[0, -1], :] = seam[:, [0, -1]] = True  # at the rim the edge's other side may lie just outside the crop
    wrong = (plane > 0) != white.astype(bool)
    assert not np.any(wrong & ~seam)


def test_a_crops_own_die_is_never_its_neighbour() -> None:
    frame_dice = np.array([_BOX, moved(_BOX, 200.0, 0.0)])
    assert neighbour_planes(frame_dice[:1], frame_dice).max() == 0  # the other die lies outside this crop
    # A box a detector drew off the die's labelled one (shifted, a little larger) is still the same die.
    drawn = moved(_BOX, 8.0, -6.0, grow=6.0)[None]
    assert neighbour_planes(drawn, frame_dice[:1]).max() == 0
    # A touching die is marked along the crop's side it lies on, and only there.
    touching = np.array([_BOX, moved(_BOX, 50.0, 0.0)])
    plane = neighbour_planes(touching[:1], touching)[0]
    assert plane[10:54, -4:].min() == 255 and plane[:, :50].max() == 0 and plane[:6].max() == 0


def test_no_dice_make_empty_planes() -> None:
    assert neighbour_planes(np.zeros((0, 4)), np.zeros((0, 4)), 32).shape == (0, 32, 32)
    assert neighbour_planes(_BOX[None], np.zeros((0, 4)), 32).max() == 0
    assert cv2.countNonZero(neighbour_planes(_BOX[None], _BOX[None], 32)[0]) == 0
