"""The raytraced generator with its renderer: labels agree with the picture mitsuba draws.

Skipped where mitsuba is not installed (CI installs ``.[dev]``; mitsuba is in ``train``).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

pytest.importorskip("mitsuba", reason="mitsuba is in the train extra only (pip install mitsuba==3.9.1)")

from farklecam.datasets.raytraced.__main__ import main, scene_name
from farklecam.datasets.raytraced.camera import aim_camera
from farklecam.datasets.raytraced.dice import RoundedDie
from farklecam.datasets.raytraced.labels import label_dice
from farklecam.datasets.raytraced.looks import DieLook, die_atlas, felt_texture
from farklecam.datasets.raytraced.placement import Placed, Tray, flat_die
from farklecam.datasets.raytraced.render import Lighting, Surfaces, render_scene
from farklecam.datasets.raytraced.scene import generate_scene
from farklecam.datasets.yolo import COCKED_CLASS, read_labels, read_sidecar

W, H = 160, 120
pytestmark = pytest.mark.train


TRAY = Tray(12.0, 9.0, 2.0, 0.8, 0.5)
WHITE = DieLook("white", (0.93, 0.93, 0.91), (0.05, 0.05, 0.06), 0.1, False, 0.2, False)


def _render_one(die: RoundedDie) -> np.ndarray:
    """One white die on dark felt, straight down, lit from above; grey 0..255."""
    rng = np.random.default_rng(0)
    camera = aim_camera(np.array([0.0, 0.0, TRAY.floor_t]), 8.0, 50.0, (W, H), 0.0, 90.0)
    felt = felt_texture(rng, (0.06, 0.2, 0.12), 64)
    surfaces = Surfaces(felt, felt, felt, 0.4, [die_atlas(rng, WHITE)], [0.2], [0])
    light = Lighting((5.0, 5.0, 80.0), 15.0, 1.0, None, 0.0, 0.2)
    rgb, visible, _ = render_scene(camera, TRAY, [die], surfaces, light, 16)
    assert visible == [pytest.approx(1.0)]
    grey = np.clip(rgb.mean(axis=2) ** (1 / 2.2) * 255, 0, 255).astype(np.uint8)
    return np.asarray(grey)


@pytest.mark.parametrize("seed", range(6))
def test_a_flat_die_shows_its_labelled_face_inside_its_box(seed: int) -> None:
    die = flat_die(np.random.default_rng(seed), 1.8, 0.12, np.array([0.3, -0.2]), TRAY.floor_t)
    grey = _render_one(die)
    camera = aim_camera(np.array([0.0, 0.0, TRAY.floor_t]), 8.0, 50.0, (W, H), 0.0, 90.0)
    (label,), hidden = label_dice([Placed(die, "flat")], [1.0], camera, TRAY)
    assert hidden == 0
    x1, y1, x2, y2 = (round(v) for v in label.entry["box"])
    centre, _ = camera.project(die.position[None])
    assert x1 <= centre[0, 0] <= x2 and y1 <= centre[0, 1] <= y2
    bright = grey > 150
    ys, xs = np.nonzero(bright)
    # The white die is where its box says: the bright pixels fill the box and none lie far outside it.
    assert x1 - 2 <= xs.min() and xs.max() <= x2 + 2 and y1 - 2 <= ys.min() and ys.max() <= y2 + 2
    assert bright[y1:y2, x1:x2].mean() > 0.5
    # Its pips, dark blobs inside the bright top face, count the labelled face.
    top = np.zeros_like(grey)
    inner = cv2.erode(bright.astype(np.uint8), np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(inner, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(top, [max(contours, key=cv2.contourArea)], -1, 255, -1)
    holes = (top > 0) & ~bright
    _, _, stats, _ = cv2.connectedComponentsWithStats(holes.astype(np.uint8))
    pips = int((stats[1:, cv2.CC_STAT_AREA] >= 2).sum())
    assert pips == label.entry["face"] == label.box.cls + 1


def test_a_generated_scene_is_written_with_consistent_labels(tmp_path: Path) -> None:
    args = ["--out", str(tmp_path), "--count", "1", "--seed", "4", "--width", str(W), "--height", str(H)]
    assert main([*args, "--spp", "4"]) == 0
    image = tmp_path / "images" / f"{scene_name(4, 0)}.jpg"
    assert cv2.imread(str(image)).shape == (H, W, 3)
    boxes = read_labels(tmp_path / "labels" / f"{scene_name(4, 0)}.txt")
    sidecar = read_sidecar(image)
    assert len(boxes) == len(sidecar["dice"]) > 0
    normal = np.asarray(sidecar["camera"]["table_normal"])
    for box, die in zip(boxes, sidecar["dice"], strict=True):
        assert np.allclose(box.to_xyxy(W, H), die["box"], atol=0.2)
        assert (box.cls == COCKED_CLASS) == (die["tilt_deg"] > 15) == (die["face"] is None)
        up = np.asarray(die["up_cam"])
        tilt = np.degrees(np.arctan2(np.linalg.norm(np.cross(up, normal)), up @ normal))  # exact near 0
        assert abs(tilt - die["tilt_deg"]) < 0.1
    assert len(sidecar["tray"]) == 4 and len(sidecar["camera"]["intrinsics"]) == 4
    # Resumable: a second run skips the written scene and leaves it as it was.
    before = (tmp_path / "labels" / f"{scene_name(4, 0)}.json").read_text()
    assert main(args) == 0
    assert (tmp_path / "labels" / f"{scene_name(4, 0)}.json").read_text() == before
    assert "count=1" in (tmp_path / "READY").read_text()


def test_scenes_are_a_function_of_seed_and_index() -> None:
    a = generate_scene(9, 3, W, H, spp=1)
    b = generate_scene(9, 3, W, H, spp=1)
    assert json.dumps(a.sidecar["dice"]) == json.dumps(b.sidecar["dice"])
    assert np.array_equal(a.image, b.image)
    assert json.dumps(generate_scene(9, 4, W, H, spp=1).sidecar["dice"]) != json.dumps(a.sidecar["dice"])
    assert a.sidecar["renderer"]["spp"] == 1
