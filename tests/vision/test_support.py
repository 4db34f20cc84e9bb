"""A die may only lean where something could hold it: another die, the tray wall, the picture's edge."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from vision.support import may_lean
from vision.tray import TrayOutline

TRAY = TrayOutline.from_corners([[100, 100], [500, 100], [500, 400], [100, 400]])
SIZE = (640, 480)


def box(cx: float, cy: float, side: float = 40) -> list[float]:
    return [cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2]


def test_a_lone_die_in_the_middle_of_the_tray_cannot_lean() -> None:
    assert may_lean([box(300, 250)], TRAY, SIZE).tolist() == [False]


def test_a_die_beside_another_may_lean() -> None:
    # 10 px apart: within a third of a side.
    assert may_lean([box(300, 250), box(350, 250)], TRAY, SIZE).tolist() == [True, True]
    # 100 px apart: no.
    assert may_lean([box(250, 250), box(350, 250)], TRAY, SIZE).tolist() == [False, False]


def test_a_die_at_the_wall_or_the_picture_edge_may_lean() -> None:
    assert may_lean([box(125, 250)], TRAY, SIZE).tolist() == [True]  # 25 px from the left wall
    assert may_lean([box(620, 250)], TrayOutline.from_corners([[0, 0], [900, 0], [900, 480], [0, 480]]), SIZE)[0]


def test_without_a_tray_any_die_may_lean() -> None:
    assert may_lean([box(300, 250)], None, SIZE).tolist() == [True]
    assert may_lean(np.zeros((0, 4)), TRAY, SIZE).shape == (0,)


@given(st.floats(140, 460), st.floats(140, 360), st.floats(0, 200))
def test_moving_a_neighbour_closer_never_removes_support(x: float, y: float, gap: float) -> None:
    # Only the first die's support is in question (the moved one may leave the wall's reach).
    far = may_lean([box(x, y), box(x + 40 + gap, y)], TRAY, SIZE)[0]
    near = may_lean([box(x, y), box(x + 40 + gap / 2, y)], TRAY, SIZE)[0]
    assert near or not far
