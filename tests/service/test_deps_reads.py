"""The shared reader runs at most ``reads_at_once`` reads at a time, and that many do run together."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from farklecam.service.deps import READS_AT_ONCE, ReaderSlot
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
