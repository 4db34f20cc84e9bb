"""Turning banked crops: the one function both crop networks' training samples pass through."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.models.bank.crop_bank import (
    BANK_CONTEXT,
    BANK_SIZE,
    MISPLACED_IOU,
    bank_context,
    bank_size,
    centre_crops,
    misplaced_boxes,
    turned_centres,
)
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE, extract_crops
from farklecam.vision.settle.detector import box_iou


def _crops(n: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (n, BANK_SIZE, BANK_SIZE, 3), dtype=np.uint8)


def test_an_unturned_crop_is_the_run_time_crop() -> None:
    crops = _crops(3)
    out = turned_centres(crops, [np.nan, np.nan, np.nan])
    assert out.shape == (3, CROP_SIZE, CROP_SIZE, 3)
    np.testing.assert_array_equal(out, centre_crops(crops))


@pytest.mark.parametrize(("angle", "quarter_turns"), [(90.0, 1), (180.0, 2), (-90.0, 3), (360.0, 0)])
def test_quarter_turns_move_pixels_exactly(angle: float, quarter_turns: int) -> None:
    crops = _crops(2)
    out = turned_centres(crops, [angle, np.nan])
    np.testing.assert_array_equal(out[0], centre_crops(np.rot90(crops[:1], quarter_turns, axes=(1, 2)))[0])
    np.testing.assert_array_equal(out[1], centre_crops(crops[1:])[0])  # only the first was turned


@pytest.mark.parametrize("angle", [30.0, 45.0, 137.0])
def test_any_turn_leaves_no_black_corners(angle: float) -> None:
    # The bank's 1.5x field of view covers the run-time crop turned any way: no pixel
    # of the turned crop comes from outside the banked one (the warp's black border).
    crop = np.full((1, BANK_SIZE, BANK_SIZE, 3), 200, np.uint8)
    out = turned_centres(crop, [angle])
    assert out.min() == 200 and out.max() == 200


@pytest.mark.parametrize("crop_size", [48, 64, 96])
def test_any_crop_size_has_its_bank(crop_size: int) -> None:
    side = bank_size(crop_size)
    crops = np.random.default_rng(1).integers(0, 256, (2, side, side, 3), dtype=np.uint8)
    out = turned_centres(crops, [np.nan, 90.0], crop_size)
    assert side == crop_size * 3 // 2 and out.shape == (2, crop_size, crop_size, 3)
    np.testing.assert_array_equal(out[0], centre_crops(crops, crop_size)[0])
    np.testing.assert_array_equal(out[1], centre_crops(np.rot90(crops[1:], 1, axes=(1, 2)), crop_size)[0])


@pytest.mark.parametrize(("angle", "squeeze"), [(0.0, 0.5), (30.0, 0.8), (-120.0, 0.31), (75.0, 1.0)])
def test_a_crop_banked_turned_and_squeezed_holds_the_run_time_crop(angle: float, squeeze: float) -> None:
    # The cocked test that undoes foreshortening banks its crops turned and squeezed: their
    # centre must be what run time cuts from the frame, or the network meets crops it never saw.
    noise = np.random.default_rng(2).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    image = cv2.GaussianBlur(noise, (0, 0), 4.0)  # smooth, so only the interpolation differs
    box = np.array([[140.0, 90.0, 190.0, 146.0]])
    banked = extract_crops(image, box, BANK_SIZE, BANK_CONTEXT, [angle], [squeeze])
    run_time = extract_crops(image, box, CROP_SIZE, CROP_CONTEXT, [angle], [squeeze])[0].astype(np.float64)
    assert np.abs(centre_crops(banked)[0].astype(np.float64) - run_time).mean() < 2.0
    # and the jitter's small turn at training time finds no border inside the run-time crop
    flat = np.full((1, BANK_SIZE, BANK_SIZE, 3), 200, np.uint8)
    assert turned_centres(flat, [12.0]).min() == 200
    if squeeze < 1.0:
        unsqueezed = extract_crops(image, box, CROP_SIZE, CROP_CONTEXT, [angle])[0].astype(np.float64)
        assert np.abs(unsqueezed - run_time).mean() > 2.0  # the squeeze is seen, not lost in the noise


@pytest.mark.parametrize("context", [0.0, CROP_CONTEXT, 0.35, 0.6])
def test_a_bank_crop_at_any_context_holds_the_run_time_crop_at_that_context(context: float) -> None:
    # The cocked test may be trained with more context than the classifier; its run-time crop
    # (cut with the context its metadata names) must be the centre of what it was banked as.
    noise = np.random.default_rng(3).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    image = cv2.GaussianBlur(noise, (0, 0), 4.0)
    box = np.array([[140.0, 90.0, 190.0, 146.0]])
    banked = extract_crops(image, box, BANK_SIZE, bank_context(context))
    run_time = extract_crops(image, box, CROP_SIZE, context)[0].astype(np.float64)
    assert np.abs(centre_crops(banked)[0].astype(np.float64) - run_time).mean() < 2.0
    if context != CROP_CONTEXT:
        default = extract_crops(image, box, CROP_SIZE, CROP_CONTEXT)[0].astype(np.float64)
        assert np.abs(default - run_time).mean() > 2.0  # the context is seen, not lost in the noise


_box = st.tuples(st.floats(0, 600), st.floats(0, 400), st.floats(8, 120), st.floats(0.6, 1.6)).map(
    lambda b: [b[0], b[1], b[0] + b[2], b[1] + b[2] * b[3]]
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_box, min_size=1, max_size=10), st.integers(0, 2**32 - 1))
def test_misplaced_boxes_keep_the_promised_overlap_with_their_die(boxes: list[list[float]], seed: int) -> None:
    xyxy = np.array(boxes, np.float32)
    drawn, made = misplaced_boxes(xyxy, xyxy, np.random.default_rng(seed))
    assert drawn.shape == xyxy.shape and made.all()  # about half the draws fit, and each box has 32
    overlap = np.diag(box_iou(drawn, xyxy))
    assert np.all((overlap >= MISPLACED_IOU[0]) & (overlap <= MISPLACED_IOU[1]))


def test_misplaced_boxes_grow_and_lean_towards_the_nearest_other_die() -> None:
    die = np.array([[100.0, 100.0, 140.0, 140.0]], np.float32)
    right = np.array([[150.0, 102.0, 190.0, 142.0]], np.float32)  # the nearest, to the right
    below = np.array([[100.0, 300.0, 140.0, 340.0]], np.float32)
    many = np.repeat(die, 4000, axis=0)
    drawn, made = misplaced_boxes(many, np.concatenate([die, right, below]), np.random.default_rng(0))
    assert made.all()
    shift = (drawn[:, :2] + drawn[:, 2:]) / 2 - 120.0
    assert shift[:, 0].mean() > 0.4 > abs(shift[:, 1].mean())  # towards the right, not down
    assert np.median((drawn[:, 2] - drawn[:, 0]) / 40.0) > 1.1  # mostly too big, as the detector's are
    alone, _ = misplaced_boxes(many, die, np.random.default_rng(0))  # no other die: any direction
    assert abs(((alone[:, 0] + alone[:, 2]) / 2 - 120.0).mean()) < 0.4


def test_an_overlap_no_box_can_keep_leaves_the_die_out() -> None:
    die = np.array([[10.0, 10.0, 50.0, 50.0]], np.float32)
    drawn, made = misplaced_boxes(die, die, np.random.default_rng(0), iou=(0.999, 1.0))
    assert not made.any() and drawn.shape == (1, 4)
