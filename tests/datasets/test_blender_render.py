"""The Blender generator end to end, in the Blender venv: a scene renders, reads back, and its boxes hold dice.

bpy needs its own interpreter (Python 3.11, numpy<2; ``scripts/blender_venv.sh``), so these
tests run it in a subprocess, found at ``.venv-blender/bin/python`` or
``$FARKLECAM_BLENDER_PYTHON``; without one (CI) they are skipped, saying so.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from farklecam.datasets.yolo import COCKED_CLASS, find_images, read_sidecar
from farklecam.models.evaluate.run import load_labels

ROOT = Path(__file__).resolve().parents[2]
_found = os.environ.get("FARKLECAM_BLENDER_PYTHON") or str(ROOT / ".venv-blender" / "bin" / "python")
BLENDER_PYTHON = Path(_found)
pytestmark = pytest.mark.skipif(
    not BLENDER_PYTHON.exists(),
    reason=f"no Blender venv at {BLENDER_PYTHON} (make one with scripts/blender_venv.sh, "
    "or set FARKLECAM_BLENDER_PYTHON)",
)


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(BLENDER_PYTHON), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


_SAME_AS_MATHUTILS = """
import math, numpy as np, bpy
from mathutils import Matrix, Quaternion, Vector
from farklecam.datasets.blender.rotations import UPRIGHT, quaternion_matrix, rotation_about
rng = np.random.default_rng(0)
for _ in range(3000):
    axis, angle = rng.normal(size=3), rng.uniform(-4 * math.pi, 4 * math.pi)
    assert np.array_equal(np.array(Matrix.Rotation(angle, 3, Vector(axis))), rotation_about(axis, angle)), angle
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    assert np.array_equal(np.array(Quaternion(q).to_matrix()), quaternion_matrix(q))
half = math.pi / 2
turns = {6: ("X", math.pi), 2: ("Y", -half), 5: ("Y", half), 3: ("X", half), 4: ("X", -half)}
for face, (axis, angle) in turns.items():
    assert np.array_equal(np.array(Matrix.Rotation(angle, 3, axis)), UPRIGHT[face]), face
print("same")
"""


def test_the_numpy_rotations_are_mathutils_bit_for_bit() -> None:
    done = _run("-c", _SAME_AS_MATHUTILS, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("same")


def test_a_rendered_scene_reads_back_with_its_boxes_on_the_dice(tmp_path: Path) -> None:
    w, h = 320, 240
    args = ["--out", str(tmp_path), "--count", "1", "--seed", "40", "--width", str(w), "--height", str(h)]
    done = _run("-m", "farklecam.datasets.blender", *args, "--samples", "4")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "READY").exists()
    (image_path,) = find_images(tmp_path / "images")
    assert image_path.name == "b40_000000.jpg"
    image = cv2.imread(str(image_path))
    assert image.shape == (h, w, 3)
    sidecar = read_sidecar(image_path)
    assert sidecar["generator"] == "blender" and sidecar["size"] == [w, h]
    labels = load_labels(image_path, w, h)  # what `python -m farklecam.models.evaluate` reads
    assert len(labels.classes) == len(sidecar["dice"]) > 0
    for (x1, y1, x2, y2), cls, die in zip(labels.xyxy, labels.classes, sidecar["dice"], strict=True):
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
        assert (cls == COCKED_CLASS) == (die["status"] == "cocked")
        if die["occluded"]:
            continue
        # A die is not the floor it lies on: inside its box many pixels stand out from the
        # ring of pixels just around it, and more than in that ring.
        a, b, c, d = (round(float(v)) for v in (x1, y1, x2, y2))
        pad = max(3, (c - a) // 3)
        outer = image[max(b - pad, 0) : d + pad, max(a - pad, 0) : c + pad].astype(np.float32)
        ring = np.ones(outer.shape[:2], bool)
        ring[b - max(b - pad, 0) : d - max(b - pad, 0), a - max(a - pad, 0) : c - max(a - pad, 0)] = False
        background = np.median(outer[ring], axis=0)
        inner = image[b:d, a:c].astype(np.float32)
        stands_out = np.abs(inner - background).sum(axis=2) > 60
        ring_out = np.abs(outer[ring] - background).sum(axis=1) > 60
        assert stands_out.mean() > 0.3 and stands_out.mean() > 2 * ring_out.mean(), die
