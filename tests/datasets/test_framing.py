"""The generated scenes' framing: dice come out the size asked for, the tray holds a lean, draws are fixed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.datasets.blender.drops import FRAMING as BLENDER
from farklecam.datasets.raytraced.framing import FramingRanges, frame_tray
from farklecam.datasets.raytraced.scene import FRAMING as RAYTRACED


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), blender=st.booleans(), height=st.sampled_from([240, 480, 720]))
def test_a_die_at_the_target_spans_the_edge_drawn(seed: int, blender: bool, height: int) -> None:
    ranges: FramingRanges = BLENDER if blender else RAYTRACED
    sizes = [1.6, 1.6, 1.8]
    tray, camera, tilt = frame_tray(np.random.default_rng(seed), sizes, height * 4 // 3, height, ranges)
    assert 0.0 <= tilt <= 15.0
    assert tray.width >= 8 * np.mean(sizes) - 1e-9 and tray.depth >= 6 * np.mean(sizes) - 1e-9
    # A die's edge laid flat at the aim point, seen from the camera: within the drawn range, up to the tilt's slant.
    target = np.asarray(camera.target)
    eye = np.asarray(camera.eye)
    across = np.cross(target - eye, [0.0, 0.0, 1.0])
    across = across / np.linalg.norm(across) if np.linalg.norm(across) > 1e-9 else np.array([1.0, 0.0, 0.0])
    px, front = camera.project(np.stack([target, target + float(np.mean(sizes)) * across]))
    assert front.all()
    edge = float(np.linalg.norm(px[1] - px[0])) * 480 / height
    low, high = ranges.edge_px
    assert 0.97 * low <= edge <= 1.03 * high


def test_a_seed_gives_the_same_framing() -> None:
    a = frame_tray(np.random.default_rng(7), [1.5], 640, 480, BLENDER)
    b = frame_tray(np.random.default_rng(7), [1.5], 640, 480, BLENDER)
    c = frame_tray(np.random.default_rng(8), [1.5], 640, 480, BLENDER)
    assert a == b and a != c
