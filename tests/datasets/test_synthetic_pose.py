"""The generator's pose labels: each die's up-axis, the table's normal and the intrinsics, in the camera's frame.

They were added to the sidecar only: every image the generator drew before stays byte
for byte the same (the hashes below were taken from the generator before the fields existed).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from farklecam.datasets.synthetic.camera import look_from
from farklecam.datasets.synthetic.scene import Scene, generate_scene

#: sha256 of the BGR pixels of ``generate_scene(5, index, 160, 120, 1.0, version)``, before the pose fields.
_IMAGES_BEFORE = {
    (0, 1): "2a740ef162bca53665e1a3c1bdad02b70ad702b0b85402d5bda3d05aedac0c39",
    (1, 2): "e93dc80ed41a5be4bd057a7d88359d751588f1c395b706d0ef2c1532c30b0577",
    (2, 2): "018700d705af502716b21a75dbb7afe850511097c7c6a81852a289a78c2caeb7",
}


@pytest.fixture(scope="module")
def scenes() -> dict[tuple[int, int], Scene]:
    return {key: generate_scene(5, key[0], 160, 120, 1.0, key[1]) for key in _IMAGES_BEFORE}


def test_the_pose_fields_leave_every_image_as_it_was(scenes: dict[tuple[int, int], Scene]) -> None:
    for key, digest in _IMAGES_BEFORE.items():
        assert hashlib.sha256(scenes[key].image.tobytes()).hexdigest() == digest


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    cos = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def test_tilt_is_the_angle_between_the_up_axis_and_the_table_normal(scenes: dict[tuple[int, int], Scene]) -> None:
    leaning = 0
    for scene in scenes.values():
        normal = np.asarray(scene.sidecar["camera"]["table_normal"])
        assert abs(np.linalg.norm(normal) - 1) < 1e-4
        for die in scene.sidecar["dice"]:
            up = np.asarray(die["up_cam"])
            assert abs(np.linalg.norm(up) - 1) < 1e-4
            assert _angle(up, normal) == pytest.approx(die["tilt_deg"], abs=0.05)
            leaning += die["tilt_deg"] > 15
    assert leaning >= 2  # lean rate 1.0: the check covers leaning dice, not only flat ones


def test_the_table_normal_faces_the_camera(scenes: dict[tuple[int, int], Scene]) -> None:
    for scene in scenes.values():
        cam = scene.sidecar["camera"]
        eye, target = np.asarray(cam["eye"]), np.asarray(cam["target"])
        tilt = _angle(eye - target, np.array([0.0, 0.0, 1.0]))
        # The optical axis is +z in the camera's frame; the table's normal points back at the camera.
        assert _angle(-np.asarray(cam["table_normal"]), np.array([0.0, 0.0, 1.0])) == pytest.approx(tilt, abs=0.3)


@pytest.mark.parametrize(("tilt", "yaw"), [(0.0, 0.0), (20.0, 70.0), (35.0, 200.0)])
def test_intrinsics_and_camera_frame_project_as_the_renderer_does(tilt: float, yaw: float) -> None:
    camera = look_from(np.array([1.0, -2.0, 0.5]), 30.0, tilt, yaw, 55.0, 320, 240)
    points = np.random.default_rng(0).uniform(-8, 8, (20, 3)) * np.array([1, 1, 0.2])
    px, in_front = camera.project(points)
    assert in_front.all()
    local = camera.to_camera(points - np.asarray(camera.eye))
    fx, fy, cx, cy = camera.intrinsics()
    mine = np.stack([local[:, 0] / local[:, 2] * fx + cx, local[:, 1] / local[:, 2] * fy + cy], axis=1)
    np.testing.assert_allclose(mine, px, atol=1e-3)
