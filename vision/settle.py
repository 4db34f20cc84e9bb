"""From a stream of frames to one reading per throw: motion gate, settle rule, vote, latch.

A throw is not a frame: before the dice rest there is motion and hands, after it many
frames of the same dice. :class:`SettleDetector` reports each throw once, in four steps:

1. **Motion gate** (:class:`MotionGate`): frame differencing on a small blurred grey
   copy, well under a millisecond, so the expensive reader runs only on still frames.
2. **Settle rule**: the same dice in the same places (boxes matched by IoU) for
   ``still_reads`` consecutive reads. A die that left its place while another appeared
   restarts the count; one missed or spurious box does not.
3. **Vote** (:func:`vote`): each die's face is the majority of its reads, so one glare
   frame cannot change a face; a die whose reads disagree becomes ``uncertain`` with an
   :class:`AmbiguityReason` instead of a guess.
4. **Latch**: motion re-arms it, but dice that settle where the reported dice sat (a
   hand passed, kept dice were taken away) are the same throw and are not reported again.

Call ``detector.step(frame, reader)`` on every frame; to keep up on 2 cores it reads one still
frame in ``read_every``, at most ``max_read_fps`` a second.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from vision.camera import Frame
from vision.reading import DieStatus, Reading

__all__ = [
    "AmbiguityReason",
    "FrameReader",
    "MotionGate",
    "SettleConfig",
    "SettleDetector",
    "SettlePhase",
    "SettleState",
    "box_iou",
    "paired_iou",
    "vote",
]


class FrameReader(Protocol):
    """Anything that reads the dice in one BGR frame (``vision.reader.DiceReader`` or a test double)."""

    def read(self, frame: npt.NDArray[np.uint8], /) -> Reading:
        """Every die in the BGR frame."""
        ...


class AmbiguityReason(StrEnum):
    """Why a voted die is ``uncertain`` rather than read (stored in ``Reading.data["ambiguity"]``)."""

    NONE = ""
    """Not ambiguous: the die is read (or clearly cocked / off the tray)."""
    DISAGREEING_READS = "disagreeing_reads"
    """The reads of this die over the still frames name different faces (or statuses)."""
    LOW_CONFIDENCE = "low_confidence"
    """The reads agree but the classifier was not sure of them."""
    UNREAD = "unread"
    """The reader itself called the die uncertain in most frames (blur, occlusion, glare)."""


class SettlePhase(StrEnum):
    """Where the detector is between two throws."""

    MOVING = "moving"
    """The tray moves (dice rolling, a hand): nothing is read."""
    IDLE = "idle"
    """Still, but no dice in view."""
    SETTLING = "settling"
    """Still, collecting consistent reads of the same dice."""
    SETTLED = "settled"
    """A new throw has just settled: ``SettleState.reading`` is its voted reading (reported once)."""
    LATCHED = "latched"
    """The throw was reported; waiting for motion and a change to re-arm."""


@dataclass(frozen=True, slots=True)
class SettleConfig:
    """Every threshold of the settle layer, validated once.

    Attributes:
        gate_width: width in pixels of the grey copy the motion gate compares.
        pixel_threshold: grey-level change (0-255) that counts a pixel as changed.
        motion_fraction: share of changed pixels above which the frame is "moving".
        still_reads: consecutive consistent reads that make a throw settled (K).
        read_every: read one still frame in this many (1: every still frame).
        max_read_fps: at most this many reads per second of stream time (None: no cap).
        match_iou: IoU above which two boxes of consecutive reads are the same die.
        still_iou: IoU with its previous box below which a die still moves (restarts the count).
        min_presence: share of the reads a die must appear in to count (drops flickering false boxes).
        min_agreement: share of a die's reads that must agree on its face (else ``uncertain``).
        min_face_confidence: mean classifier confidence the agreeing reads need (else ``uncertain``).
    """

    gate_width: int = 160
    pixel_threshold: int = 18
    motion_fraction: float = 0.002
    still_reads: int = 5
    read_every: int = 1
    max_read_fps: float | None = None
    match_iou: float = 0.5
    still_iou: float = 0.7
    min_presence: float = 0.6
    min_agreement: float = 0.75
    min_face_confidence: float = 0.5

    def __post_init__(self) -> None:
        for name in (
            "motion_fraction",
            "match_iou",
            "still_iou",
            "min_presence",
            "min_agreement",
            "min_face_confidence",
        ):
            if not 0.0 <= (value := getattr(self, name)) <= 1.0:
                raise ValueError(f"{name} must be in 0..1, but got {value!r}")
        for name in ("gate_width", "still_reads", "read_every"):
            if (value := getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, but got {value!r}")
        if not 0 <= self.pixel_threshold <= 255:
            raise ValueError(f"pixel_threshold must be in 0..255, but got {self.pixel_threshold!r}")
        if self.max_read_fps is not None and self.max_read_fps <= 0:
            raise ValueError(f"max_read_fps must be > 0 or None, but got {self.max_read_fps!r}")


@dataclass(frozen=True, slots=True)
class SettleState:
    """What the settle layer says after one frame.

    Attributes:
        phase: see :class:`SettlePhase`.
        reading: the voted reading of the current throw (when settled or latched), else None.
        latest: the newest raw reading (for drawing boxes while the dice settle), or None.
        progress: consistent reads collected so far / reads needed, 0..1.
        moving: the motion gate's verdict on this frame.
        frame_index: index of the frame this state belongs to.
        timestamp: time of that frame in seconds.
    """

    phase: SettlePhase
    reading: Reading | None = None
    latest: Reading | None = None
    progress: float = 0.0
    moving: bool = False
    frame_index: int = 0
    timestamp: float = 0.0

    @property
    def is_new(self) -> bool:
        """True exactly once per throw: on the frame where it settled."""
        return self.phase is SettlePhase.SETTLED


class MotionGate:
    """Says whether the tray moves, from the difference of two consecutive small grey frames.

    Args:
        config: thresholds (``gate_width``, ``pixel_threshold``, ``motion_fraction``).
    """

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self._previous: npt.NDArray[Any] | None = None
        self.last_fraction = 0.0

    def reset(self) -> None:
        """Forget the previous frame (the next one counts as moving)."""
        self._previous = None

    def update(self, image: npt.NDArray[np.uint8]) -> bool:
        """True when this frame differs from the previous one (the first frame counts as moving)."""
        height, width = image.shape[:2]
        small_w = min(self.config.gate_width, width)
        small_h = max(1, round(height * small_w / width))
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        small = cv2.GaussianBlur(cv2.resize(grey, (small_w, small_h), interpolation=cv2.INTER_AREA), (5, 5), 0)
        previous, self._previous = self._previous, small
        if previous is None or previous.shape != small.shape:
            self.last_fraction = 1.0
            return True
        changed = cv2.absdiff(small, previous) > self.config.pixel_threshold
        self.last_fraction = float(np.count_nonzero(changed)) / changed.size
        return self.last_fraction > self.config.motion_fraction


def box_iou(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Pairwise IoU of boxes ``a`` (n, 4) and ``b`` (m, 4), shape (n, m)."""
    a = np.asarray(a, np.float32).reshape(-1, 4)
    b = np.asarray(b, np.float32).reshape(-1, 4)
    return paired_iou(a[:, None, :], b[None, :, :])


def paired_iou(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """IoU of each box of ``a`` with the box of ``b`` at the same place (xyxy on the last axis; shapes broadcast).

    Where only matching pairs matter (a box and its own redraws) this costs one IoU
    per pair, where :func:`box_iou`'s matrix would cost every box against every box.
    """
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    lt = np.maximum(a[..., :2], b[..., :2])
    rb = np.minimum(a[..., 2:], b[..., 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=-1)
    area_a = np.prod(np.clip(a[..., 2:] - a[..., :2], 0, None), axis=-1)
    area_b = np.prod(np.clip(b[..., 2:] - b[..., :2], 0, None), axis=-1)
    union = area_a + area_b - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0).astype(np.float32)


def _match(iou: npt.NDArray[np.float32], threshold: float) -> list[tuple[int, int]]:
    """Greedy one-to-one matching of rows to columns, best IoU first, above ``threshold``."""
    pairs: list[tuple[int, int]] = []
    for flat in np.argsort(-iou, axis=None):
        r, c = divmod(int(flat), iou.shape[1])
        if iou[r, c] < threshold:
            break
        if all(r != pr and c != pc for pr, pc in pairs):
            pairs.append((r, c))
    return pairs


def _vote_die(seen: list[tuple[Reading, int]], config: SettleConfig) -> tuple[int, DieStatus, AmbiguityReason, float]:
    """Face, status, ambiguity and agreement of one die: a ballot per read, its face if flat, else its status.

    The winner needs ``min_agreement`` of the ballots; a face also ``min_face_confidence`` on average.
    """
    ballots = Counter(int(rd.face[r]) if rd.status[r] == DieStatus.OK else str(rd.status[r]) for rd, r in seen)
    winner, votes = ballots.most_common(1)[0]
    agree = votes / len(seen)
    faces = Counter(int(rd.face[r]) for rd, r in seen if rd.face[r] > 0)
    hint = faces.most_common(1)[0][0] if faces else 0
    if agree < config.min_agreement:  # keep the likeliest face as a hint for the player
        guess = winner if isinstance(winner, int) else hint
        return guess, DieStatus.UNCERTAIN, AmbiguityReason.DISAGREEING_READS, agree
    if winner == DieStatus.UNCERTAIN:
        return hint, DieStatus.UNCERTAIN, AmbiguityReason.UNREAD, agree
    if winner == DieStatus.COCKED:
        return 0, DieStatus.COCKED, AmbiguityReason.NONE, agree
    if winner == DieStatus.OFF_TRAY:
        return hint, DieStatus.OFF_TRAY, AmbiguityReason.NONE, agree
    face = int(winner)
    confidence = np.mean([rd.face_confidence[r] for rd, r in seen if rd.status[r] == "ok" and rd.face[r] == face])
    if face == 0 or confidence < config.min_face_confidence:
        return face, DieStatus.UNCERTAIN, AmbiguityReason.LOW_CONFIDENCE, agree
    return face, DieStatus.OK, AmbiguityReason.NONE, agree


def vote(readings: list[Reading], tracks: list[list[int | None]], config: SettleConfig) -> Reading:
    """One reading from several reads of the same still dice: a majority vote per die.

    Args:
        readings: the reads of the still period, oldest first.
        tracks: per die, its row in each read (None where that read missed it).
        config: ``min_presence``, ``min_agreement`` and ``min_face_confidence``.

    Returns:
        One row per die seen in ``min_presence`` of the reads (a box seen once is dropped): median
        box, mean confidences, ``data["ambiguity"]`` (an :class:`AmbiguityReason` value) and
        ``data["agreement"]`` (the winning ballot's share). A flag on how the frame was
        read (``tray_set_aside``, ``straight_down_doubted``) holds if it held for any read.
    """
    last, cols = readings[-1], defaultdict[str, list[Any]](list)
    for track in tracks:
        seen = [(readings[i], r) for i, r in enumerate(track) if r is not None]
        if not seen or len(seen) < config.min_presence * len(readings):
            continue
        face, status, why, agree = _vote_die(seen, config)
        same = [rd.face_confidence[r] for rd, r in seen if face and rd.face[r] == face]
        cols["xyxy"].append(np.median(np.stack([rd.xyxy[r] for rd, r in seen]), axis=0))
        cols["confidence"].append(float(np.mean([rd.confidence[r] for rd, r in seen])))
        cols["face_confidence"].append(float(np.mean(same)) if same else 0.0)
        cols["face"].append(face)
        cols["status"].append(status.value)
        cols["ambiguity"].append(why.value)
        cols["agreement"].append(agree)
    return Reading(
        cols["xyxy"], cols["confidence"], cols["face"], cols["face_confidence"], cols["status"], last.image_size,
        last.tray, last.frame_index, last.timestamp, {"ambiguity": cols["ambiguity"], "agreement": cols["agreement"]},
        tray_set_aside=any(r.tray_set_aside for r in readings),
        straight_down_doubted=any(r.straight_down_doubted for r in readings),
    )  # fmt: skip


class SettleDetector:
    """Stateful: feed it every frame, it reports each throw once (like supervision's ``DetectionsSmoother``).

    Args:
        config: thresholds; see :class:`SettleConfig`.
    """

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self.gate = MotionGate(self.config)
        self.reset()

    def reset(self) -> None:
        """Forget everything: the next still dice are a new throw."""
        self.gate.reset()
        self._reads: list[Reading] = []
        self._boxes: list[npt.NDArray[np.float32]] = []  # per die followed: its last box
        self._tracks: list[list[int | None]] = []  # per die followed: its row in each read, None if missed
        self._latched: Reading | None = None  # the throw the current still dice belong to
        self._reported: Reading | None = None  # the last throw reported (guards against repeats)
        self._latest: Reading | None = None  # the newest raw reading
        self._still_frames, self._last_read_time = 0, -float("inf")
        self._frame: tuple[bool, int, float] = (True, 0, 0.0)
        self.reads = 0  # readings received, for the benchmark and the overlay

    def wants_reading(self, moving: bool, timestamp: float) -> bool:
        """Whether to read this frame (still, the k-th still frame, under the rate cap); once per frame."""
        if moving:
            return False
        self._still_frames += 1
        if (self._still_frames - 1) % self.config.read_every:
            return False
        cap = self.config.max_read_fps
        return cap is None or timestamp - self._last_read_time >= 1 / cap

    def step(self, frame: Frame, reader: FrameReader) -> SettleState:
        """Gate the frame, read it only if still (and due), and update; the usual entry point."""
        moving = self.gate.update(frame.image)
        reading = reader.read(frame.image) if self.wants_reading(moving, frame.timestamp) else None
        return self.update(frame, reading, moving=moving)

    def update(self, frame: Frame, reading: Reading | None = None, *, moving: bool | None = None) -> SettleState:
        """Advance by one frame; the returned state's ``is_new`` is True on one frame per throw.

        Args:
            frame: the frame; its pixels feed the gate unless ``moving`` is given.
            reading: the reader's result for this frame, or None when it was not read.
            moving: the gate's verdict if the caller already ran it (as :meth:`step` does).
        """
        if moving is None:
            moving = self.gate.update(frame.image)
        self._frame = (moving, frame.index, frame.timestamp)
        if moving:
            self._still_frames = 0
            self._restart()
            self._latched = None  # motion re-arms; the reported throw still guards against repeats
            return self._state(SettlePhase.MOVING)
        if reading is not None:
            self.reads += 1
            self._last_read_time = frame.timestamp
            self._latest = reading
            if self._latched is not None and not self._covered(reading, self._latched):
                self._latched = None  # a die where none was latched: something changed without visible motion
            if self._latched is None:
                self._add(reading)
        if self._latched is not None:
            return self._state(SettlePhase.LATCHED, self._latched, 1.0)
        if not self._tracks:
            return self._state(SettlePhase.IDLE)
        needed = self.config.still_reads
        if len(self._reads) < needed:
            return self._state(SettlePhase.SETTLING, progress=len(self._reads) / needed)
        voted = replace(
            vote(self._reads, self._tracks, self.config), frame_index=frame.index, timestamp=frame.timestamp
        )
        self._restart()
        if self._same_throw(voted):
            self._latched = self._reported  # the same dice where they were: a hand passed, nothing was thrown
            return self._state(SettlePhase.LATCHED, self._latched, 1.0)
        self._latched = self._reported = voted
        return self._state(SettlePhase.SETTLED, voted, 1.0)

    def _state(self, phase: SettlePhase, reading: Reading | None = None, progress: float = 0.0) -> SettleState:
        moving, index, timestamp = self._frame
        return SettleState(phase, reading, self._latest, progress, moving, index, timestamp)

    def _restart(self) -> None:
        self._reads, self._boxes, self._tracks = [], [], []

    def _add(self, reading: Reading) -> None:
        """Match a new read to the dice followed; restart the count when the dice moved."""
        if len(reading) == 0:
            self._restart()
            return
        iou = box_iou(np.array(self._boxes, np.float32), reading.xyxy)
        pairs = dict(_match(iou, self.config.match_iou))
        new_rows = sorted(set(range(len(reading))) - set(pairs.values()))
        slid = any(iou[t, row] < self.config.still_iou for t, row in pairs.items())
        if slid or (new_rows and len(pairs) < len(self._boxes)):  # a die moved, or left and reappeared elsewhere
            self._restart()
            pairs, new_rows = {}, list(range(len(reading)))
        self._reads.append(reading)
        for t, track in enumerate(self._tracks):
            track.append(pairs.get(t))
            if t in pairs:
                self._boxes[t] = reading.xyxy[pairs[t]].copy()
        for row in new_rows:
            self._boxes.append(reading.xyxy[row].copy())
            self._tracks.append([None] * (len(self._reads) - 1) + [row])

    def _same_throw(self, voted: Reading) -> bool:
        """True when nothing was thrown: each die where a reported die sat, same face, none fixed."""
        reported = self._reported
        if reported is None or not self._covered(voted, reported):
            return False
        pairs = _match(box_iou(voted.xyxy, reported.xyxy), self.config.match_iou)
        turned = any(voted.face[v] and reported.face[r] and voted.face[v] != reported.face[r] for v, r in pairs)
        return not turned and voted.rethrow >= reported.rethrow

    def _covered(self, reading: Reading, reference: Reading) -> bool:
        """True when every die of ``reading`` sits where a die of ``reference`` sits."""
        return len(_match(box_iou(reading.xyxy, reference.xyxy), self.config.match_iou)) == len(reading)
