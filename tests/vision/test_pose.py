"""Tilt from up-axes: ray frames, the table's normal the dice agree on, and the call from a tilt."""

from __future__ import annotations

import numpy as np
import pytest
from farklecam.vision.pose.tilt import (
    TiltCall,
    consensus,
    from_ray_frame,
    normal_from_view,
    ray_rotations,
    table_normal,
    tilt_degrees,
    to_ray_frame,
    view_from_normal,
)
from farklecam.vision.pose.upright import straight_down_view
from hypothesis import given, settings
from hypothesis import strategies as st

_pixels = st.tuples(st.floats(-2000, 2000), st.floats(-2000, 2000))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _tilted(normal: np.ndarray, deg: float, towards: np.ndarray) -> np.ndarray:
    """``normal`` turned ``deg`` degrees towards ``towards`` (made perpendicular to it)."""
    side = _unit(towards - (towards @ normal) * normal)
    return np.cos(np.radians(deg)) * normal + np.sin(np.radians(deg)) * side


@settings(max_examples=60, deadline=None)
@given(point=_pixels, focal=st.floats(100, 3000), principal=_pixels)
def test_a_ray_rotation_takes_its_ray_to_the_lens_axis(
    point: tuple[float, float], focal: float, principal: tuple[float, float]
) -> None:
    rot = ray_rotations([point], focal, principal)[0]
    ray = _unit(np.array([point[0] - principal[0], point[1] - principal[1], focal]))
    np.testing.assert_allclose(rot @ ray, [0.0, 0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-9)
    assert np.linalg.det(rot) == pytest.approx(1.0)


def test_the_ray_at_the_principal_point_is_the_identity() -> None:
    np.testing.assert_allclose(ray_rotations([[320.0, 240.0]], 500.0, [320.0, 240.0])[0], np.eye(3), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(point=_pixels, v=st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1)))
def test_ray_frame_round_trips(point: tuple[float, float], v: tuple[float, float, float]) -> None:
    vec = np.array(v)
    if np.linalg.norm(vec) < 1e-3:
        vec = np.array([0.0, 0.0, 1.0])
    rot = ray_rotations([point], 600.0, [320.0, 240.0])
    np.testing.assert_allclose(from_ray_frame(to_ray_frame([vec], rot), rot)[0], _unit(vec), atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    flat=st.integers(2, 9),
    leaning=st.integers(0, 8),
    camera_deg=st.floats(0, 40),
)
def test_the_dice_agree_on_the_table_normal_when_most_lie_flat(
    seed: int, flat: int, leaning: int, camera_deg: float
) -> None:
    rng = np.random.default_rng(seed)
    leaning = min(leaning, flat - 1)  # most dice lie flat
    normal = _tilted(np.array([0.0, 0.0, -1.0]), camera_deg, np.array([0.0, -1.0, 0.0]))
    ups = [_tilted(normal, float(rng.uniform(0, 2)), rng.normal(size=3)) for _ in range(flat)]
    ups += [_tilted(normal, float(rng.uniform(20, 45)), rng.normal(size=3)) for _ in range(leaning)]
    found = table_normal(np.array(ups))
    assert found is not None
    got, members = found
    assert tilt_degrees([got], normal)[0] < 2.0
    assert members[:flat].all() and not members[flat:].any()


def test_one_die_or_two_that_disagree_give_no_normal() -> None:
    assert table_normal(np.array([[0.0, 0.0, -1.0]])) is None
    assert table_normal(np.array([[0.0, 0.0, -1.0], _tilted(np.array([0.0, 0.0, -1.0]), 30, np.ones(3))])) is None


def test_without_a_focal_length_the_dice_pick_the_one_that_makes_them_agree() -> None:
    size, focal = (640, 480), 0.65 * 640
    principal = np.array([320.0, 240.0])
    normal = _tilted(np.array([0.0, 0.0, -1.0]), 25, np.array([0.0, -1.0, 0.0]))
    centres = np.array([[40, 40], [600, 60], [320, 240], [60, 440], [610, 430], [200, 300]], np.float64)
    ups = np.repeat(normal[None], len(centres), axis=0)
    ups[5] = _tilted(normal, 33, np.array([1.0, 0.0, 0.0]))  # one leaning die
    ray_up = to_ray_frame(ups, ray_rotations(centres, focal, principal))
    found = consensus(ray_up, centres, size)
    assert found is not None
    got, up, members = found.normal, found.up_axes, found.agreed
    assert found.focal == pytest.approx(focal)
    # The vertical it gives is the normal's, turned down, under the focal length kept.
    assert view_from_normal(got, found.focal, principal).angle_to(-got) < 1e-6
    assert tilt_degrees([got], normal)[0] < 1.0
    tilt = tilt_degrees(up, got)
    assert tilt[:5].max() < 1.0 and tilt[5] == pytest.approx(33, abs=1.0)
    assert members.tolist() == [True] * 5 + [False]
    # Under the default field of view the same outputs disagree: the focal length matters.
    wrong = tilt_degrees(from_ray_frame(ray_up, ray_rotations(centres, 0.9 * 640, principal)), normal)
    assert wrong[:5].max() > 5.0


@given(st.floats(-0.9, 0.9), st.floats(-0.9, 0.9), st.floats(100, 3000), _pixels)
def test_a_normal_facing_the_camera_round_trips_through_its_vertical(
    x: float, y: float, focal: float, principal: tuple[float, float]
) -> None:
    normal = _unit(np.array([x, y, -1.0]))
    view = view_from_normal(normal, focal, principal)
    np.testing.assert_allclose(normal_from_view(view), normal, atol=1e-9)
    assert view.focal == focal


def test_a_marked_vertical_gives_the_normal_away_from_the_nadir() -> None:
    np.testing.assert_allclose(normal_from_view(straight_down_view((640, 480))), [0.0, 0.0, -1.0])


def test_the_call_is_cocked_past_the_band_uncertain_in_it_and_for_an_unknown_tilt() -> None:
    call = TiltCall(12.0, 4.0)
    tilts = np.array([1.0, 7.9, 8.0, 12.0, 16.0, 16.1, 30.0, np.nan])
    assert call.cocked(tilts).tolist() == [False, False, False, False, False, True, True, False]
    assert call.uncertain(tilts).tolist() == [False, False, True, True, True, False, False, True]
    with pytest.raises(ValueError, match="band"):
        TiltCall(12.0, 12.0)
