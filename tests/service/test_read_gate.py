"""The reads gate: a few reads at once, the urgent ones first, first come first served within each."""

from __future__ import annotations

import threading
import time

import pytest

from farklecam.service.read_gate import ReadGate, urgency


def _line_up(gate: ReadGate, order: list[tuple[str, bool]]) -> list[str]:
    """Hold the gate, queue ``order`` one by one (each surely waiting before the next), release: who went when."""
    served: list[str] = []
    lock = threading.Lock()

    def wait(name: str, urgent: bool) -> None:
        with gate.turn(urgent), lock:
            served.append(name)

    gate.acquire()
    threads = []
    for k, (name, urgent) in enumerate(order, 1):
        thread = threading.Thread(target=wait, args=(name, urgent))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 5
        while gate.waiting < k and time.monotonic() < deadline:
            time.sleep(0.001)
        assert gate.waiting == k
    gate.release()
    for thread in threads:
        thread.join(5)
    return served


def test_urgent_reads_go_first_and_each_kind_in_order_of_arrival() -> None:
    order = [("recheck 1", False), ("settle 1", True), ("recheck 2", False), ("settle 2", True)]
    assert _line_up(ReadGate(1), order) == ["settle 1", "settle 2", "recheck 1", "recheck 2"]


def test_the_thread_says_how_urgent_its_reads_are() -> None:
    gate, seen = ReadGate(1), []

    def routine() -> None:
        with urgency(False), gate:
            seen.append("routine")

    def urgent() -> None:
        with gate:  # the default: urgent (a person waits for an upload)
            seen.append("urgent")

    gate.acquire()
    first = threading.Thread(target=routine)
    first.start()
    while gate.waiting < 1:
        time.sleep(0.001)
    second = threading.Thread(target=urgent)
    second.start()
    while gate.waiting < 2:
        time.sleep(0.001)
    gate.release()
    first.join(5)
    second.join(5)
    assert seen == ["urgent", "routine"]


def test_no_more_than_capacity_hold_it_at_once() -> None:
    gate, guard = ReadGate(2), threading.Lock()
    inside, most = 0, 0

    def read() -> None:
        nonlocal inside, most
        with gate.turn(urgent=bool(threading.get_ident() % 2)):
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.002)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=read) for _ in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert most == 2 and inside == 0 and gate.waiting == 0


def test_a_gate_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ReadGate(0)
    with pytest.raises(RuntimeError, match="released more often"):
        ReadGate(1).release()
