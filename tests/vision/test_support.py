"""Which dice the picture's edge cuts, and how much of a die its neighbours hide."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from farklecam.vision.pose.cocked import covered_fraction
from farklecam.vision.reader import near_picture_edge

SIZE = (640, 480)


def box(cx: float, cy: float, side: float = 40) -> list[float]:
    return [cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2]


@given(st.integers(-50, 690), st.integers(-50, 530), st.integers(1, 200), st.integers(1, 200), st.integers(0, 30))
def test_a_box_is_near_the_picture_edge_exactly_when_one_of_its_sides_is_within_the_margin(
    x1: int, y1: int, w: int, h: int, margin: int
) -> None:
    x2, y2 = x1 + w, y1 + h
    expected = x1 <= margin or y1 <= margin or x2 >= SIZE[0] - margin or y2 >= SIZE[1] - margin
    assert near_picture_edge([[x1, y1, x2, y2]], SIZE, margin).tolist() == [expected]


def test_the_margin_may_be_one_per_box() -> None:
    boxes = [box(30, 250), box(30, 250)]  # 10 px from the left edge
    assert near_picture_edge(boxes, SIZE, [5, 15]).tolist() == [False, True]
    assert near_picture_edge(np.zeros((0, 4)), SIZE, 2).shape == (0,)


def test_the_covered_fraction_is_what_the_largest_neighbour_hides() -> None:
    inner, outer = box(200, 200, 20), box(200, 200, 40)
    np.testing.assert_allclose(covered_fraction([inner, outer]), [1.0, 0.25])  # 20 x 20 inside 40 x 40
    np.testing.assert_allclose(covered_fraction([box(100, 100), box(300, 300)]), [0.0, 0.0])
    assert covered_fraction([box(100, 100)]).tolist() == [0.0] and covered_fraction(np.zeros((0, 4))).shape == (0,)


@given(st.floats(0, 400), st.floats(0, 400), st.floats(0, 60), st.floats(0.5, 4.0))
def test_the_covered_fraction_is_in_range_and_does_not_care_about_scale(
    x: float, y: float, shift: float, scale: float
) -> None:
    boxes = np.array([box(x, y), box(x + shift, y + shift / 2), box(x - shift, y)], np.float32)
    covered = covered_fraction(boxes)
    assert ((covered >= 0.0) & (covered <= 1.0)).all()
    np.testing.assert_allclose(covered_fraction(boxes * scale), covered, atol=1e-4)
