"""The settle layer: motion gate, settle rule, vote and latch, on generated throw sequences."""

from __future__ import annotations

from contextlib import ExitStack as DoesNotRaise
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.live.demo import DemoTable, DemoThrow, demo_script
from vision.camera import Frame
from vision.reading import DieStatus, Reading
from vision.settle import (
    AmbiguityReason,
    MotionGate,
    SettleConfig,
    SettleDetector,
    SettlePhase,
    box_iou,
    paired_iou,
    vote,
)

SIZE = (320, 240)


def mock_reading(faces: list[int], boxes: list[list[float]] | None = None, **columns: Any) -> Reading:
    n = len(faces)
    boxes = boxes if boxes is not None else [[10.0 + 40 * i, 10.0, 40.0 + 40 * i, 40.0] for i in range(n)]
    return Reading(
        xyxy=np.array(boxes, np.float32).reshape(-1, 4),
        confidence=columns.get("confidence", [0.9] * n),
        face=faces,
        face_confidence=columns.get("face_confidence", [0.95] * n),
        status=columns.get("status", ["ok"] * n),
        image_size=SIZE,
    )


def run(table: DemoTable, config: SettleConfig | None = None) -> tuple[dict[int, list[Reading]], int]:
    """Play the table through a detector; returns the settled readings per scripted throw and the reads made.

    Also checks the motion gate: the reader is spared nearly every frame of tumbling dice.
    """
    detector = SettleDetector(config)
    reads, moving_reads = 0, 0

    class CountingReader:
        def read(self, frame: np.ndarray, /) -> Reading:
            nonlocal reads, moving_reads
            reads += 1
            moving_reads += table.current["phase"] == "moving"
            return table.read(frame)

    settled: dict[int, list[Reading]] = {}
    for frame in table:
        state = detector.step(frame, CountingReader())
        if state.is_new:
            assert state.reading is not None
            settled.setdefault(table.current["throw"], []).append(state.reading)
    moving = sum(s["phase"] == "moving" for s in table.sidecars)
    assert moving_reads < 0.2 * moving, f"{moving_reads} of {moving} frames of tumbling dice were read"
    return settled, reads


# ---------------------------------------------------------------------------- motion gate
def test_motion_gate_sees_a_die_move_but_not_sensor_noise() -> None:
    rng = np.random.default_rng(0)
    base = np.full((240, 320, 3), 60, np.uint8)
    gate = MotionGate()
    assert gate.update(base) is True  # nothing to compare with: assume motion
    noisy = np.clip(base + rng.normal(0, 3, base.shape), 0, 255).astype(np.uint8)
    assert gate.update(noisy) is False
    moved = noisy.copy()
    moved[100:130, 150:180] = 240  # one die-sized change
    assert gate.update(moved) is True
    assert gate.update(moved) is False


def test_motion_gate_downscales_and_resets() -> None:
    gate = MotionGate(SettleConfig(gate_width=40))
    frame = np.zeros((480, 640, 3), np.uint8)
    gate.update(frame)
    assert gate.update(frame) is False
    gate.reset()
    assert gate.update(frame) is True


@pytest.mark.parametrize(
    ("kwargs", "expectation"),
    [
        ({}, DoesNotRaise()),
        ({"still_reads": 0}, pytest.raises(ValueError, match="still_reads")),
        ({"min_agreement": 1.5}, pytest.raises(ValueError, match="min_agreement")),
        ({"max_read_fps": 0}, pytest.raises(ValueError, match="max_read_fps")),
        ({"pixel_threshold": 300}, pytest.raises(ValueError, match="pixel_threshold")),
    ],
)
def test_config_is_validated(kwargs: dict[str, Any], expectation: Any) -> None:
    with expectation:
        SettleConfig(**kwargs)


def test_box_iou() -> None:
    a = np.array([[0, 0, 10, 10], [20, 20, 30, 30]], np.float32)
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10]], np.float32)
    iou = box_iou(a, b)
    assert iou.shape == (2, 2)
    np.testing.assert_allclose(iou, [[1.0, 1 / 3], [0.0, 0.0]], rtol=1e-6)
    assert box_iou(a, np.empty((0, 4), np.float32)).shape == (2, 0)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_paired_iou_is_the_iou_matrix_diagonal(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    corner = rng.uniform(0, 100, (2, n, 2)).astype(np.float32)
    a, b = (np.concatenate([c, c + rng.uniform(0, 40, (n, 2)).astype(np.float32)], axis=1) for c in corner)
    np.testing.assert_array_equal(paired_iou(a, b), np.diag(box_iou(a, b)))
    np.testing.assert_array_equal(paired_iou(a[None], b[:1]), box_iou(b[:1], a))  # broadcast: every a against one b


# ---------------------------------------------------------------------------- vote
def _vote(reads: list[Reading], config: SettleConfig | None = None) -> Reading:
    tracks = [[i] * len(reads) for i in range(len(reads[0]))]
    return vote(reads, tracks, config or SettleConfig())  # type: ignore[arg-type]


def test_one_glare_frame_is_outvoted() -> None:
    reads = [mock_reading([5, 2])] * 4 + [mock_reading([6, 2])]
    voted = _vote(reads)
    assert voted.face.tolist() == [5, 2]
    assert voted.status.tolist() == ["ok", "ok"]
    assert voted.data["agreement"].tolist() == pytest.approx([0.8, 1.0])


@pytest.mark.parametrize(
    ("faces", "statuses", "face_confidence", "status", "why"),
    [
        ([3, 4, 3, 4, 3], ["ok"] * 5, 0.95, DieStatus.UNCERTAIN, AmbiguityReason.DISAGREEING_READS),
        ([3] * 5, ["ok"] * 5, 0.3, DieStatus.UNCERTAIN, AmbiguityReason.LOW_CONFIDENCE),
        ([0] * 5, ["cocked"] * 5, 0.9, DieStatus.COCKED, AmbiguityReason.NONE),
        ([2] * 5, ["uncertain"] * 5, 0.4, DieStatus.UNCERTAIN, AmbiguityReason.UNREAD),
        ([0, 0, 5, 0, 5], ["cocked", "cocked", "ok", "cocked", "ok"], 0.9, DieStatus.UNCERTAIN,
         AmbiguityReason.DISAGREEING_READS),
        ([4, 4, 4, 4, 4], ["off_tray"] * 5, 0.9, DieStatus.OFF_TRAY, AmbiguityReason.NONE),
    ],
)  # fmt: skip
def test_vote_reports_doubt_instead_of_guessing(
    faces: list[int], statuses: list[str], face_confidence: float, status: DieStatus, why: AmbiguityReason
) -> None:
    reads = [
        mock_reading([f], status=[s], face_confidence=[face_confidence]) for f, s in zip(faces, statuses, strict=True)
    ]
    voted = _vote(reads)
    assert voted.status.tolist() == [status.value]
    assert voted.data["ambiguity"].tolist() == [why.value]
    assert voted.rethrow == (status is not DieStatus.OK)


def test_vote_drops_a_box_seen_once_and_keeps_a_die_missed_once() -> None:
    reads = [mock_reading([1, 6])] * 5
    tracks = [[0, 0, 0, None, 0], [None, None, 1, None, None]]  # die 1 missed once; a spurious box once
    voted = vote(reads, tracks, SettleConfig())  # type: ignore[arg-type]
    assert voted.face.tolist() == [1]


# ---------------------------------------------------------------------------- whole sequences
def test_exactly_one_result_per_throw_with_the_right_faces() -> None:
    seed = 0
    script = demo_script(14, seed=seed)  # hands, cocked and flickering dice, 1 to 6 dice
    assert any(t.hand for t in script) and any(t.cocked for t in script) and any(t.flicker for t in script)
    table = DemoTable(script, size=SIZE, seed=seed)
    settled, reads = run(table)
    assert sorted(settled) == list(range(len(script)))
    for k, throw in enumerate(script):
        (reading,) = settled[k]
        assert reading.faces == throw.expected_faces, (k, throw)
        assert reading.rethrow == len(throw.cocked) + (throw.flicker is not None)
    assert reads < len(table.sidecars)  # the reader never ran on moving frames (checked inside)


def test_a_flickering_die_is_uncertain_and_a_glare_frame_changes_nothing() -> None:
    throw = DemoThrow((2, 3, 5, 6), flicker=3, glare=True)
    settled, _ = run(DemoTable([throw], size=SIZE, seed=3))
    (reading,) = settled[0]
    assert reading.faces == (2, 3, 5)
    flagged = reading.data["ambiguity"][reading.status == DieStatus.UNCERTAIN].tolist()
    assert flagged == [AmbiguityReason.DISAGREEING_READS.value]


def test_a_hand_passing_over_resting_dice_is_not_a_new_throw() -> None:
    table = DemoTable([DemoThrow((1, 1, 4, 5, 6), hand=True), DemoThrow((3, 3))], size=SIZE, seed=5)
    detector = SettleDetector()
    phases: list[tuple[str, SettlePhase]] = []
    news = []
    for frame in table:
        state = detector.step(frame, table)
        phases.append((table.current["phase"], state.phase))
        if state.is_new:
            news.append(state.reading.faces if state.reading is not None else None)
    assert news == [(1, 1, 4, 5, 6), (3, 3)]
    assert any(truth == "hand" and phase is SettlePhase.MOVING for truth, phase in phases)


@pytest.mark.parametrize("config", [SettleConfig(read_every=3), SettleConfig(max_read_fps=8.0)])
def test_skipping_frames_still_finds_every_throw(config: SettleConfig) -> None:
    script = demo_script(5, seed=2)
    table = DemoTable(script, size=SIZE, seed=2)
    settled, reads = run(table, config)
    assert {k: len(v) for k, v in settled.items()} == dict.fromkeys(range(5), 1)
    assert [settled[k][0].faces for k in range(5)] == [t.expected_faces for t in script]
    assert reads < len(table.sidecars) / 2


def test_latch_rearms_on_change_and_ignores_removed_dice() -> None:
    detector = SettleDetector(SettleConfig(still_reads=3))
    frame = Frame(np.zeros((240, 320, 3), np.uint8), 0, 0.0)
    six = mock_reading([1, 2, 3, 4, 5, 6])

    def feed(reading: Reading, times: int = 3) -> list[SettlePhase]:
        return [detector.update(frame, reading, moving=False).phase for _ in range(times)]

    assert feed(six) == [SettlePhase.SETTLING, SettlePhase.SETTLING, SettlePhase.SETTLED]
    assert feed(six) == [SettlePhase.LATCHED] * 3
    detector.update(frame, None, moving=True)  # a hand takes the 1 and the 5 away
    kept_out = six[np.array([False, True, True, True, False, True])]
    assert feed(kept_out) == [SettlePhase.SETTLING, SettlePhase.SETTLING, SettlePhase.LATCHED]
    thrown = mock_reading([2, 2, 6, 6], boxes=[[100, 100 + 40 * i, 130, 130 + 40 * i] for i in range(4)])
    assert feed(thrown) == [SettlePhase.SETTLING, SettlePhase.SETTLING, SettlePhase.SETTLED]  # no motion seen
    assert detector.update(frame, Reading.empty(SIZE), moving=False).phase is SettlePhase.LATCHED


def test_a_die_still_sliding_restarts_the_count() -> None:
    detector = SettleDetector(SettleConfig(still_reads=3))
    frame = Frame(np.zeros((240, 320, 3), np.uint8), 0, 0.0)
    phases = []
    for x in (0, 12, 24, 24, 24):  # slides 12 px per read, then rests
        reading = mock_reading([3], boxes=[[100 + x, 100, 130 + x, 130]])
        phases.append(detector.update(frame, reading, moving=False).phase)
    assert phases[-1] is SettlePhase.SETTLED and phases[:-1].count(SettlePhase.SETTLED) == 0
    assert SettlePhase.SETTLED not in phases[:4]


def test_the_voted_reading_is_stamped_with_the_settling_frame() -> None:
    detector = SettleDetector(SettleConfig(still_reads=1))
    frame = Frame(np.zeros((24, 32, 3), np.uint8), 7, 0.25)
    state = detector.update(frame, mock_reading([5]), moving=False)
    assert (state.phase, state.frame_index, state.timestamp) == (SettlePhase.SETTLED, 7, 0.25)
    assert state.reading is not None and (state.reading.frame_index, state.reading.timestamp) == (7, 0.25)
