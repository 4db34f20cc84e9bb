"""A bumped camera is told from rolling dice, a lamp and sensor noise, on the bundled examples and rendered throws."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from farklecam.datasets.synthetic import render_throw_sequence
from farklecam.vision.camera.motion import CameraMotion, MotionConfig, log_polar_spectrum, roll_degrees, thumbnail

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.jpg"))
pytestmark = pytest.mark.skipif(not EXAMPLES, reason="needs the bundled examples")


def shifted(frame: np.ndarray, dx: float, dy: float) -> np.ndarray:
    h, w = frame.shape[:2]
    return cv2.warpAffine(frame, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h), borderMode=cv2.BORDER_REFLECT)


def rolled(frame: np.ndarray, degrees: float) -> np.ndarray:
    h, w = frame.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(frame, turn, (w, h), borderMode=cv2.BORDER_REFLECT)


def noisy(frame: np.ndarray, rng: np.random.Generator, sigma: float = 8.0) -> np.ndarray:
    return np.clip(frame.astype(np.float32) + rng.normal(0.0, sigma, frame.shape), 0, 255).astype(np.uint8)


def after(first: np.ndarray, second: np.ndarray) -> bool:
    motion = CameraMotion()
    assert not motion.moved(first)  # nothing to compare the first picture with
    return motion.moved(second)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_panned_camera_moved_and_a_still_one_did_not(path: Path) -> None:
    frame = cv2.imread(str(path))
    rng = np.random.default_rng(0)
    assert after(frame, shifted(frame, 27, 10))  # the camera turned: the whole picture moved
    assert after(frame, shifted(frame, 0, -20))
    assert not after(noisy(frame, rng), noisy(frame, rng))  # sensor noise
    assert not after(frame, cv2.convertScaleAbs(frame, alpha=1.3))  # more light
    thrown = frame.copy()  # two dice-sized patches changed: the dice were thrown again
    thrown[200:260, 300:360] = frame[100:160, 100:160]
    thrown[300:340, 100:140] = frame[50:90, 500:540]
    assert not after(frame, thrown)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_camera_rolled_about_its_lens_axis_moved(path: Path) -> None:
    frame = cv2.imread(str(path))
    for degrees in (2.0, -2.0, 3.0, -5.0):  # the picture barely shifts: the roll itself is measured
        assert after(frame, rolled(frame, degrees)), degrees
    assert not after(frame, rolled(frame, 0.3))
    before, turned = (log_polar_spectrum(thumbnail(f, 128)) for f in (frame, rolled(frame, 2.0)))
    roll, response = roll_degrees(before, turned)
    assert roll == pytest.approx(2.0, abs=0.3) and response > 0.5  # counter-clockwise positive, as OpenCV's angle


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dice_thrown_onto_a_fixed_tray_are_no_move(seed: int) -> None:
    frames = list(render_throw_sequence(seed, width=320, height=240, fps=4.0, settled_seconds=0.5))
    empty = frames[0][0]
    settled = [frame for frame, sidecar in frames if sidecar["phase"] == "settled"]
    assert settled
    for frame in settled:
        assert not after(empty, frame)  # the dice appeared: the tray and the table stayed
    assert after(empty, rolled(settled[-1], 2.5))


def test_each_picture_is_compared_with_the_last_one() -> None:
    frame = cv2.imread(str(EXAMPLES[0]))
    motion = CameraMotion()
    moved = [motion.moved(f) for f in (frame, frame, shifted(frame, 30, 0), shifted(frame, 30, 0), frame)]
    assert moved == [False, False, True, False, True]
    motion.reset()
    assert not motion.moved(shifted(frame, 60, 0))


def test_a_plain_picture_or_a_strip_cannot_tell_and_a_new_size_is_another_camera() -> None:
    rng = np.random.default_rng(1)
    plain = np.full((480, 640, 3), 100, np.uint8)
    motion = CameraMotion()
    assert not any(motion.moved(noisy(plain, rng)) for _ in range(20))  # noise alone would seem to shift
    strip = np.full((3, 900, 3), 100, np.uint8)
    assert not after(strip, strip)
    frame = cv2.imread(str(EXAMPLES[0]))
    assert after(frame, cv2.resize(frame, (320, 180)))


@pytest.mark.parametrize(
    "bad",
    [
        {"width": 8},
        {"max_shift": 0.0},
        {"max_shift": 1.0},
        {"min_response": 1.0},
        {"max_roll": 0.0},
        {"max_roll": 90.0},
        {"min_roll_response": 1.0},
    ],
)
def test_bad_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        MotionConfig(**bad)  # type: ignore[arg-type]


def test_keeping_the_first_picture_compares_every_frame_with_it() -> None:
    """A calibration's watch: a bump is seen on every frame after it, and a frame back in place is no move."""
    frame = cv2.imread(str(EXAMPLES[0]))
    watch, last = CameraMotion(keep_first=True), CameraMotion()
    for motion in (watch, last):
        assert not motion.moved(frame)
    bumped = shifted(frame, 27, 10)
    assert watch.moved(bumped) and last.moved(bumped)
    assert watch.moved(bumped)  # still moved from the first picture
    assert not last.moved(bumped)  # the last picture is the bumped one
    assert not watch.moved(frame)  # back in place
