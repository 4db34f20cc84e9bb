"""Marble streaks on training crops: thin, on the die, seeded, and absent when off."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.models.bank.marbling import add_streaks
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE

_DIE_AREA = (CROP_SIZE / (1 + 2 * CROP_CONTEXT)) ** 2


def _black(n: int) -> np.ndarray:
    return np.zeros((n, CROP_SIZE, CROP_SIZE, 3), np.uint8)


def test_off_returns_the_crops_and_leaves_the_random_stream_alone() -> None:
    crops = _black(4)
    rng = np.random.default_rng(3)
    assert add_streaks(crops, rng, 0.0) is crops
    assert rng.random() == np.random.default_rng(3).random()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_streaks_are_thin_curves_on_the_die(seed: int) -> None:
    crops = _black(8)
    out = add_streaks(crops, np.random.default_rng(seed), 1.0)
    assert not crops.any(), "the input is not painted in place"
    change = out.max(axis=-1).astype(int)
    assert change.any(axis=(1, 2)).all(), "p = 1 streaks every crop"
    # Thin: a strong streak covers well under a third of the die, so no pip is hidden whole.
    assert ((change > 64).sum(axis=(1, 2)) / _DIE_AREA).max() < 0.3
    # On the die: the context margin's outer two pixels stay as they were.
    edge = np.concatenate([change[:, :2].reshape(8, -1), change[:, -2:].reshape(8, -1)], axis=1)
    edge = np.concatenate([edge, change[:, :, :2].reshape(8, -1), change[:, :, -2:].reshape(8, -1)], axis=1)
    assert edge.max() == 0


def test_share_and_seed() -> None:
    crops = _black(400)
    a = add_streaks(crops, np.random.default_rng(7), 0.3)
    b = add_streaks(crops, np.random.default_rng(7), 0.3)
    np.testing.assert_array_equal(a, b)
    share = a.any(axis=(1, 2, 3)).mean()
    assert 0.22 < share < 0.38
