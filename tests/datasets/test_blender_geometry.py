"""The Blender generator's pure maths, in the main venv (no bpy): faces, rotations, drop planning, labels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.datasets.blender.drops import HELD_KINDS, lean_pose, plan_drops
from farklecam.datasets.blender.faces import FACES, PIP_SPACING, PIPS, face_axes, pip_spheres
from farklecam.datasets.blender.labels import TOUCH_CM, DiePose, label_dice
from farklecam.datasets.blender.rotations import UPRIGHT, quaternion_matrix, random_rotation, rotation_about
from farklecam.datasets.raytraced.camera import PinholeCamera, aim_camera
from farklecam.datasets.raytraced.dice import COCKED_TILT_DEG
from farklecam.datasets.raytraced.placement import Tray
from farklecam.datasets.yolo import COCKED_CLASS, HIDDEN_BELOW, DieLabel

TRAY = Tray(20.0, 14.0, 3.0, 1.0, 0.5)
SIZE = 1.6
seeds = st.integers(0, 2**32 - 1)
#: Largest tilt a die's most upward face can have: a corner straight up (arccos(1/sqrt 3)).
MAX_TILT_DEG = math.degrees(math.acos(1 / math.sqrt(3)))


def _cube(size: float) -> np.ndarray:
    """A die's mesh stand-in: its 8 corners and 6 face centres (n, 3), in its own frame."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    centres = np.array([FACES[v] for v in FACES], float)
    return np.concatenate([corners, centres]) * size / 2


def _camera(size: tuple[int, int] = (640, 480)) -> PinholeCamera:
    return aim_camera(np.array([0.0, 0.0, TRAY.floor_t]), 45.0, 50.0, size, 8.0, 80.0)


def _resting(rotation: np.ndarray, xy: tuple[float, float], kind: str = "toss") -> DiePose:
    """A die of edge SIZE with its lowest vertex on the tray floor at ``xy``."""
    verts = _cube(SIZE)
    low = float((rotation @ verts.T).T[:, 2].min())
    return DiePose(rotation, np.array([xy[0], xy[1], TRAY.floor_t - low]), verts, SIZE, kind)


def _label(*dice: DiePose, seen: float = 1.0) -> tuple[list[DieLabel], int]:
    return label_dice(list(dice), _camera(), TRAY, lambda _k, _box, _stride: seen)


def _rot_z(angle: float) -> np.ndarray:
    return rotation_about((0, 0, 1), angle)


# ---------------------------------------------------------------- faces and pips


def test_opposite_faces_sum_to_seven_and_every_face_has_its_number_of_pips() -> None:
    assert sorted(FACES) == [1, 2, 3, 4, 5, 6]
    for value, normal in FACES.items():
        assert np.array_equal(np.asarray(FACES[7 - value]), -np.asarray(normal))
        assert len(PIPS[value]) == len(set(PIPS[value])) == value
    centres, normals = pip_spheres(1.8, 0.15, 0.07)
    assert len(centres) == sum(FACES)  # 21
    for value, normal in FACES.items():
        on_face = np.all(normals == np.asarray(normal), axis=1)
        assert on_face.sum() == value  # the spheres cut into face v number v


@given(st.floats(1.2, 2.2), st.floats(0.075, 0.095), st.floats(0.35, 0.6))
def test_pip_spheres_sink_into_their_face_on_its_grid(size: float, radius_share: float, depth_share: float) -> None:
    r = radius_share * size
    depth = depth_share * r
    centres, normals = pip_spheres(size, r, depth)
    out = np.einsum("ij,ij->i", centres, normals)
    assert np.allclose(out, size / 2 + r - depth)  # each dimple is `depth` deep
    for value in FACES:
        n, a, b = face_axes(value)
        assert np.isclose(np.cross(a, b) @ n, 1.0)
        on = np.all(normals == n, axis=1)
        grid = np.stack([centres[on] @ a, centres[on] @ b], axis=1) / (PIP_SPACING * size)
        assert np.allclose(grid, np.rint(grid)) and np.abs(grid).max() <= 1 + 1e-9
        assert sorted(map(tuple, np.rint(grid).astype(int).tolist())) == sorted(PIPS[value])


# ---------------------------------------------------------------- rotations


@given(st.lists(st.floats(-1, 1), min_size=3, max_size=3), st.floats(-4 * math.pi, 4 * math.pi))
def test_rotation_about_is_the_rotation_it_names(axis: list[float], angle: float) -> None:
    k = np.asarray(axis)
    if np.linalg.norm(k) < 1e-3:
        return
    rot = rotation_about(k, angle)
    assert np.allclose(rot @ rot.T, np.eye(3), atol=1e-6) and np.isclose(np.linalg.det(rot), 1.0, atol=1e-6)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    rodrigues = np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx
    assert np.abs(rot - rodrigues).max() < 2e-6  # single precision, as Blender computes it


@given(seeds)
def test_random_rotations_are_rotations(seed: int) -> None:
    rot = random_rotation(np.random.default_rng(seed))
    assert np.allclose(rot @ rot.T, np.eye(3), atol=1e-6) and np.isclose(np.linalg.det(rot), 1.0, atol=1e-6)
    assert np.array_equal(quaternion_matrix([1.0, 0.0, 0.0, 0.0]), np.eye(3))


def test_upright_turns_each_face_up() -> None:
    for value, rot in UPRIGHT.items():
        assert np.allclose(rot @ np.asarray(FACES[value]), [0, 0, 1], atol=1e-6)


@given(seeds, st.floats(0, 2 * math.pi), st.floats(18, 44))
def test_a_lean_pose_tips_its_top_away_from_the_support_by_the_tilt(seed: int, heading: float, tilt: float) -> None:
    towards = np.array([math.cos(heading), math.sin(heading), 0.0])
    rot = lean_pose(np.random.default_rng(seed), towards, tilt)
    (label,), _ = _label(_resting(rot, (0.0, 0.0)))
    assert label.entry["tilt_deg"] == pytest.approx(tilt, abs=0.01)  # (past 45 a side face is the top one)
    up = np.array(label.entry["up_cam"]) @ _camera().axes()  # the top face's normal, back in the world
    assert up @ towards < 0  # leaning onto the support: the top looks away from it


# ---------------------------------------------------------------- labels from known poses


def test_a_die_turned_30_degrees_about_x_is_cocked_at_30() -> None:
    (label,), hidden = _label(_resting(rotation_about((1, 0, 0), math.radians(30)), (1.0, -2.0)))
    assert hidden == 0
    assert label.entry["status"] == "cocked" and label.entry["face"] is None
    assert label.entry["tilt_deg"] == pytest.approx(30.0, abs=0.01)
    assert label.box.cls == COCKED_CLASS


@given(st.sampled_from(sorted(FACES)), st.floats(0, 2 * math.pi), st.floats(-8, 8), st.floats(-5, 5))
def test_a_flat_die_with_any_yaw_is_ok_with_its_top_face(face: int, yaw: float, x: float, y: float) -> None:
    (label,), _ = _label(_resting(_rot_z(yaw) @ UPRIGHT[face], (x, y)))
    assert label.entry["status"] == "ok"
    assert label.entry["face"] == face == label.box.cls + 1
    assert label.entry["tilt_deg"] < 0.05  # single-precision rotations: arccos near 1 shows ~1e-7 as 0.03 degrees
    assert label.entry["placed"] == "flat"


@pytest.mark.parametrize("xy", [(11.5, 0.0), (0.0, -7.5), (-12.0, 8.0)])
def test_a_die_centred_outside_the_floor_is_off_tray(xy: tuple[float, float]) -> None:
    (label,), _ = _label(_resting(UPRIGHT[3], xy, "off"))
    assert label.entry["status"] == "off_tray" and label.entry["placed"] == "off"
    assert label.entry["face"] == 3 and label.entry["dropped_as"] == "off"


@settings(max_examples=60)
@given(seeds)
def test_any_rotation_tilts_at_most_54_74_degrees_and_reads_its_most_upward_face(seed: int) -> None:
    rot = random_rotation(np.random.default_rng(seed))
    (label,), _ = _label(_resting(rot, (0.0, 0.0)))
    tilt = label.entry["tilt_deg"]
    assert 0.0 <= tilt <= MAX_TILT_DEG + 0.01
    heights = {v: float((rot @ np.asarray(n))[2]) for v, n in FACES.items()}
    top = max(heights, key=heights.__getitem__)
    assert tilt == pytest.approx(math.degrees(math.acos(min(heights[top], 1.0))), abs=0.006)
    assert label.entry["face"] == (None if tilt > COCKED_TILT_DEG else top)


def test_touching_dice_and_walls_are_marked_and_hidden_dice_left_out() -> None:
    a = _resting(UPRIGHT[1], (0.0, 0.0))
    b = _resting(UPRIGHT[2], (SIZE + TOUCH_CM / 2, 0.0))
    far = _resting(UPRIGHT[4], (-5.0, 3.0))
    wall = _resting(UPRIGHT[5], (TRAY.width / 2 - SIZE / 2, 3.0))
    labels, hidden = _label(a, b, far, wall)
    touching = {lab.entry["face"]: lab.entry["touching"] for lab in labels}
    assert hidden == 0 and touching == {1: True, 2: True, 4: False, 5: True}
    labels, hidden = _label(a, b, seen=HIDDEN_BELOW / 2)
    assert labels == [] and hidden == 2


def test_labels_are_sorted_left_to_right_with_boxes_inside_the_picture() -> None:
    dice = [_resting(UPRIGHT[v], (x, 0.0)) for v, x in ((6, 6.0), (2, -6.0), (4, 0.0))]
    labels, _ = _label(*dice)
    lefts = [lab.entry["box"][0] for lab in labels]
    assert lefts == sorted(lefts)
    for lab in labels:
        x1, y1, x2, y2 = lab.entry["box"]
        assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 480


# ---------------------------------------------------------------- drop planning


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(2, 8))
def test_drops_start_in_the_tray_or_in_frame_beside_it_and_clear_of_each_other(seed: int, n: int) -> None:
    camera = _camera()
    sizes = [float(s) for s in np.random.default_rng(seed).uniform(1.4, 1.9, n)]
    drops = plan_drops(np.random.default_rng(seed), TRAY, sizes, [_cube(s) for s in sizes], camera)
    assert 0 < len(drops) <= n + 3  # each die on a helper brings its helper
    for d in drops:
        s = sizes[d.index]
        x, y, _ = d.position
        rot = d.rotation
        assert np.allclose(rot @ rot.T, np.eye(3), atol=1e-6)
        if d.kind == "off":
            assert abs(x) >= TRAY.width / 2 + TRAY.wall_t + 0.9 * s or abs(y) >= TRAY.depth / 2 + TRAY.wall_t + 0.9 * s
            ((u, v),), _ = camera.project(d.position[None])
            assert 0.05 * 640 < u < 0.95 * 640 and 0.05 * 480 < v < 0.95 * 480
        else:
            assert abs(x) <= TRAY.width / 2 - s / 2 and abs(y) <= TRAY.depth / 2 - s / 2  # over the floor
            low = float(((rot @ _cube(s).T).T + d.position)[:, 2].min())
            if d.kind == "toss":
                assert low > TRAY.floor_t - 1e-9  # dropped from above the floor
            else:
                assert abs(low - TRAY.floor_t) < 0.01  # placed on it
    for i, a in enumerate(drops):
        for b in drops[i + 1 :]:
            pair = {a.kind, b.kind} == {"helper", "die"} and a.index == b.index
            if not pair:
                assert np.linalg.norm(a.position - b.position) > 0.87 * (sizes[a.index] + sizes[b.index])
    assert all(d.kind in HELD_KINDS | {"toss", "off"} for d in drops)


@settings(max_examples=20, deadline=None)
@given(seeds)
def test_leaning_dice_lean_past_the_threshold_on_a_wall_or_their_helper(seed: int) -> None:
    sizes = [1.6] * 8
    drops = plan_drops(np.random.default_rng(seed), TRAY, sizes, [_cube(1.6)] * 8, _camera())
    poses = [DiePose(d.rotation, d.position, _cube(1.6), 1.6, d.kind) for d in drops]
    labels, _ = label_dice(poses, _camera(), TRAY, lambda _k, _b, _s: 1.0)
    for lab in labels:
        if lab.entry["dropped_as"] in ("wall", "die"):
            # 50 tipped reads 40 from the other face. The lean's axis may sit up to 4 degrees off the die's
            # face axes (its yaw jitter), where the two faces tie at atan(1 / cos 4) = 45.07 degrees.
            assert 18 - 0.01 <= lab.entry["tilt_deg"] <= 45.07 + 0.01
            assert lab.entry["status"] == "cocked" and lab.entry["face"] is None
            if lab.entry["dropped_as"] == "wall":
                assert lab.entry["placed"] == "wall" and lab.entry["touching"]
        if lab.entry["dropped_as"] == "helper":
            assert lab.entry["tilt_deg"] < 0.05


@given(seeds, st.integers(0, 10_000))
def test_the_same_seed_and_index_give_the_same_plan(seed: int, index: int) -> None:
    def plan() -> list[tuple[str, list[float], list[float], int]]:
        rng = np.random.default_rng([seed, index, 3])
        drops = plan_drops(rng, TRAY, [1.5, 1.7, 1.5, 1.8], [_cube(1.5), _cube(1.7), _cube(1.5), _cube(1.8)], _camera())
        return [(d.kind, d.rotation.ravel().tolist(), d.position.tolist(), d.index) for d in drops]

    assert plan() == plan()
