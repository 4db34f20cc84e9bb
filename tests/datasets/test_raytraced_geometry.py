"""The raytraced generator's geometry, without the renderer: dice, resting poses, camera, labels."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.datasets.raytraced.__main__ import main
from farklecam.datasets.raytraced.camera import PinholeCamera, aim_camera
from farklecam.datasets.raytraced.dice import COCKED_TILT_DEG, FACE_NORMALS, RoundedDie, rounded_die_mesh, top_face
from farklecam.datasets.raytraced.labels import label_dice, tray_corners_px
from farklecam.datasets.raytraced.placement import (
    OVERLAP_TOL_CM,
    Placed,
    Tray,
    flat_die,
    lean_on_die,
    lean_on_wall,
    lean_tilt,
    off_tray_die,
)
from farklecam.datasets.raytraced.scene import place_dice
from farklecam.datasets.yolo import COCKED_CLASS

TRAY = Tray(20.0, 14.0, 3.0, 1.0, 0.5)
sizes = st.floats(1.2, 2.0)
roundings = st.floats(0.06, 0.18)
seeds = st.integers(0, 2**32 - 1)


def _lowest(die: RoundedDie) -> float:
    return float(die.world_vertices()[:, 2].min())


@given(roundings)
def test_mesh_lies_on_the_rounded_surface_with_outward_normals(rounding: float) -> None:
    mesh = rounded_die_mesh(round(rounding, 3))
    die = RoundedDie(1.0, round(rounding, 3), np.eye(3), np.zeros(3))
    assert np.abs(die.sdf(mesh.vertices)).max() < 1e-9  # exact where the rounding is the mesh's own
    assert np.allclose(np.linalg.norm(mesh.normals, axis=1), 1.0)
    # A point a little outside along the normal is outside; the triangles wind outwards.
    assert (die.sdf(mesh.vertices + 0.01 * mesh.normals) > 0).all()
    tri = mesh.vertices[mesh.faces]
    winding = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    big = np.linalg.norm(winding, axis=1) > 1e-9
    assert (np.einsum("ij,ij->i", winding[big], tri[big].mean(axis=1)) > 0).all()


@given(seeds, sizes, roundings)
def test_support_is_the_farthest_vertex(seed: int, size: float, rounding: float) -> None:
    rng = np.random.default_rng(seed)
    die = flat_die(rng, size, rounding, np.zeros(2), 0.0)
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    reach = float(((die.world_vertices() - die.position) @ direction).max())
    assert reach <= die.support(direction) + 1e-3 * size  # the mesh is cached at the rounding to 0.001
    assert reach >= die.support(direction) - 0.02 * size  # the mesh samples the rounding coarsely


@given(seeds, sizes, roundings)
def test_a_flat_die_rests_on_the_floor_within_two_degrees(seed: int, size: float, rounding: float) -> None:
    die = flat_die(np.random.default_rng(seed), size, rounding, np.array([1.0, -2.0]), 0.5)
    face, tilt, normal = die.up()
    assert tilt <= 2.0 + 1e-6
    assert abs(_lowest(die) - 0.5) < 0.005 * size
    assert np.allclose(normal, die.rotation @ np.asarray(FACE_NORMALS[face]))


@settings(max_examples=40)
@given(seeds, sizes, roundings, st.floats(15.0, 44.0))
def test_a_die_leaning_on_a_wall_touches_it_and_the_floor(seed: int, size: float, rounding: float, tilt: float) -> None:
    die = lean_on_wall(np.random.default_rng(seed), size, rounding, TRAY, tilt)
    assert abs(die.up()[1] - tilt) < 1e-6
    assert abs(TRAY.wall_gap(die)) < 1e-9  # touching one wall, crossing none
    assert abs(_lowest(die) - TRAY.floor_t) < 0.005 * size
    assert TRAY.inside(die.position)


@settings(max_examples=40)
@given(seeds, sizes, roundings, st.floats(15.5, 44.0))
def test_a_die_leaning_on_a_die_touches_it_without_overlap(
    seed: int, size: float, rounding: float, tilt: float
) -> None:
    rng = np.random.default_rng(seed)
    helper = flat_die(rng, size, rounding, np.zeros(2), TRAY.floor_t)
    die = lean_on_die(rng, helper, size, rounding, TRAY.floor_t, tilt)
    assert abs(die.up()[1] - tilt) < 1e-6
    assert 0.0 <= die.clearance(helper) < 0.01
    assert abs(_lowest(die) - TRAY.floor_t) < 0.005 * size
    assert die.up()[1] > COCKED_TILT_DEG


@given(seeds)
def test_lean_tilts_span_15_to_50_mostly_25_to_36(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tilts = np.array([lean_tilt(rng) for _ in range(400)])
    assert tilts.min() >= 15 and tilts.max() <= 50
    assert ((tilts >= 25) & (tilts <= 36)).mean() > 0.6


def _camera(tilt: float = 8.0, yaw: float = 80.0, size: tuple[int, int] = (640, 480)) -> PinholeCamera:
    return aim_camera(np.array([0.0, 0.0, TRAY.floor_t]), 45.0, 50.0, size, tilt, yaw)


@settings(max_examples=25, deadline=None)
@given(seeds)
def test_placed_dice_never_overlap_nor_cross_a_wall(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    placed = place_dice(rng, TRAY, [1.6] * n, [0.12] * n, _camera())
    dice = [p.die for p in placed]
    for i, a in enumerate(dice):
        for b in dice[i + 1 :]:
            assert a.clearance(b) >= -OVERLAP_TOL_CM
    for p in placed:
        if p.kind == "off":
            assert not TRAY.inside(p.die.position)
            reach = max(abs(p.die.position[0]) - TRAY.width / 2, abs(p.die.position[1]) - TRAY.depth / 2)
            assert reach >= TRAY.wall_t + 0.5
        else:
            assert TRAY.inside(p.die.position)
            assert TRAY.wall_gap(p.die) >= -OVERLAP_TOL_CM


@given(st.floats(0.0, 15.0), st.floats(0.0, 360.0))
def test_camera_projects_its_target_to_the_centre_and_sees_the_table_from_above(tilt: float, yaw: float) -> None:
    cam = _camera(tilt, yaw)
    px, front = cam.project(np.array([cam.target]))
    assert front.all()
    assert np.allclose(px[0], [320.0, 240.0], atol=1e-6)
    normal = cam.to_camera(np.array([[0.0, 0.0, 1.0]]))[0]
    assert abs(np.degrees(np.arccos(-normal[2])) - tilt) < 1e-6  # the table's normal faces the lens
    fx, fy, cx, cy = cam.intrinsics()
    point = np.array([[3.0, -2.0, 0.5]])
    cam_pt = cam.to_camera(point - np.asarray(cam.eye))[0]
    assert np.allclose(cam.project(point)[0][0], [cam_pt[0] / cam_pt[2] * fx + cx, cam_pt[1] / cam_pt[2] * fy + cy])


def test_top_face_reads_the_face_turned_up() -> None:
    for face, normal in FACE_NORMALS.items():
        n = np.asarray(normal)
        axis = np.cross(n, [0.0, 0.0, 1.0])
        if np.linalg.norm(axis) < 1e-9:
            rotation = np.eye(3) if n[2] > 0 else np.diag([1.0, -1.0, -1.0])
        else:
            a = axis / np.linalg.norm(axis)
            k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            rotation = np.eye(3) + k + k @ k
        assert top_face(rotation)[0] == face
        assert top_face(rotation)[1] < 1e-6


def test_labels_give_status_class_and_pose_as_the_sidecar_schema_has_them() -> None:
    rng = np.random.default_rng(5)
    cam = _camera(tilt=0.0)
    flat = flat_die(rng, 1.6, 0.12, np.array([-4.0, 0.0]), TRAY.floor_t)
    wall = lean_on_wall(rng, 1.6, 0.12, TRAY, 30.0)
    off = off_tray_die(rng, 1.6, 0.12, TRAY, (40.0, 40.0))
    labels, hidden = label_dice(
        [Placed(flat, "flat"), Placed(wall, "wall"), Placed(off, "off")], [1.0, 0.3, 1.0], cam, TRAY
    )
    assert hidden == 0
    by_kind = {d.entry["placed"]: d for d in labels}
    face = flat.up()[0]
    assert by_kind["flat"].entry["status"] == "ok" and by_kind["flat"].entry["face"] == face
    assert by_kind["flat"].box.cls == face - 1
    assert by_kind["wall"].entry["status"] == "cocked" and by_kind["wall"].entry["face"] is None
    assert by_kind["wall"].box.cls == COCKED_CLASS and by_kind["wall"].entry["occluded"]
    assert by_kind["wall"].entry["touching"]
    assert by_kind["off"].entry["status"] == "off_tray"
    for label in labels:
        up = np.asarray(label.entry["up_cam"])
        normal = cam.to_camera(np.array([[0.0, 0.0, 1.0]]))[0]
        assert abs(_tilt(up, normal) - label.entry["tilt_deg"]) < 0.05
    corners = np.asarray(tray_corners_px(cam, TRAY), np.float32)
    boxes = {kind: np.asarray(d.entry["box"]) for kind, d in by_kind.items()}
    centre = {kind: (float((b[0] + b[2]) / 2), float((b[1] + b[3]) / 2)) for kind, b in boxes.items()}
    assert cv2.pointPolygonTest(corners, centre["flat"], False) > 0  # the tray outline holds the dice in it
    assert cv2.pointPolygonTest(corners, centre["off"], False) < 0
    lefts = [d.entry["box"][0] for d in labels]
    assert lefts == sorted(lefts)  # sorted left to right


def _tilt(up: np.ndarray, normal: np.ndarray) -> float:
    """Degrees between two unit vectors, exact near zero (where arccos of a rounded cosine is not)."""
    return float(np.degrees(np.arctan2(np.linalg.norm(np.cross(up, normal)), up @ normal)))


def test_the_command_line_says_how_to_get_mitsuba(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "mitsuba", None)  # as if not installed: import raises ImportError
    assert main(["--out", str(tmp_path), "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mitsuba" in err
    assert not (tmp_path / "images").exists()


def test_the_package_imports_without_mitsuba() -> None:
    code = "import sys, farklecam.datasets.raytraced.__main__; sys.exit(1 if 'mitsuba' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
