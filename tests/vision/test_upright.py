"""The camera's vertical from the tray outline: nadir and focal length of a known pinhole camera."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.pose.upright import DEFAULT_FOCAL, UprightView, straight_down_view, upright_view
from farklecam.vision.tray.outline import CORNER_SIGMA_PX, TrayOutline

SIZE = (640, 480)


def pinhole(tilt_deg: float, yaw_deg: float, focal: float, height: float = 60.0) -> tuple[np.ndarray, np.ndarray]:
    """Camera matrix P (3x4) of a camera ``height`` cm above the origin, tilted ``tilt_deg``, and its centre."""
    t, y = np.radians(tilt_deg), np.radians(yaw_deg)
    # Camera axes in the world: looking down (z_cam = -z_world) turned by the tilt about x, then yawed.
    look = np.array([0.0, np.sin(t), -np.cos(t)])
    right = np.array([1.0, 0.0, 0.0])
    down = np.cross(look, right)
    rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    rot = np.stack([right, down, look]) @ rz.T  # rows: camera x, y, z in world coordinates
    centre = np.array([0.0, 0.0, height])
    k = np.array([[focal, 0, SIZE[0] / 2], [0, focal, SIZE[1] / 2], [0, 0, 1]])
    return k @ np.hstack([rot, (-rot @ centre)[:, None]]), centre


def project(p: np.ndarray, points: np.ndarray) -> np.ndarray:
    h = np.hstack([points, np.ones((len(points), 1))]) @ p.T
    return h[:, :2] / h[:, 2:]


def floor_rectangle(cx: float, cy: float, w: float, d: float, turn_deg: float) -> np.ndarray:
    a = np.radians(turn_deg)
    corners = np.array([[-w, -d], [w, -d], [w, d], [-w, d]]) / 2
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    xy = corners @ rot.T + [cx, cy]
    return np.column_stack([xy, np.zeros(4)])


@settings(max_examples=60, deadline=None)
@given(
    tilt=st.floats(8, 40),
    yaw=st.floats(0, 360),
    focal=st.floats(350, 900),
    turn=st.floats(15, 75),
    w=st.floats(15, 40),
    d=st.floats(10, 30),
)
def test_the_nadir_and_focal_length_of_a_tilted_camera_are_recovered(
    tilt: float, yaw: float, focal: float, turn: float, w: float, d: float
) -> None:
    p, centre = pinhole(tilt, yaw, focal)
    # The tray lies where the camera looks, turned so its sides are not parallel to the image's.
    target = centre + 60.0 / np.cos(np.radians(tilt)) * np.array(
        [0.0, np.sin(np.radians(tilt)), -np.cos(np.radians(tilt))]
    )
    rz = np.radians(yaw)
    tx, ty = np.array([[np.cos(rz), -np.sin(rz)], [np.sin(rz), np.cos(rz)]]) @ target[:2]
    # Turned against the camera, so that neither pair of sides looks parallel (that fixes the focal length).
    quad = project(p, floor_rectangle(tx, ty, w, d, yaw + turn))
    view = upright_view(quad, SIZE)
    assert view is not None
    true_nadir = project(p, np.array([[0.0, 0.0, -1e7]]))[0]
    # Directions to the nadir agree to a fraction of a degree at every corner.
    true_angles = np.arctan2(*(true_nadir - quad).T[::-1])
    err = np.abs((view.down_angles(quad) - true_angles + np.pi) % (2 * np.pi) - np.pi)
    assert np.degrees(err).max() < 0.5
    assert view.focal == pytest.approx(focal, rel=0.02)
    # The ray through the nadir is vertical.
    assert float(view.view_tilt(view.nadir[None])[0]) < 1e-3


def test_a_camera_looking_straight_down_has_its_nadir_at_the_centre() -> None:
    p, _ = pinhole(0.0, 30.0, 600.0)
    quad = project(p, floor_rectangle(0, 0, 30, 20, 20))
    view = upright_view(quad, SIZE)
    assert view is not None
    assert np.allclose(view.nadir, [SIZE[0] / 2, SIZE[1] / 2], atol=1e-6)
    assert view.focal == pytest.approx(DEFAULT_FOCAL * max(SIZE))  # parallel sides cannot fix it
    # A die right of the centre looks towards the nadir on its left: 180 degrees; the camera sees it at an angle.
    assert abs(float(np.degrees(view.down_angles([[520, 240]]))[0])) == pytest.approx(180.0)
    assert np.degrees(view.view_tilt([[520, 240]]))[0] == pytest.approx(np.degrees(np.arctan(200 / 576)), abs=0.01)


@settings(max_examples=40, deadline=None)
@given(yaw=st.floats(0, 360), w=st.floats(10, 40), d=st.floats(10, 30), x=st.floats(-5, 5), y=st.floats(-5, 5))
def test_a_straight_down_view_is_what_any_tray_under_a_straight_down_camera_gives(
    yaw: float, w: float, d: float, x: float, y: float
) -> None:
    p, _ = pinhole(0.0, yaw, 600.0)
    from_tray = upright_view(project(p, floor_rectangle(x, y, w, d, yaw + 25.0)), SIZE)
    assert from_tray is not None
    direct = straight_down_view(SIZE)
    assert direct.angle_to(from_tray) < 1e-6
    assert direct.focal == pytest.approx(from_tray.focal)
    dice = np.array([[40.0, 30.0], [600.0, 400.0], [330.0, 250.0]])
    assert np.allclose(direct.view_tilt(dice), from_tray.view_tilt(dice), atol=1e-6)


def test_a_tray_square_to_the_picture_still_puts_the_nadir_on_the_right_side() -> None:
    # One pair of sides looks parallel: the focal length falls back to the default, the direction holds.
    p, _ = pinhole(20.0, 0.0, 700.0)
    quad = project(p, floor_rectangle(0, 22, 30, 20, 0))
    view = upright_view(quad, SIZE)
    assert view is not None and view.focal == pytest.approx(DEFAULT_FOCAL * max(SIZE))
    true_nadir = project(p, np.array([[0.0, 0.0, -1e7]]))[0]
    assert view.nadir[0] == pytest.approx(true_nadir[0]) and (view.nadir[1] > SIZE[1] / 2) == (
        true_nadir[1] > SIZE[1] / 2
    )
    # A camera whose focal length is known gets the nadir itself, not only its side.
    known = upright_view(quad, SIZE, focal_px=700.0)
    assert known is not None and known.focal == pytest.approx(700.0)
    assert known.nadir == pytest.approx(true_nadir, rel=1e-6)
    assert abs(view.nadir[1] - true_nadir[1]) > 50  # the default focal length alone misplaces it (by 82 px)


@pytest.mark.parametrize(
    "corners",
    [
        [[0, 0], [100, 0], [100, 100]],  # three corners
        [[0, 0], [100, 0], [200, 0], [300, 0]],  # on a line
        [[0, 0], [100, 0], [100, np.nan], [0, 100]],
    ],
)
def test_an_unusable_outline_gives_no_view(corners: list[list[float]]) -> None:
    assert upright_view(corners, SIZE) is None


def _vertical_error(view: UprightView | None, p: np.ndarray, focal: float) -> float:
    """Degrees between a view's vertical and the true one of camera ``p`` (of focal length ``focal``)."""
    assert view is not None
    centre = np.array(SIZE, float) / 2
    true_nadir = project(p, np.array([[0.0, 0.0, -1e7]]))[0]
    truth, mine = np.append(true_nadir - centre, focal), np.append(view.nadir - view.principal, view.focal)
    return float(np.degrees(np.arccos(min(1.0, abs(truth @ mine) / np.linalg.norm(truth) / np.linalg.norm(mine)))))


def _square_on_tray(tilt: float, focal: float) -> tuple[np.ndarray, np.ndarray]:
    """A tray whose sides run square to the picture (one vanishing point at infinity), and the camera."""
    p, centre = pinhole(tilt, 0.0, focal)
    target = centre + 60.0 / np.cos(np.radians(tilt)) * np.array(
        [0.0, np.sin(np.radians(tilt)), -np.cos(np.radians(tilt))]
    )
    return project(p, floor_rectangle(target[0], target[1], 30, 20, 0.0)), p


def test_clicked_corners_of_a_square_on_tray_keep_the_vertical_near() -> None:
    """Two pixels of click error used to send the focal length, and the vertical, tens of degrees off."""
    rng = np.random.default_rng(0)
    trusted, weighed = [], []
    for _ in range(100):
        quad, p = _square_on_tray(30.0, 600.0)
        clicked = quad + rng.normal(0, 2.0, quad.shape)
        trusted.append(_vertical_error(upright_view(clicked, SIZE), p, 600.0))
        weighed.append(_vertical_error(upright_view(clicked, SIZE, corner_sigma_px=2.0), p, 600.0))
    assert np.percentile(weighed, 90) < 8.0 < np.percentile(trusted, 90)
    assert max(weighed) < max(trusted)


def test_exact_corners_are_trusted_as_they_are_and_weighing_leaves_a_well_placed_tray_alone() -> None:
    p, centre = pinhole(30.0, 20.0, 700.0)
    target = centre + 60.0 / np.cos(np.radians(30)) * np.array([0.0, np.sin(np.radians(30)), -np.cos(np.radians(30))])
    rz = np.radians(20.0)
    tx, ty = np.array([[np.cos(rz), -np.sin(rz)], [np.sin(rz), np.cos(rz)]]) @ target[:2]
    quad = project(p, floor_rectangle(tx, ty, 30, 20, 65.0))
    exact, weighed = upright_view(quad, SIZE), upright_view(quad, SIZE, corner_sigma_px=2.0)
    assert exact is not None and weighed is not None
    assert exact.focal == pytest.approx(700.0, rel=0.01) and weighed.focal == exact.focal
    # A tray square-on leaves the focal length undetermined: the default stands, whatever the click error.
    square, _ = _square_on_tray(30.0, 700.0)
    nudged = square + np.array([[0, 0], [0, 1.5], [0, 0], [0, 0]])
    view = upright_view(nudged, SIZE, corner_sigma_px=2.0)
    assert view is not None and view.focal == pytest.approx(DEFAULT_FOCAL * max(SIZE))


@pytest.mark.parametrize(("source", "sigma"), [("corners", 2.0), ("aruco", 0.5), ("auto", 1.0), ("labelled", 0.0)])
def test_an_outline_says_how_far_its_corners_may_be_off(source: str, sigma: float) -> None:
    outline = TrayOutline(np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float32), source)
    assert outline.corner_sigma_px == sigma
    assert CORNER_SIGMA_PX[source] == sigma


def test_the_angle_between_two_verticals() -> None:
    straight = UprightView(nadir=np.array([320.0, 240.0]), focal=500.0, principal=np.array([320.0, 240.0]))
    tilted = UprightView(nadir=np.array([320.0, 240.0 + 500.0]), focal=500.0, principal=np.array([320.0, 240.0]))
    assert straight.angle_to(straight) == pytest.approx(0.0, abs=1e-6)
    assert straight.angle_to(tilted) == pytest.approx(45.0) == tilted.angle_to(straight)
    assert straight.angle_to(-straight.direction()) == pytest.approx(0.0, abs=1e-6)  # the sign is ignored
