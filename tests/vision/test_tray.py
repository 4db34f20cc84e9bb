from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.pose.upright import UprightView
from farklecam.vision.tray.detect import detect_tray, shade_distance, tray_from_aruco
from farklecam.vision.tray.outline import TrayOutline, footprint_inside, points_in_polygon

SQUARE = [[100, 100], [300, 100], [300, 300], [100, 300]]


def classify_off_tray(xyxy: np.ndarray, outline: TrayOutline | None, min_inside: float = 0.5) -> np.ndarray:
    """Which dice are off the tray: less than ``min_inside`` of their footprint inside (none without a tray)."""
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    if outline is None:
        return np.zeros(len(boxes), bool)
    return np.asarray(footprint_inside(boxes, outline) < min_inside)


def test_points_in_polygon_square_and_concave() -> None:
    pts = [[150, 150], [50, 50], [299, 299], [301, 200]]
    assert points_in_polygon(pts, SQUARE).tolist() == [True, False, True, False]
    ell = [[0, 0], [10, 0], [10, 4], [4, 4], [4, 10], [0, 10]]  # an L shape
    assert points_in_polygon([[2, 8], [8, 8], [8, 2]], ell).tolist() == [True, False, True]


def test_from_corners_any_order() -> None:
    shuffled = [SQUARE[2], SQUARE[0], SQUARE[3], SQUARE[1]]
    outline = TrayOutline.from_corners(shuffled)
    assert outline.area == pytest.approx(200 * 200)
    assert outline.contains([[200, 200]]).tolist() == [True]


@pytest.mark.parametrize(
    "corners", [[[0, 0], [1, 1]], [[0, 0], [10, 0], [20, 0], [30, 0]], [[0, 0], [1, np.nan], [2, 3], [5, 5]]]
)
def test_from_corners_rejects_degenerate(corners: list[list[float]]) -> None:
    with pytest.raises(ValueError):
        TrayOutline.from_corners(corners)


def test_scaled_and_to_list() -> None:
    outline = TrayOutline.from_corners(SQUARE).scaled(0.5, 2.0)
    assert outline.area == pytest.approx(100 * 400)
    assert [50.0, 200.0] in outline.to_list()


def test_off_tray_uses_the_footprint() -> None:
    outline = TrayOutline.from_corners(SQUARE)
    boxes = np.array(
        [
            [150, 150, 180, 180],  # well inside
            [350, 150, 380, 180],  # well outside
            [150, 70, 180, 130],  # top of the box over the wall, base on the floor: inside
            [150, 290, 180, 330],  # base beyond the near edge: outside
            [290, 150, 320, 180],  # straddles the edge, two thirds out
        ],
        np.float32,
    )
    assert classify_off_tray(boxes, outline).tolist() == [False, True, False, True, True]
    inside = footprint_inside(boxes, outline)
    assert inside[0] == 1.0 and inside[1] == 0.0


def view_from(nadir: tuple[float, float], focal: float = 500.0) -> UprightView:
    return UprightView(nadir=np.array(nadir, np.float64), focal=focal, principal=np.array([200.0, 200.0]))


def test_with_the_vertical_the_footprint_is_the_base_wherever_the_camera_is() -> None:
    outline = TrayOutline.from_corners(SQUARE)
    # A die at the near edge, seen from straight above it (top-down camera, nadir at the die):
    # its base is the box itself, two thirds on the floor; the lower half of the box is mostly off it.
    edge = np.array([[150, 270, 180, 310]], np.float32)
    above = view_from((165.0, 290.0))
    assert footprint_inside(edge, outline)[0] < 0.5 <= footprint_inside(edge, outline, view=above)[0]
    # The base lies from the box centre towards the nadir: a die straddling the near (bottom) edge is more
    # off the floor seen from in front (as without a view) than from behind, and likewise left and right.
    front, behind = view_from((200.0, 2000.0), focal=800.0), view_from((200.0, -1600.0), focal=800.0)
    near_edge = np.array([[150, 285, 180, 315]], np.float32)
    assert footprint_inside(near_edge, outline, view=front)[0] < footprint_inside(near_edge, outline, view=behind)[0]
    right, left = view_from((2000.0, 200.0), focal=800.0), view_from((-1600.0, 200.0), focal=800.0)
    right_edge = np.array([[285, 150, 315, 180]], np.float32)
    assert footprint_inside(right_edge, outline, view=right)[0] < footprint_inside(right_edge, outline, view=left)[0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 400), st.floats(0, 400), st.floats(1, 80), st.floats(1, 80)), max_size=6),
    st.floats(-3000, 3000),
    st.floats(-3000, 3000),
    st.floats(100, 3000),
)
def test_footprint_fractions_stay_between_0_and_1(
    boxes: list[tuple[float, float, float, float]], nx: float, ny: float, focal: float
) -> None:
    xyxy = np.array([[x, y, x + w, y + h] for x, y, w, h in boxes], np.float32).reshape(-1, 4)
    inside = footprint_inside(xyxy, TrayOutline.from_corners(SQUARE), view=view_from((nx, ny), focal))
    assert inside.shape == (len(boxes),) and ((inside >= 0) & (inside <= 1)).all()


def test_no_outline_means_nothing_off_tray() -> None:
    assert classify_off_tray(np.zeros((3, 4)), None).tolist() == [False] * 3
    assert classify_off_tray(np.zeros((0, 4)), TrayOutline.from_corners(SQUARE)).shape == (0,)


def _tray_scene() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    img = cv2.GaussianBlur(rng.integers(0, 255, (480, 640, 3)).astype(np.uint8), (0, 0), 3)
    img = cv2.add(img, np.full_like(img, 60))
    cv2.fillPoly(img, [np.array([[120, 80], [540, 100], [560, 420], [100, 400]], np.int32)], (40, 110, 30))
    img = cv2.add(img, rng.integers(0, 12, img.shape).astype(np.uint8))
    boxes = np.array([[200, 200, 240, 240], [300, 250, 345, 292], [590, 300, 630, 340], [520, 370, 560, 410]])
    for x1, y1, x2, y2 in boxes:
        cv2.rectangle(img, (x1, y1), (x2, y2), (240, 240, 240), -1)
    return img, boxes.astype(np.float32)


def test_detect_tray_finds_a_green_tray() -> None:
    img, boxes = _tray_scene()
    outline = detect_tray(img, boxes)
    assert outline is not None and outline.source == "auto"
    assert outline.area == pytest.approx(0.5 * 640 * 480 * 0.88, rel=0.15)
    # The die in the corner keeps its place on the floor; the one on the table is out.
    assert classify_off_tray(boxes, outline).tolist() == [False, False, True, False]
    assert detect_tray(img) is not None  # without dice, it starts from the frame's centre


def test_a_die_in_a_wall_s_shadow_lies_on_the_floor() -> None:
    """A shadow darkens a green floor and its colour with it: the floor goes on under it, the die there is in."""
    rng = np.random.default_rng(5)
    img = np.full((480, 640, 3), (60, 90, 150), np.uint8)  # a brown table
    cv2.fillPoly(img, [np.array([[100, 60], [540, 60], [540, 420], [100, 420]], np.int32)], (40, 140, 40))
    shade = img[300:420, 100:540].astype(np.float32) * 0.55  # the wall's shadow over the floor's last third
    img[300:420, 100:540] = shade.astype(np.uint8)
    img = cv2.add(img, rng.integers(0, 8, img.shape).astype(np.uint8))
    boxes = np.array([[200, 120, 230, 150], [300, 180, 330, 210], [400, 140, 430, 170], [320, 350, 350, 380],
                      [580, 200, 610, 230]], np.float32)  # fmt: skip
    for x1, y1, x2, y2 in boxes.astype(int):
        cv2.rectangle(img, (x1, y1), (x2, y2), (235, 235, 235), -1)
    outline = detect_tray(img, boxes)
    assert outline is not None
    assert classify_off_tray(boxes, outline).tolist() == [False, False, False, False, True]


def test_only_a_coloured_floor_has_a_shade() -> None:
    """A darker grey beside a grey floor may be a table: no shade distance for a floor without colour."""
    lab = np.full((4, 4, 3), (60.0, 128.0, 128.0), np.float32)
    assert np.isinf(shade_distance(lab, np.array([150.0, 129.0, 127.0], np.float32))).all()
    green = np.array([150.0, 90.0, 160.0], np.float32)
    shaded = np.array([[[90.0, 128 + 0.6 * -38, 128 + 0.6 * 32]]], np.float32)
    assert float(shade_distance(shaded, green)[0, 0]) == pytest.approx(0.0, abs=1e-3)
    assert np.isinf(shade_distance(np.array([[[160.0, 90.0, 160.0]]], np.float32), green)).all()  # lighter: no shade


@pytest.mark.parametrize(("die", "found"), [(16, True), (22, True), (40, False)])
def test_a_small_tray_far_from_the_camera_is_found_by_the_size_of_its_dice(die: int, found: bool) -> None:
    """A tray 5 % of the frame holds a throw of small dice (found); of dice that big it could not (no tray)."""
    rng = np.random.default_rng(3)
    img = cv2.add(cv2.GaussianBlur(rng.integers(0, 255, (480, 640, 3)).astype(np.uint8), (0, 0), 3), 60)
    cv2.fillPoly(img, [np.array([[250, 170], [410, 172], [408, 270], [252, 268]], np.int32)], (40, 40, 150))
    boxes = np.array([[270, 190], [330, 200], [300, 235], [360, 230]], np.float32)
    boxes = np.hstack([boxes, boxes + die])
    for x1, y1, x2, y2 in boxes.astype(int):
        cv2.rectangle(img, (x1, y1), (x2, y2), (240, 240, 240), -1)
    assert 0.04 < 160 * 98 / (640 * 480) < 0.06  # under the frame share a tray once needed (8 %)
    assert (detect_tray(img, boxes) is not None) == found


@pytest.mark.parametrize(
    "frame",
    [np.full((480, 640, 3), 128, np.uint8), np.random.default_rng(1).integers(0, 255, (480, 640, 3)).astype(np.uint8)],
    ids=["uniform-table", "noise"],
)
def test_detect_tray_is_none_when_unsure(frame: np.ndarray) -> None:
    assert detect_tray(frame, np.array([[300, 200, 340, 240]], np.float32)) is None


def test_tray_from_aruco() -> None:
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(aruco.DICT_4X4_50)
    canvas = np.full((600, 800, 3), 200, np.uint8)
    for i, (x, y) in enumerate([(50, 50), (650, 50), (650, 450), (50, 450)]):
        canvas[y : y + 80, x : x + 80] = aruco.generateImageMarker(dictionary, i, 80)[..., None]
    outline = tray_from_aruco(canvas)
    assert outline is not None and outline.source == "aruco"
    assert outline.area == pytest.approx((650 - 130) * (450 - 130), rel=0.02)
    assert tray_from_aruco(canvas[:, :400]) is None  # two markers are not a tray


def _felt_rim_scene(lit_wall: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A tray whose rim is the floor's felt, running out of the frame left, top and right; dark walls but the left."""
    rng = np.random.default_rng(2)
    img = np.clip(cv2.GaussianBlur(rng.integers(0, 255, (480, 640, 3)).astype(np.uint8), (0, 0), 3) + 40.0, 0, 255)
    img = img.astype(np.uint8)
    floor = (150, 170, 165)
    cv2.rectangle(img, (0, 0), (639, 420), floor, -1)  # the rim, past the frame on three sides
    cv2.rectangle(img, (60, 40), (580, 380), (90, 100, 100), -1)  # the walls' inner faces, in shade
    cv2.rectangle(img, (60, 40), (100, 380), lit_wall, -1)  # but the left one, lit
    cv2.rectangle(img, (100, 70), (550, 350), floor, -1)  # the floor
    img = cv2.add(img, rng.integers(0, 6, img.shape).astype(np.uint8))
    boxes = np.array([[250, 150, 290, 190], [380, 230, 420, 270]], np.float32)
    for x1, y1, x2, y2 in boxes.astype(int):
        cv2.rectangle(img, (x1, y1), (x2, y2), (240, 240, 240), -1)
    return img, boxes


def test_a_floor_joined_to_a_felt_rim_through_a_lit_wall_is_cut_loose() -> None:
    from farklecam.vision.tray.detect import FLOOR_TOLERANCE, lab_distance

    lit = (190, 205, 200)
    pair = cv2.cvtColor(np.array([[lit, (150, 170, 165)]], np.uint8), cv2.COLOR_BGR2LAB).astype(np.float32)[0]
    assert 2 / 3 * FLOOR_TOLERANCE < lab_distance(pair[0] - pair[1]) < FLOOR_TOLERANCE  # joined at the first bar only
    img, boxes = _felt_rim_scene(lit)
    outline = detect_tray(img, boxes)
    assert outline is not None
    x, y, w, h = cv2.boundingRect(outline.polygon.astype(np.int32))
    assert 50 <= x <= 110 and 60 <= y <= 80 and 540 <= x + w <= 560 and 340 <= y + h <= 360  # the floor and lit wall
    shaded, _ = _felt_rim_scene((90, 100, 100))
    assert detect_tray(shaded, boxes) is not None  # walls all in shade: found at the first bar, as before


def _walled_tray(
    table: tuple[int, int, int], walls: tuple[int, int, int], floor: tuple[int, int, int], inset: int
) -> np.ndarray:
    """A 640 x 480 picture: a table, a tray's walls (120-560 x 60-420 px) and its floor ``inset`` px inside them."""
    img = np.full((480, 640, 3), table, np.uint8)
    cv2.rectangle(img, (120, 60), (560, 420), walls, -1)
    cv2.rectangle(img, (120 + inset, 60 + inset), (560 - inset, 420 - inset), floor, -1)
    return img


def _with_dice(img: np.ndarray, boxes: np.ndarray, colour: tuple[int, int, int], seed: int) -> np.ndarray:
    """``img`` with a die of ``colour`` (one white pip) in each box, and a little sensor noise."""
    for x1, y1, x2, y2 in boxes.astype(int):
        cv2.rectangle(img, (x1, y1), (x2, y2), colour, -1)
        cv2.circle(img, ((x1 + x2) // 2, (y1 + y2) // 2), 4, (240, 240, 240), -1)
    return cv2.add(img, np.random.default_rng(seed).integers(0, 8, img.shape).astype(np.uint8))


def test_dice_of_the_walls_colour_do_not_make_the_walls_the_floor() -> None:
    """Red dice on a wooden floor inside red walls: the floor is where they lie, not the red they share with the walls.

    Counted as lying on it, the dice made the walls' region the tray; where a red die lay
    against the outside of a wall, that region took it in and bent the outline's corner over it.
    """
    img = _walled_tray(table=(150, 150, 140), walls=(30, 30, 150), floor=(40, 90, 130), inset=36)
    boxes = np.array([[157, 97, 187, 127], [330, 230, 360, 260], [400, 300, 430, 330], [560, 250, 590, 280]],
                     np.float32)  # fmt: skip  # the first in the floor's corner (walls round it), the last off
    outline = detect_tray(_with_dice(img, boxes, (35, 35, 160), seed=3), boxes)
    assert outline is not None
    assert outline.area == pytest.approx(368 * 288, rel=0.1)  # the floor's; the walls' would be 440 x 360
    assert classify_off_tray(boxes, outline).tolist() == [False, False, False, True]


def test_a_die_in_the_floor_s_corner_still_finds_the_tray() -> None:
    """The die votes with wall and floor round it: their spread must not widen its colour bar to the whole picture."""
    img = _walled_tray(table=(40, 80, 120), walls=(200, 220, 230), floor=(110, 40, 90), inset=40)
    boxes = np.array([[154, 344, 190, 380], [30, 220, 66, 256]], np.float32)  # in the corner; on the table
    outline = detect_tray(_with_dice(img, boxes, (40, 40, 40), seed=8), boxes)
    assert outline is not None
    assert classify_off_tray(boxes, outline).tolist() == [False, True]
