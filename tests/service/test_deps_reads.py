"""The shared reader runs at most ``reads_at_once`` reads (and decodes) at a time, that many do run together, and
decoded pictures stay within the pixel budget."""

from __future__ import annotations

import threading
import time

import cv2
import numpy as np
import pytest

from farklecam.errors import ImageError
from farklecam.service.deps import READS_AT_ONCE, PixelBudget, ReaderSlot
from farklecam.service.errors import PictureTooLargeError
from farklecam.vision.reading import Reading


class SlowReader:
    """Takes 40 ms a read and records how many reads ran at once."""

    def __init__(self) -> None:
        self.running = self.most = 0
        self.guard = threading.Lock()

    def read(self, frame: np.ndarray, /) -> Reading:
        with self.guard:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.04)
        with self.guard:
            self.running -= 1
        return Reading.empty((frame.shape[1], frame.shape[0]))


@pytest.mark.parametrize("reads_at_once", [1, 2])
def test_reads_run_together_up_to_the_bound(reads_at_once: int) -> None:
    reader = SlowReader()
    slot = ReaderSlot(lambda: reader, reads_at_once=reads_at_once)
    frame = np.zeros((8, 8, 3), np.uint8)
    threads = [threading.Thread(target=slot.get().read, args=(frame,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reader.most == reads_at_once


def test_the_bound_is_one_or_two_and_never_below_one() -> None:
    assert READS_AT_ONCE in (1, 2) and ReaderSlot(SlowReader).reads_at_once == READS_AT_ONCE
    with pytest.raises(ValueError, match="at least 1"):
        ReaderSlot(SlowReader, reads_at_once=0)


def png(width: int, height: int) -> bytes:
    ok, buf = cv2.imencode(".png", np.zeros((height, width, 3), np.uint8))
    assert ok
    return buf.tobytes()


def test_a_picture_is_decoded_only_inside_the_reads_gate() -> None:
    """While the one read allowed runs, a decode waits: many uploads never decode side by side."""
    entered, release = threading.Event(), threading.Event()

    class HeldReader(SlowReader):
        def read(self, frame: np.ndarray, /) -> Reading:
            entered.set()
            assert release.wait(10)
            return super().read(frame)

    slot = ReaderSlot(HeldReader, reads_at_once=1)
    reading = threading.Thread(target=slot.get().read, args=(np.zeros((8, 8, 3), np.uint8),))
    reading.start()
    assert entered.wait(10)
    decoded = threading.Event()

    def decode() -> None:
        with slot.decoded(png(64, 48), "p.png") as frame:
            assert frame.shape == (48, 64, 3)
            decoded.set()

    decoding = threading.Thread(target=decode)
    decoding.start()
    assert not decoded.wait(0.3)  # the read holds the gate
    release.set()
    assert decoded.wait(10)
    reading.join()
    decoding.join()


def test_the_pixel_budget_holds_decoded_pictures_in_arrival_order() -> None:
    """Two 60-pixel pictures do not fit a 100-pixel budget together; a later small one waits its turn."""
    budget = PixelBudget(100)
    order: list[str] = []
    first_in = threading.Event()
    let_go = threading.Event()

    def hold(name: str, pixels: int, wait: threading.Event | None = None) -> None:
        with budget.hold(pixels):
            order.append(name)
            if wait is not None:
                first_in.set()
                assert wait.wait(10)

    first = threading.Thread(target=hold, args=("first", 60, let_go))
    first.start()
    assert first_in.wait(10)
    second = threading.Thread(target=hold, args=("second", 60))
    second.start()
    time.sleep(0.1)
    third = threading.Thread(target=hold, args=("third", 10))  # it would fit, but the second came first
    third.start()
    time.sleep(0.2)
    assert order == ["first"] and budget.free == 40
    let_go.set()
    for thread in (first, second, third):
        thread.join(10)
    assert order == ["first", "second", "third"] and budget.free == 100


def test_a_picture_larger_than_the_whole_budget_is_refused_not_waited_for() -> None:
    slot = ReaderSlot(SlowReader, pixel_budget=1000)
    too_big = "at most 1000 pixels at a time, and the picture has 1200 pixels"
    with pytest.raises(PictureTooLargeError, match=too_big), slot.decoded(png(40, 30), "p.png"):
        pass
    assert slot.budget.free == 1000
    with slot.decoded(png(20, 20), "p.png") as frame:
        assert slot.budget.free == 600 and frame.shape[:2] == (20, 20)
    assert slot.budget.free == 1000


def test_a_corrupt_picture_gives_its_pixels_back() -> None:
    slot = ReaderSlot(SlowReader, pixel_budget=10_000)
    with pytest.raises(ImageError), slot.decoded(png(64, 48)[:60], "cut.png"):
        pass
    assert slot.budget.free == 10_000
