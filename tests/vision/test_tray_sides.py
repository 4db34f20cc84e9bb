"""The tray's sides fitted at full resolution: they find the drawn tray's edges, and refuse what they cannot trust."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.pose.upright import upright_view
from farklecam.vision.tray.detect import detect_tray
from farklecam.vision.tray.outline import TrayOutline
from farklecam.vision.tray.sides import SideConfig, tray_sides

SIZE = (640, 480)


def projected_tray(tilt_deg: float, yaw_deg: float) -> np.ndarray:
    """A 30 x 20 cm floor seen by a 0.9-focal camera 45 cm from its centre, tilted and turned: corners (4, 2) in px."""
    w, h = SIZE
    f = 0.9 * w
    t, y = np.radians(tilt_deg), np.radians(yaw_deg)
    yaw = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    floor = np.array([[-15, -10, 0], [15, -10, 0], [15, 10, 0], [-15, 10, 0]], float) @ yaw.T
    eye = 45.0 * np.array([0.0, np.sin(t), np.cos(t)])
    forward = -eye / np.linalg.norm(eye)
    right = np.array([1.0, 0.0, 0.0])
    down = np.cross(forward, right)
    rel = floor - eye
    x, yy, z = rel @ right, rel @ down, rel @ forward
    return np.column_stack([f * x / z + w / 2, f * yy / z + h / 2])


def draw(corners: np.ndarray, seed: int = 0) -> np.ndarray:
    """A green floor with exactly these corners (anti-aliased, sub-pixel) on a mottled table."""
    rng = np.random.default_rng(seed)
    img = cv2.GaussianBlur(rng.integers(0, 255, (SIZE[1], SIZE[0], 3)).astype(np.uint8), (0, 0), 4)
    img = cv2.add(img, np.full_like(img, 70))
    cv2.fillPoly(img, [np.round(corners * 16).astype(np.int32)], (40, 110, 30), cv2.LINE_AA, shift=4)
    return cv2.add(img, rng.integers(0, 6, img.shape).astype(np.uint8))


def vertical_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Degrees between the verticals two quadrilaterals give."""
    va, vb = upright_view(a, SIZE), upright_view(b, SIZE)
    assert va is not None and vb is not None
    da = np.append(va.nadir - va.principal, va.focal)
    db = np.append(vb.nadir - vb.principal, vb.focal)
    return float(np.degrees(np.arccos(min(1.0, abs(da @ db) / np.linalg.norm(da) / np.linalg.norm(db)))))


@settings(max_examples=25, deadline=None)
@given(
    tilt=st.floats(20, 40),
    yaw=st.sampled_from([-1, 1]).flatmap(lambda sign: st.floats(15, 40).map(lambda a: sign * a)),
    nudge=st.lists(st.floats(-6, 6), min_size=8, max_size=8),
    seed=st.integers(0, 1000),
)
def test_sides_find_the_drawn_edges_from_a_rough_outline(
    tilt: float, yaw: float, nudge: list[float], seed: int
) -> None:
    """A tray turned 15-40 degrees: a side square to the picture leaves a vanishing point at infinity and
    the focal length undetermined (``tray_sides`` then refuses an implausible camera: tested below)."""
    truth = projected_tray(tilt, yaw)
    rough = truth + np.asarray(nudge).reshape(4, 2)
    found = tray_sides(draw(truth, seed), rough)
    assert found is not None
    # Within a pixel and a half: OpenCV's anti-aliased fill puts the drawn edge about half a pixel outside.
    assert np.abs(found - truth).max() < 1.5
    assert vertical_angle(found, truth) < 1.0
    if vertical_angle(rough, truth) > 1.0:  # the fit, not the outline it started from, gives the vertical
        # (better, not by a set factor: the anti-aliased drawing leaves the fit itself up to ~0.7 degrees off)
        assert vertical_angle(found, truth) < vertical_angle(rough, truth)


def test_a_side_along_the_picture_border_is_refused() -> None:
    truth = projected_tray(25, 0)
    cut = truth.copy()
    cut[[0, 3], 0] = 0.0  # the picture's left edge cuts the tray: that side is the picture's
    assert tray_sides(draw(truth), cut) is None


def test_no_edge_no_sides() -> None:
    plain = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)
    assert tray_sides(plain, projected_tray(25, 10)) is None


def test_only_quadrilaterals_and_a_plausible_camera() -> None:
    truth = projected_tray(25, 10)
    frame = draw(truth)
    assert tray_sides(frame, truth[:3]) is None
    assert tray_sides(frame, truth) is not None
    assert tray_sides(frame, truth, SideConfig(max_focal=0.5)) is None  # the camera the sides imply is refused
    square_on = projected_tray(15, 0)  # sides square to the picture: a pixel of bias sends the focal length far
    nudged = square_on + np.array([[0, 0], [0, 1], [0, 0], [0, 4]])
    assert tray_sides(draw(square_on), nudged) is None


def test_detect_tray_fits_sides_only_when_asked() -> None:
    truth = projected_tray(20, 15)
    frame = draw(truth)
    boxes = np.array([[300, 220, 330, 250]], np.float32)
    plain = detect_tray(frame, boxes)
    fitted = detect_tray(frame, boxes, find_sides=True)
    assert plain is not None and plain.sides is None and plain.vertical_corners is None
    assert fitted is not None and fitted.sides is not None
    nearest = np.linalg.norm(fitted.sides[:, None] - truth[None], axis=2).min(axis=0)  # the outline's own order
    assert nearest.max() < 1.5
    np.testing.assert_array_equal(fitted.vertical_corners, fitted.sides)


def test_outline_sides_are_checked_scaled_and_preferred_for_the_vertical() -> None:
    square = [[0, 0], [10, 0], [10, 10], [0, 10]]
    with pytest.raises(ValueError, match="sides"):
        TrayOutline(np.array(square, np.float32), "auto", sides=np.zeros((3, 2), np.float32))
    outline = TrayOutline(np.array(square, np.float32), "auto", sides=np.array(square, np.float32) + 1)
    assert outline.scaled(2, 3).sides.tolist() == [[2, 3], [22, 3], [22, 33], [2, 33]]
    clicked = TrayOutline(np.array(square, np.float32), "corners")
    assert clicked.corner_sigma_px == 2.0
    np.testing.assert_array_equal(clicked.vertical_corners, clicked.polygon)
    snapped = TrayOutline(clicked.polygon, "corners", sides=np.array(square, np.float32) + 1)
    np.testing.assert_array_equal(snapped.vertical_corners, snapped.sides)  # fitted edges beat clicks
    assert snapped.corner_sigma_px == 1.0


def test_the_reader_draws_the_vertical_from_a_found_trays_sides() -> None:
    from farklecam.vision.reader import DiceReader

    truth = projected_tray(25, 20)
    frame, boxes = draw(truth), np.array([[300, 220, 330, 250]], np.float32)
    fitted = DiceReader().find_tray(frame, boxes)
    assert fitted is not None and fitted.vertical_corners is not None


def test_clicked_corners_snap_to_the_edges_near_them_and_not_to_far_ones() -> None:
    from farklecam.vision.tray.sides import snap

    truth = projected_tray(30, 25)
    frame = draw(truth)
    rng = np.random.default_rng(3)
    clicked = TrayOutline(truth + rng.normal(0, 2.0, truth.shape), "corners")
    snapped = snap(clicked, frame)
    assert snapped.sides is not None
    np.testing.assert_array_equal(snapped.polygon, clicked.polygon)  # the floor the person marked stays
    assert np.linalg.norm(snapped.sides[:, None] - truth[None], axis=2).min(axis=0).max() < 1.5
    assert vertical_angle(snapped.sides, truth) < vertical_angle(clicked.polygon, truth)
    careless = TrayOutline(truth + np.array([[40, 0], [0, 0], [0, 0], [0, 0]]), "corners")
    assert snap(careless, frame).sides is None  # a corner 40 px off: no edge is near enough to trust
    assert snap(clicked, np.full_like(frame, 120)).sides is None


def test_a_reader_snaps_clicked_corners_on_its_first_frames_unless_told_not_to() -> None:
    from farklecam.vision.reader import DiceReader

    truth = projected_tray(30, 25)
    frame = draw(truth)
    clicked = TrayOutline(truth + np.random.default_rng(4).normal(0, 2.0, truth.shape), "corners")
    base = DiceReader()
    boxes = np.zeros((0, 4), np.float32)
    first = base.with_tray(clicked).find_tray(frame, boxes)
    assert first is not None and first.sides is not None
    np.testing.assert_array_equal(first.polygon, clicked.polygon)
    # A server makes a reader per request: the snap is remembered across them, not redone.
    again = base.with_tray(clicked).find_tray(np.full_like(frame, 120), boxes)
    assert again is first


def test_corners_that_never_snap_are_tried_on_a_few_frames_only() -> None:
    from farklecam.vision.reader import DiceReader
    from farklecam.vision.tray.memory import SNAP_TRIES

    truth = projected_tray(30, 25)
    clicked = TrayOutline(truth, "corners")
    reader = DiceReader().with_tray(clicked)
    blank = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)
    for _ in range(SNAP_TRIES):
        assert reader.find_tray(blank, np.zeros((0, 4), np.float32)).sides is None
    # Tries used up: even a frame where the edges show leaves the clicks as given.
    assert reader.find_tray(draw(truth), np.zeros((0, 4), np.float32)).sides is None


def test_a_marked_tray_is_set_aside_while_the_camera_has_moved_since_its_first_frame() -> None:
    from farklecam.vision.reader import DiceReader
    from farklecam.vision.tray.memory import WATCH_EVERY

    frame = cv2.imread(str(Path(__file__).resolve().parents[2] / "examples" / "tray_cocked.jpg"))
    h, w = frame.shape[:2]
    bumped = cv2.warpAffine(
        frame, np.float32([[1, 0, 0.05 * w], [0, 1, 0.02 * h]]), (w, h), borderMode=cv2.BORDER_REFLECT
    )
    marked = TrayOutline(np.array([[100, 100], [w - 100, 110], [w - 90, h - 80], [90, h - 90]], np.float32), "corners")
    boxes = np.zeros((0, 4), np.float32)
    reader = DiceReader().with_tray(marked)
    first = reader.find_tray(frame, boxes)
    assert not reader.tray_moved and first is not None and first.source == "corners"

    def reads_until(copy: DiceReader, picture: np.ndarray, moved: bool) -> TrayOutline | None:
        """Read ``picture`` until the watch looks (it looks every few reads); the tray of that read."""
        for _ in range(WATCH_EVERY):
            tray = copy.find_tray(picture, boxes)
            if copy.tray_moved == moved:
                return tray
        raise AssertionError(f"the watch did not see moved={moved} within {WATCH_EVERY} reads")

    moved = reads_until(reader.with_tray(marked), bumped, True)  # a copy (a server's reader per frame) shares it
    assert moved is None or moved.source == "auto"  # read as if no tray was marked
    assert reader.read(bumped).tray_set_aside  # the reading says so (a server's table shows "moved")
    back = reads_until(reader, frame, False)
    assert back is not None and back.source == "corners"
    assert not reader.read(frame).tray_set_aside
    labelled = DiceReader().with_tray(TrayOutline(marked.polygon, "labelled"))
    for picture in (frame, *[bumped] * WATCH_EVERY):
        assert labelled.find_tray(picture, boxes).source == "labelled"  # generated scenes' labels are not watched


def test_a_side_outside_the_narrow_band_is_found_in_the_retry() -> None:
    """An outline cut short by a shadow lies further in than the band: the wider retry still finds the edge."""
    truth = projected_tray(25, 20)
    frame = draw(truth)
    centre = truth.mean(axis=0)
    rough = centre + 0.85 * (truth - centre)  # every side 15 % in: further than the first band reaches
    band_px = SideConfig().band * SIZE[0]
    assert np.abs(rough - truth).min(axis=1).max() > band_px
    assert tray_sides(frame, rough, SideConfig(retry_band=None)) is None
    found = tray_sides(frame, rough)
    assert found is not None and vertical_angle(found, truth) < 1.0


def test_a_found_floor_cut_short_by_a_shadow_judges_bases_up_to_its_fitted_sides() -> None:
    """A die resting in a wall's shadow, outside the floor's colour but inside the tray's edges, is on the tray."""
    from farklecam.vision.tray.outline import footprint_inside

    sides = np.array([[100, 100], [500, 100], [500, 380], [100, 380]], np.float32)
    shadowed = sides.copy()
    shadowed[2:, 1] = 340  # the floor's colour stops 40 px short of the near wall
    found = TrayOutline(shadowed, "auto", sides=sides)
    in_shadow = np.array([[300, 345, 330, 375]], np.float32)
    beyond = np.array([[300, 385, 330, 415]], np.float32)
    assert footprint_inside(in_shadow, found)[0] == 0.0
    assert footprint_inside(in_shadow, found.base_bound)[0] == 1.0
    assert footprint_inside(beyond, found.base_bound)[0] == 0.0  # past the tray's edge it is still off
    grown_inward = TrayOutline(sides, "auto", sides=shadowed)  # sides inside the floor never shrink it
    assert grown_inward.base_bound.area == pytest.approx(grown_inward.area)
    for kept in (TrayOutline(shadowed, "corners", sides=sides), TrayOutline(shadowed, "auto")):
        assert kept.base_bound is kept  # marked corners are the floor's own; no sides, nothing to grow to
