"""The settle layer: motion gate, settle rule, vote and latch, on generated throw sequences."""

from __future__ import annotations

import math
from contextlib import ExitStack as DoesNotRaise
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.service.live.demo import DemoTable, DemoThrow, demo_script
from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.settle.detector import (
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
        ({"min_reads": 0}, pytest.raises(ValueError, match="min_reads")),
        ({"settle_seconds": -1}, pytest.raises(ValueError, match="settle_seconds")),
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
        ([2] * 5, ["uncertain"] * 5, 0.25, DieStatus.UNCERTAIN, AmbiguityReason.LOW_CONFIDENCE),
        ([0] * 5, ["uncertain"] * 5, 0.4, DieStatus.UNCERTAIN, AmbiguityReason.UNREAD),
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
    assert voted.rethrow + voted.unclear == (status is not DieStatus.OK)


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
        assert reading.rethrow == len(throw.cocked) and reading.unclear == (throw.flicker is not None)
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


# ---------------------------------------------------------------------------- the settle rule, scripted
FPS = 15.0
BLANK = np.zeros((24, 32, 3), np.uint8)


class Script:
    """Feeds scripted reads to a detector at 15 frames a second; ``moving`` frames carry no read."""

    def __init__(self, config: SettleConfig | None = None, expect: list[int] | None = None) -> None:
        self.detector = SettleDetector(config or SettleConfig(settle_seconds=0.5, min_reads=3))
        self.detector.expect(expect)
        self.index = 0
        self.reported: list[tuple[int, Reading]] = []

    def feed(self, reading: Reading | None, frames: int = 1) -> list[SettlePhase]:
        phases = []
        for _ in range(frames):
            frame = Frame(BLANK, self.index, self.index / FPS)
            state = self.detector.update(frame, reading, moving=reading is None)
            if state.is_new:
                assert state.reading is not None
                self.reported.append((self.index, state.reading))
            phases.append(state.phase)
            self.index += 1
        return phases

    def rest(self, reading: Reading, seconds: float = 1.0) -> list[SettlePhase]:
        return self.feed(reading, round(seconds * FPS))

    def move(self, seconds: float = 0.5) -> list[SettlePhase]:
        return self.feed(None, round(seconds * FPS))


SIX = mock_reading([1, 2, 3, 4, 5, 6])


def test_a_throw_latches_once_after_the_settle_time_with_its_frame() -> None:
    script = Script()
    script.move()
    phases = script.rest(SIX)
    settled_at = phases.index(SettlePhase.SETTLED)
    assert settled_at == math.ceil(0.5 * FPS)  # held still for the settle time, not earlier
    assert set(phases[:settled_at]) == {SettlePhase.SETTLING}
    assert set(phases[settled_at + 1 :]) == {SettlePhase.LATCHED}
    ((index, reading),) = script.reported
    assert reading.faces == (1, 2, 3, 4, 5, 6) and reading.frame_index == index


def test_reads_settle_a_throw_until_it_is_held_then_they_only_recheck_it() -> None:
    script = Script()
    assert script.detector.settling  # nothing held: a read now brings a throw nearer
    script.move()
    script.rest(SIX, 0.2)
    assert script.detector.settling
    script.rest(SIX)
    assert script.reported and not script.detector.settling  # the throw is held: reads only recheck it
    script.move()
    assert script.detector.settling  # the dice moved: the next throw is being settled


def test_dice_after_an_empty_tray_settle_in_the_settle_time_from_their_first_read() -> None:
    script = Script()
    script.rest(Reading.empty(SIZE), 0.4)  # reads of the empty tray, then the dice are there
    phases = script.rest(SIX)
    assert phases.index(SettlePhase.SETTLED) == math.ceil(0.5 * FPS)


def test_lifting_set_aside_dice_out_is_not_a_throw_but_a_new_throw_is() -> None:
    script = Script()
    script.move()
    script.rest(SIX)
    script.move(0.3)  # a hand takes the 1 and the 5 out; the others stay put
    kept_out = SIX[np.array([False, True, True, True, False, True])]
    assert SettlePhase.SETTLED not in script.rest(kept_out)
    script.move(0.3)  # the hand takes one more out
    assert SettlePhase.SETTLED not in script.rest(kept_out[np.array([True, True, False, True])])
    script.move()  # then the remaining dice are thrown
    thrown = mock_reading([2, 2, 6], boxes=[[100, 100 + 40 * i, 130, 130 + 40 * i] for i in range(3)])
    script.rest(thrown)
    assert [r.faces for _, r in script.reported] == [(1, 2, 3, 4, 5, 6), (2, 2, 6)]


def test_dice_lifted_out_without_the_gate_seeing_it_are_not_a_throw() -> None:
    script = Script()
    script.rest(SIX)
    assert SettlePhase.SETTLED not in script.rest(SIX[np.array([True, True, True, False, False, False])])
    assert len(script.reported) == 1


def test_a_hand_or_glare_over_resting_dice_is_not_a_throw() -> None:
    script = Script()
    script.move()
    script.rest(SIX)
    script.move(0.8)  # a hand passes
    hidden = SIX[np.array([True, True, False, True, True, True])]  # it left a shadow over one die
    script.feed(hidden, 2)
    script.rest(SIX)
    script.move(0.1)  # glare
    glared = mock_reading([1, 2, 3, 4, 5, 6], status=["ok", "uncertain", "uncertain", "ok", "ok", "ok"])
    script.feed(glared, 1)
    script.rest(SIX)
    assert len(script.reported) == 1


def test_a_slow_last_die_delays_the_throw_until_it_rests() -> None:
    script = Script()
    script.move()
    five = SIX[np.arange(5)]
    script.rest(five, 0.4)  # five dice rest; the sixth still rolls unseen
    for x in range(0, 40, 5):  # then it creeps in, too slowly for the gate, and stops
        script.feed(mock_reading([*five.face.tolist(), 6], boxes=[*five.xyxy.tolist(), [200 + x, 150, 230 + x, 180]]))
    script.rest(mock_reading([*five.face.tolist(), 6], boxes=[*five.xyxy.tolist(), [235, 150, 265, 180]]))
    ((_, reading),) = script.reported
    assert len(reading) == 6 and reading.faces == (1, 2, 3, 4, 5, 6)


def test_a_flickering_box_does_not_hold_the_throw_back() -> None:
    script = Script()
    start = len(script.move())
    spurious = mock_reading([1, 2, 3, 4, 5, 6, 2], boxes=[*SIX.xyxy.tolist(), [280, 200, 300, 220]])
    for k in range(30):
        script.feed(spurious if k % 5 == 2 else SIX)
    ((index, reading),) = script.reported
    assert reading.faces == (1, 2, 3, 4, 5, 6) and index - start == math.ceil(0.5 * FPS)


def test_the_wrong_count_is_said_not_scored_until_the_kept_dice_leave() -> None:
    script = Script(expect=[4])
    script.move()
    phases = script.rest(SIX)
    assert phases[-1] is SettlePhase.WRONG_COUNT and not script.reported
    state = script.detector.update(Frame(BLANK, 99, 99 / FPS), None, moving=False)
    assert (state.dice_seen, state.dice_expected, state.wrong_count) == (6, (4,), True)
    script.move(0.3)  # the two kept dice are lifted out
    four = SIX[np.array([False, True, True, True, False, True])]
    script.rest(four)
    assert [r.faces for _, r in script.reported] == [(2, 3, 4, 6)]


def test_a_die_read_uncertain_in_some_frames_is_voted_from_the_clear_ones() -> None:
    script = Script()
    script.move()
    for k in range(12):  # a small die: unreadable in every other frame
        status = ["ok"] * 5 + (["uncertain"] if k % 2 else ["ok"])
        confidence = [0.95] * 5 + [0.2 if k % 2 else 0.95]  # the unreadable frames guess another face, unsure
        script.feed(mock_reading([1, 2, 3, 4, 5, 6 if k % 2 == 0 else 3], status=status, face_confidence=confidence))
    ((_, reading),) = script.reported
    assert reading.faces == (1, 2, 3, 4, 5, 6)
    assert reading.data["faces_seen"].tolist()[-1].startswith("6:")


def test_a_die_that_stays_unclear_is_uncertain_with_its_likeliest_face() -> None:
    script = Script()
    script.move()
    for k in range(18):
        status = ["ok"] * 5 + (["ok"] if k == 3 else ["uncertain"])
        confidence = [0.95] * 5 + [0.95 if k == 3 else 0.2]  # unsure of it but once
        script.feed(mock_reading([1, 2, 3, 4, 5, 2], status=status, face_confidence=confidence))
    ((index, reading),) = script.reported
    config = script.detector.config
    # it waited the patience for a clear read of that die, then latched it uncertain
    waited = (index - 8) / FPS  # the rest began on frame 8
    assert config.settle_seconds + config.patience_seconds - 1e-6 <= waited <= config.settle_seconds + 0.4
    assert reading.status.tolist()[-1] == DieStatus.UNCERTAIN
    assert reading.data["ambiguity"].tolist()[-1] == AmbiguityReason.LOW_CONFIDENCE  # read, but not surely
    assert reading.face.tolist()[-1] == 2 and reading.unclear == 1 and reading.rethrow == 0


@pytest.mark.parametrize("patience", [0.0, 0.3])
def test_an_unclear_die_is_read_again_on_the_next_still_frames_before_latching(patience: float) -> None:
    """Read unclear for the settle time, clearly after it: with patience it gets its face, without it cannot."""
    script = Script(SettleConfig(settle_seconds=0.5, min_reads=3, patience_seconds=patience))
    script.move()
    for k in range(18):
        status = ["ok"] * 5 + (["ok"] if k >= 8 else ["uncertain"])
        confidence = [0.95] * 5 + [0.95 if k >= 8 else 0.2]
        script.feed(mock_reading([1, 2, 3, 4, 5, 6], status=status, face_confidence=confidence))
    ((index, reading),) = script.reported
    if patience:
        assert reading.faces == (1, 2, 3, 4, 5, 6) and reading.rethrow == 0
        assert index - 8 < math.ceil(0.8 * FPS)  # latched as soon as the die was told, not at the patience's end
    else:
        assert reading.faces == (1, 2, 3, 4, 5)
        assert reading.data["ambiguity"].tolist()[-1] == AmbiguityReason.LOW_CONFIDENCE


def test_an_empty_tray_then_a_throw_to_the_same_places_is_a_new_throw() -> None:
    script = Script()
    script.rest(SIX)
    script.move()
    script.rest(Reading.empty(SIZE))
    script.move()
    script.rest(SIX)
    assert len(script.reported) == 2


def test_resting_latched_dice_are_not_read_again_until_the_picture_changes() -> None:
    table = DemoTable([DemoThrow((2, 3, 5))], size=SIZE, seed=4, settled_frames=90)
    detector = SettleDetector()
    reads = 0

    class Counting:
        def read(self, frame: np.ndarray, /) -> Reading:
            nonlocal reads
            reads += 1
            return table.read(frame)

    for frame in table:
        detector.step(frame, Counting())
    still = sum(s["phase"] == "settled" for s in table.sidecars)
    assert still == 90 and reads < 30  # the settle window's reads (0.5 s at 30 fps), then none


def test_a_faint_change_to_resting_dice_is_read_but_sensor_noise_is_not() -> None:
    rng = np.random.default_rng(3)
    base = np.full((120, 160, 3), 90, np.uint8)
    detector = SettleDetector(SettleConfig(settle_seconds=0.2, min_reads=2))
    reader = type("Six", (), {"read": staticmethod(lambda image: SIX)})()
    for i in range(15):  # the throw latches
        detector.step(Frame(base, i, i / FPS), reader)
    latched = detector.reads
    for i in range(15, 30):  # noise only: no read (within the recheck time)
        noisy = np.clip(base + rng.normal(0, 2, base.shape), 0, 255).astype(np.uint8)
        detector.step(Frame(noisy, i, i / FPS), reader)
    assert detector.reads == latched
    faint = base.copy()
    faint[40:52, 60:72] = 100  # a die 10 grey levels from the felt: under the gate's 18, over a third of it
    detector.step(Frame(faint, 30, 30 / FPS), reader)
    assert detector.reads == latched + 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["moving", "six", "kept", "empty"]), min_size=1, max_size=12))
def test_a_report_needs_dice_in_new_places(steps: list[str]) -> None:
    """Whatever hands and lifting happen, dice are reported only where some land in a new place."""
    script = Script()
    dice = {"six": SIX, "kept": SIX[np.array([True, False, True, False, True, True])]}
    last: str | None = None  # the model: what was reported last (None: nothing, or the tray was emptied)
    for step in steps:
        if step == "moving":
            script.move(0.2)
            continue
        before = len(script.reported)
        script.rest(dice.get(step, Reading.empty(SIZE)), 0.8)
        if step == "empty":
            last = None
            continue
        new = last is None or (last, step) == ("kept", "six")
        assert len(script.reported) == before + new, (last, step)
        last = step if new else last


def test_the_voted_reading_is_stamped_with_the_settling_frame() -> None:
    detector = SettleDetector(SettleConfig(settle_seconds=0.0, min_reads=1))
    frame = Frame(np.zeros((24, 32, 3), np.uint8), 7, 0.25)
    state = detector.update(frame, mock_reading([5]), moving=False)
    assert (state.phase, state.frame_index, state.timestamp) == (SettlePhase.SETTLED, 7, 0.25)
    assert state.reading is not None and (state.reading.frame_index, state.reading.timestamp) == (7, 0.25)


def test_dice_lifted_under_a_hand_before_they_settled_are_never_reported() -> None:
    """Dice still for a moment, a hand, then an empty tray: the first still read after the hand says they went."""
    script = Script()
    script.move()
    script.feed(SIX, 4)  # at rest for 0.27 s: not yet settled
    script.move()  # the hand comes and takes them
    phases = script.rest(Reading.empty(SIZE))
    assert script.reported == [] and phases[-1] is SettlePhase.IDLE


def test_a_die_of_the_reported_throw_read_uncertain_later_is_no_new_throw() -> None:
    script = Script()
    script.move()
    script.rest(SIX)
    script.move(0.3)  # a hand passes over the dice
    unsure = mock_reading([5, 2, 3, 4, 5, 6], status=["uncertain"] + ["ok"] * 5)  # die 0 now unclear, guessed 5
    script.rest(unsure, 1.5)
    assert len(script.reported) == 1
    changed = mock_reading([5, 2, 3, 4, 5, 6])  # but a die clearly showing another face was thrown again
    script.move(0.3)
    script.rest(changed, 1.5)
    assert len(script.reported) == 2


def _unclear_reads(face_confidence: float, faces: list[int] | None = None, **data: list[bool]) -> list[Reading]:
    """Eight reads of one die, each just under the reader's own bar (``uncertain``), naming ``faces``."""
    faces = faces or [4] * 8
    reads = []
    for f in faces:
        read = mock_reading([f], status=["uncertain"], face_confidence=[face_confidence])
        reads.append(Reading(**{**read.__dict__, "data": {k: np.asarray(v) for k, v in data.items()}})
                     if data else read)  # fmt: skip
    return reads


@pytest.mark.parametrize(
    ("face_confidence", "faces", "data", "status"),
    [
        (0.45, None, {}, DieStatus.OK),  # eight frames agree, each unsure: read
        (0.55, [4], {}, DieStatus.UNCERTAIN),  # one frame alone is no surer than it is
        (0.5, [4] * 2, {}, DieStatus.UNCERTAIN),  # two frames at 0.5 are not sure enough yet
        (0.45, [4] * 3, {}, DieStatus.OK),  # three are (evidence_reads)
        (0.35, None, {}, DieStatus.UNCERTAIN),  # agreeing, but too unsure each
        (0.55, [4] * 7 + [6], {}, DieStatus.OK),  # one frame naming another face is outweighed
        (0.55, [4] * 5 + [6] * 3, {}, DieStatus.UNCERTAIN),  # three are not
        (0.9, None, {"symbol": [True]}, DieStatus.UNCERTAIN),  # a logo face stays for a person to say
        (0.55, None, {"cocked": [True]}, DieStatus.UNCERTAIN),  # an unconfirmed lean stays too
    ],
)  # fmt: skip
def test_frames_naming_one_face_add_up_to_read_a_die_each_frame_was_unsure_of(
    face_confidence: float, faces: list[int] | None, data: dict[str, list[bool]], status: DieStatus
) -> None:
    reads = _unclear_reads(face_confidence, faces, **data)
    voted = vote(reads, [[0] * len(reads)], SettleConfig())
    assert voted.status.tolist() == [status.value]
    assert voted.face.tolist() == [4] and (status is DieStatus.OK) == (voted.faces == (4,))


def test_a_die_still_rolling_in_where_no_die_lay_holds_the_latch_until_it_rests() -> None:
    """The gate may miss a faint, blurred slow die; its box, somewhere new in each read, still says it moves."""
    script = Script()
    script.move()
    five = [[10.0 + 40 * i, 10.0, 40.0 + 40 * i, 40.0] for i in range(5)]
    for k in range(18):  # 1.2 s: the last die rolls along the bottom of the tray, 12 px a frame
        x = 20.0 + 12 * k
        script.feed(mock_reading([1, 2, 3, 4, 5, 6], [*five, [x, 150.0, x + 30, 180.0]]))
    assert script.reported == []
    rested = mock_reading([1, 2, 3, 4, 5, 6], [*five, [236.0, 150.0, 266.0, 180.0]])
    script.rest(rested)
    ((_, reading),) = script.reported
    assert reading.faces == (1, 2, 3, 4, 5, 6)


def test_reading_on_for_an_unclear_die_leaves_the_dice_told_at_the_settle_time_as_they_were() -> None:
    """Die 0 is read 1 until the settle time, then now and then misread; die 1 stays unclear throughout."""
    script = Script()
    script.move()
    for k in range(18):
        misread = k >= 8
        faces = [5 if misread else 1, 3]
        script.feed(mock_reading(faces, status=["ok", "uncertain"], face_confidence=[0.95, 0.3]))
    ((_, reading),) = script.reported
    assert reading.face.tolist() == [1, 3] and reading.status.tolist() == ["ok", "uncertain"]
    assert reading.data["agreement"].tolist()[0] >= 0.75  # the verdict, and what it was drawn from, at the time


def test_an_empty_tray_is_read_again_soon_so_a_die_landing_unseen_by_the_gate_is_found() -> None:
    base = np.full((120, 160, 3), 90, np.uint8)
    config = SettleConfig(settle_seconds=0.2, min_reads=2)
    detector = SettleDetector(config)
    shown: list[Reading] = [Reading.empty(SIZE)]
    reader = type("Tray", (), {"read": staticmethod(lambda image: shown[0])})()
    for i in range(15):  # the empty tray is seen and held
        detector.step(Frame(base, i, i / FPS), reader)
    held = detector.reads
    shown[0] = SIX  # six dice landed, yet the picture the gate sees did not change
    states = [detector.step(Frame(base, i, i / FPS), reader) for i in range(15, 15 + int(FPS))]
    first = next(i for i, s in enumerate(states) if detector.reads > held or s.phase.value != "idle")
    assert first / FPS <= config.empty_recheck_seconds + 1 / FPS < config.recheck_seconds
    assert any(s.is_new for s in states)  # and reported within the second
