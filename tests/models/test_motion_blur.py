"""Motion blur on training crops: a smear along one line that keeps brightness, seeded, absent when off."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.models.bank.motion_blur import MAX_LENGTH, MIN_LENGTH, add_motion_blur, motion_kernel


@settings(max_examples=40, deadline=None)
@given(length=st.floats(MIN_LENGTH, MAX_LENGTH), angle=st.floats(0, 180))
def test_kernel_is_a_normalised_line_through_the_centre(length: float, angle: float) -> None:
    k = motion_kernel(length, angle)
    side = k.shape[0]
    assert k.shape == (side, side) and side % 2 == 1 and side >= length
    assert abs(float(k.sum()) - 1.0) < 1e-5 and (k >= 0).all()
    # Centred (the smear does not shift the die) ...
    ys, xs = np.nonzero(k)
    c = (side - 1) / 2
    assert abs(float((k[ys, xs] * xs).sum()) - c) < 0.5 and abs(float((k[ys, xs] * ys).sum()) - c) < 0.5
    # ... and a line, not a disc: its weight lies within a pixel or so of the line's axis.
    normal = np.array([-np.sin(np.radians(angle)), np.cos(np.radians(angle))])
    distance = np.abs((xs - c) * normal[0] + (ys - c) * normal[1])
    assert float((k[ys, xs] * distance).sum()) < 0.8


def test_a_pip_is_smeared_along_the_angle() -> None:
    crop = np.full((1, 64, 64, 3), 255, np.uint8)
    crop[0, 30:34, 30:34] = 0  # a small dark pip
    rng = np.random.default_rng(0)
    out = add_motion_blur(crop, rng, 1.0)
    dark = out[0, ..., 0] < 200
    ys, xs = np.nonzero(dark)
    # Longer along some direction than the 4 px pip, mean brightness kept.
    assert max(np.ptp(xs), np.ptp(ys)) + 1 > 4
    assert abs(float(out.mean()) - float(crop.mean())) < 1.5


def test_off_share_and_seed() -> None:
    crops = np.random.default_rng(1).integers(0, 256, (300, 64, 64, 3), dtype=np.uint8)
    rng = np.random.default_rng(3)
    assert add_motion_blur(crops, rng, 0.0) is crops
    assert rng.random() == np.random.default_rng(3).random()
    a = add_motion_blur(crops, np.random.default_rng(5), 0.25)
    np.testing.assert_array_equal(a, add_motion_blur(crops, np.random.default_rng(5), 0.25))
    share = (a != crops).any(axis=(1, 2, 3)).mean()
    assert 0.17 < share < 0.33
