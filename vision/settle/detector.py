"""From a stream of frames to one reading per throw: motion gate, settle window, vote, latch.

:class:`SettleDetector` reads only still frames (:class:`MotionGate`); once every die has
held still for ``settle_seconds`` it latches one reading voted over the window (:func:`vote`).
Dice where the last reported throw's sat, with its faces, are no new throw (a hand passed);
a count the game does not expect is never reported. A latched throw is not read again until
the picture changes. Each read first passes the stream's
:class:`~farklecam.vision.tray.memory.TrayMemory`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.tray.memory import TrayMemory

__all__ = [
    "OTHER",
    "OUTCOMES",
    "AmbiguityReason",
    "FrameReader",
    "MotionGate",
    "SettleConfig",
    "SettleDetector",
    "SettlePhase",
    "SettleState",
    "box_iou",
    "face_posterior",
    "paired_iou",
    "read_likelihood",
    "vote",
]

#: Outcomes of one read of a flat die: faces 1-6 (indices 0-5) and "other" (index 6).
OUTCOMES = 7
#: Index of "other" in a likelihood or posterior: the crop shows no face the classifier can name.
OTHER = 6
_FLOOR = 1e-4  # no single read may rule an outcome out entirely


class FrameReader(Protocol):
    """Anything that reads the dice in one BGR frame (``farklecam.vision.reader.DiceReader`` or a test double)."""

    def read(self, frame: npt.NDArray[np.uint8], /) -> Reading:
        """Every die in the BGR frame."""
        ...


class AmbiguityReason(StrEnum):
    """Why a voted die is ``uncertain`` rather than read (stored in ``Reading.data["ambiguity"]``)."""

    NONE = ""
    """Not ambiguous: the die is read (or clearly cocked / off the tray)."""
    DISAGREEING_READS = "disagreeing_reads"
    """The clear reads of this die over the settled frames name different faces (or statuses)."""
    LOW_CONFIDENCE = "low_confidence"
    """The reads agree but the classifier was not sure of them."""
    UNREAD = "unread"
    """Too few reads told the die's face (blur, occlusion, glare, a die too small)."""


class SettlePhase(StrEnum):
    """Where the detector is between two throws."""

    MOVING = "moving"
    """The tray moves (dice rolling, a hand): nothing is read."""
    IDLE = "idle"
    """Still, but no dice in view."""
    SETTLING = "settling"
    """Still, collecting reads of dice that have not yet held still for the settle time."""
    SETTLED = "settled"
    """A new throw has just settled: ``SettleState.reading`` is its voted reading (reported once)."""
    LATCHED = "latched"
    """The throw was reported; the dice in view are its dice (or some of them)."""
    WRONG_COUNT = "wrong_count"
    """Still, but not as many dice as the game expects: shown, never reported or scored."""


@dataclass(frozen=True, slots=True)
class SettleConfig:
    """Every threshold of the settle layer, validated once."""

    gate_width: int = 160  #: width in pixels of the grey thumbnail the motion gate compares
    pixel_threshold: int = 18  #: grey-level change (0-255) that counts a pixel as changed
    motion_fraction: float = 0.002  #: share of changed pixels above which a frame is moving
    settle_seconds: float = 0.5  #: how long every die must hold still, with a stable count, before a latch
    patience_seconds: float = 0.3  #: how much longer a window whose vote leaves a die ``uncertain`` reads on
    min_reads: int = 3  #: reads the settle window needs at least
    read_every: int = 1  #: read one still frame in this many
    max_read_fps: float | None = None  #: at most this many reads per second of stream time (None: no cap)
    match_iou: float = 0.5  #: IoU above which two boxes of two reads are the same die
    still_shift: float = 0.2  #: a die whose centre moved this share of its size since the window began moves
    max_missed: int = 2  #: a die missing from this many reads in a row has left the tray
    recheck_seconds: float = 2.0  #: resting dice are read again after this long, even in an unchanged picture
    empty_recheck_seconds: float = 0.4  #: an empty tray, sooner: a small die rolling in may slip past the gate
    min_presence: float = 0.6  #: share of the reads a die must appear in to count (drops flickering boxes)
    min_clear: float = 0.3  #: share of a die's reads that must tell something of it (a face, cocked, off) to vote
    min_agreement: float = 0.75  #: share of telling reads (a flat die's weighted by confidence) that must agree
    min_posterior: float = 0.9  #: how sure the window must be of a flat die's face (:func:`face_posterior`)
    evidence_reads: int = 3  #: how many reads' worth of evidence a window holds at most

    def __post_init__(self) -> None:
        for name in (
            "motion_fraction",
            "match_iou",
            "still_shift",
            "min_presence",
            "min_clear",
            "min_agreement",
            "min_posterior",
        ):
            if not 0.0 <= (value := getattr(self, name)) <= 1.0:
                raise ValueError(f"{name} must be in 0..1, but got {value!r}")
        for name in ("gate_width", "min_reads", "read_every", "max_missed", "evidence_reads"):
            if (value := getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, but got {value!r}")
        if (
            self.settle_seconds < 0
            or self.patience_seconds < 0
            or min(self.recheck_seconds, self.empty_recheck_seconds) <= 0
        ):
            raise ValueError(
                f"settle_seconds and patience_seconds must be >= 0 and the recheck times > 0, but got "
                f"{self.settle_seconds!r}, {self.patience_seconds!r}, {self.recheck_seconds!r} and "
                f"{self.empty_recheck_seconds!r}"
            )
        if not 0 <= self.pixel_threshold <= 255:
            raise ValueError(f"pixel_threshold must be in 0..255, but got {self.pixel_threshold!r}")
        if self.max_read_fps is not None and self.max_read_fps <= 0:
            raise ValueError(f"max_read_fps must be > 0 or None, but got {self.max_read_fps!r}")


@dataclass(frozen=True, slots=True)
class SettleState:
    """What the settle layer says after one frame."""

    phase: SettlePhase
    reading: Reading | None = None  #: the voted reading of the current throw (settled, latched, wrong count)
    latest: Reading | None = None  #: the newest raw reading, for drawing boxes while the dice settle
    progress: float = 0.0  #: share of the settle time the dice have held still, 0..1
    moving: bool = False  #: the motion gate's verdict on this frame
    frame_index: int = 0
    timestamp: float = 0.0
    dice_seen: int = 0  #: dice in the settle window (or in the latched reading)
    dice_expected: tuple[int, ...] = field(default=())  #: the counts the game accepts now (empty: any)

    @property
    def is_new(self) -> bool:
        """True exactly once per throw: on the frame where it settled."""
        return self.phase is SettlePhase.SETTLED

    @property
    def wrong_count(self) -> bool:
        """True while the settled dice are not a count the game expects."""
        return self.phase is SettlePhase.WRONG_COUNT


class MotionGate:
    """Says whether the tray moves, from the difference of two consecutive small blurred grey frames."""

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self._previous: npt.NDArray[Any] | None = None
        self.last_fraction = 0.0

    @property
    def thumbnail(self) -> npt.NDArray[Any] | None:
        """The last frame's blurred grey thumbnail (to compare a later frame with, see :meth:`changed_from`)."""
        return self._previous

    def reset(self) -> None:
        """Forget the previous frame (the next one counts as moving)."""
        self._previous = None

    def changed_from(self, reference: npt.NDArray[Any] | None, *, faint: bool = False) -> bool:
        """Whether the last frame's thumbnail differs from ``reference`` as a moving frame does.

        With ``faint`` a third of ``pixel_threshold`` counts: a small die rolling in changes little.
        """
        current = self._previous
        if reference is None or current is None or reference.shape != current.shape:
            return True
        threshold = self.config.pixel_threshold / 3 if faint else self.config.pixel_threshold
        return self._fraction(current, reference, threshold) > self.config.motion_fraction

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
        self.last_fraction = self._fraction(small, previous)
        return self.last_fraction > self.config.motion_fraction

    def _fraction(self, a: npt.NDArray[Any], b: npt.NDArray[Any], threshold: float | None = None) -> float:
        changed = cv2.absdiff(a, b) > (self.config.pixel_threshold if threshold is None else threshold)
        return float(np.count_nonzero(changed)) / changed.size


def read_likelihood(face: int, confidence: float) -> npt.NDArray[np.float64]:
    """One read's likelihood over :data:`OUTCOMES`: ``confidence`` on ``face`` (1-6), the rest spread evenly."""
    if not 1 <= face <= 6:
        return np.full(OUTCOMES, 1.0 / OUTCOMES)
    c = min(max(float(confidence), _FLOOR), 1.0 - _FLOOR)
    out = np.full(OUTCOMES, (1.0 - c) / (OUTCOMES - 1))
    out[face - 1] = c
    return out


def face_posterior(reads: Sequence[tuple[int, float]], evidence_reads: int) -> npt.NDArray[np.float64]:
    """The posterior over :data:`OUTCOMES` of one die from its reads ``(face, confidence)``, uniform prior.

    Unsure reads naming one face say more together than one alone, so their log-likelihoods
    are summed; frames of a die at rest are not independent, so at most ``evidence_reads`` count.

    Raises:
        ValueError: no reads, or ``evidence_reads`` < 1.
    """
    if not reads:
        raise ValueError("a posterior needs at least one read")
    if evidence_reads < 1:
        raise ValueError(f"evidence_reads must be >= 1, but got {evidence_reads!r}")
    logs = np.sum([np.log(read_likelihood(f, c)) for f, c in reads], axis=0)
    logs *= min(len(reads), evidence_reads) / len(reads)
    logs -= logs.max()
    post = np.exp(logs)
    return np.asarray(post / post.sum(), np.float64)


def box_iou(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Pairwise IoU of boxes ``a`` (n, 4) and ``b`` (m, 4), shape (n, m)."""
    a = np.asarray(a, np.float32).reshape(-1, 4)
    b = np.asarray(b, np.float32).reshape(-1, 4)
    return paired_iou(a[:, None, :], b[None, :, :])


def paired_iou(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """IoU of each box of ``a`` with the box of ``b`` at the same place (xyxy on the last axis; shapes broadcast)."""
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


def _kind(reading: Reading, row: int) -> DieStatus:
    """What one read tells of one die: a face (``OK``, however unsure), ``COCKED``, ``OFF_TRAY``, or nothing.

    A read doubted for another reason than its confidence (:func:`_flagged`), or naming no face, abstains.
    """
    status = DieStatus(str(reading.status[row]))
    if status in (DieStatus.COCKED, DieStatus.OFF_TRAY):
        return status
    if _flagged(reading, row) or not 1 <= int(reading.face[row]) <= 6:
        return DieStatus.UNCERTAIN
    return DieStatus.OK


def _vote_die(
    seen: list[tuple[Reading, int]], config: SettleConfig
) -> tuple[int, DieStatus, AmbiguityReason, float, float | None]:
    """Face, status, ambiguity, agreement and sureness (the face's posterior; None if not flat) of one die."""
    kinds = [_kind(rd, r) for rd, r in seen]
    reads = [(int(rd.face[r]), float(rd.face_confidence[r])) for (rd, r), k in zip(seen, kinds, strict=True)
             if k is DieStatus.OK]  # fmt: skip
    everything = [(int(rd.face[r]), float(rd.face_confidence[r])) for rd, r in seen]
    post = face_posterior(reads or everything, config.evidence_reads)
    hint = int(np.argmax(post[:OTHER])) + 1
    sure = float(post[hint - 1])
    told = Counter(k for k in kinds if k is not DieStatus.UNCERTAIN)
    total = sum(told.values())
    if total == 0 or total < config.min_clear * len(seen):
        return hint, DieStatus.UNCERTAIN, AmbiguityReason.UNREAD, total / len(seen), sure
    winner, votes = told.most_common(1)[0]
    if votes / total < config.min_agreement:
        return hint, DieStatus.UNCERTAIN, AmbiguityReason.DISAGREEING_READS, votes / total, sure
    if winner is DieStatus.COCKED:
        return 0, DieStatus.COCKED, AmbiguityReason.NONE, votes / total, None
    if winner is DieStatus.OFF_TRAY:
        return hint, DieStatus.OFF_TRAY, AmbiguityReason.NONE, votes / total, None
    weight = sum(c for _, c in reads)
    agree = sum(c for f, c in reads if f == hint) / weight if weight > 0 else 0.0
    if agree < config.min_agreement:
        return hint, DieStatus.UNCERTAIN, AmbiguityReason.DISAGREEING_READS, agree, sure
    if sure < config.min_posterior:
        return hint, DieStatus.UNCERTAIN, AmbiguityReason.LOW_CONFIDENCE, agree, sure
    return hint, DieStatus.OK, AmbiguityReason.NONE, agree, sure


def _flagged(reading: Reading, row: int) -> bool:
    """Whether the reader doubted this die for another reason than its confidence (a symbol face, a lean)."""
    return any(bool(reading.data[key][row]) for key in ("symbol", "cocked") if key in reading.data)


def vote(readings: list[Reading], tracks: list[list[int | None]], config: SettleConfig) -> Reading:
    """One reading from a settle window's reads (oldest first), voted per die; ``tracks`` holds each die's rows.

    Each die seen in ``min_presence`` of the reads gets its median box, mean confidence, the
    posterior of its face, and ``data`` ``"ambiguity"``, ``"agreement"`` and ``"faces_seen"``
    (like ``"5:6 3:1"``). A read's flags hold if they held for any; the tray is the last read's.
    """
    last, cols = readings[-1], defaultdict[str, list[Any]](list)
    for track in tracks:
        seen = [(readings[i], r) for i, r in enumerate(track) if r is not None]
        if not seen or len(seen) < config.min_presence * len(readings):
            continue
        face, status, why, agree, sure = _vote_die(seen, config)
        same = [rd.face_confidence[r] for rd, r in seen if rd.face[r] == face]
        counts = Counter(int(rd.face[r]) for rd, r in seen if rd.face[r] > 0)
        cols["xyxy"].append(np.median(np.stack([rd.xyxy[r] for rd, r in seen]), axis=0))
        cols["confidence"].append(float(np.mean([rd.confidence[r] for rd, r in seen])))
        cols["face_confidence"].append(sure if sure is not None else float(np.mean(same)) if same else 0.0)
        cols["face"].append(face)
        cols["status"].append(status.value)
        cols["ambiguity"].append(why.value)
        cols["agreement"].append(agree)
        cols["faces_seen"].append(" ".join(f"{f}:{n}" for f, n in counts.most_common()))
    return Reading(
        np.asarray(cols["xyxy"], np.float32).reshape(-1, 4), np.asarray(cols["confidence"], np.float32),
        np.asarray(cols["face"], np.int64), np.asarray(cols["face_confidence"], np.float32),
        np.asarray(cols["status"], np.str_), last.image_size,
        last.tray, last.frame_index, last.timestamp,
        {k: np.asarray(cols[k]) for k in ("ambiguity", "agreement", "faces_seen")},
        tray_set_aside=any(r.tray_set_aside for r in readings),
        straight_down_doubted=any(r.straight_down_doubted for r in readings),
        tray_state=last.tray_state,
    )  # fmt: skip


def _keep_told(final: Reading, told: Reading | None, match_iou: float) -> Reading:
    """The window's final vote, but a die the vote at the settle time told keeps that verdict."""
    uncertain = DieStatus.UNCERTAIN.value
    unsure = np.flatnonzero(final.status == uncertain)
    if told is None or told is final or not len(unsure):
        return final
    pairs = _match(box_iou(final.xyxy[unsure], told.xyxy), match_iou)
    rows = {int(unsure[i]): j for i, j in pairs if told.status[j] != uncertain}
    if not rows:
        return final
    face, conf = final.face.copy(), final.face_confidence.copy()
    status, data = list(final.status), {k: list(v) for k, v in final.data.items()}
    for row, j in rows.items():
        face[row], conf[row], status[row] = told.face[j], told.face_confidence[j], told.status[j]
        for key, column in data.items():
            if key in told.data:
                column[row] = told.data[key][j]
    return replace(
        final, face=face, face_confidence=conf, status=np.asarray(status, np.str_),
        data={k: np.asarray(v) for k, v in data.items()},
    )  # fmt: skip


def _centre_size(box: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], float]:
    return np.asarray((box[:2] + box[2:]) / 2, np.float32), float(max(box[2] - box[0], box[3] - box[1], 1.0))


@dataclass(slots=True)
class _Die:
    """One die followed through a settle window."""

    anchor: npt.NDArray[np.float32]  # its box when the window first saw it
    box: npt.NDArray[np.float32]  # its last box
    rows: list[int | None]  # its row in each read of the window
    born: int = 0  # the read of the window that first saw it
    missed: int = 0  # reads in a row without it

    @property
    def sightings(self) -> int:
        return sum(r is not None for r in self.rows)


class SettleDetector:
    """Stateful: feed it every frame, it reports each throw once."""

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self.gate = MotionGate(self.config)
        #: The camera's tray as its reads found it, for the reads that cannot find it (a die alone off the tray).
        self.trays = TrayMemory()
        self._expected: tuple[int, ...] = ()
        self._vote: Reading | None = None  # the window's vote over its reads so far (None: not voted since a read)
        self._newcomer = False  # whether the window's last read has a box matching none of its dice
        self._told: Reading | None = None  # the vote when the window first held the settle time
        self.reset()

    def reset(self) -> None:
        """Forget everything: the next still dice are a new throw."""
        self.gate.reset()
        self._restart(-float("inf"))
        self._held: Reading | None = None  # voted dice at rest (reported or of the wrong count), while nothing moves
        self._held_phase = SettlePhase.LATCHED
        self._held_thumb: npt.NDArray[Any] | None = None  # the picture when they were held: reads resume on a change
        self._reported: Reading | None = None  # the last throw reported (dice lifted from it are not a new throw)
        self._latest: Reading | None = None
        self._still_frames, self._last_read_time = 0, -float("inf")
        self._unread_motion = True
        self._frame: tuple[bool, int, float] = (True, 0, 0.0)
        self.reads = 0  # readings received, for the benchmark and the overlay

    def recall(self, reported: Reading) -> None:
        """Take ``reported`` as the last throw reported, as if this detector had reported it.

        A table reopened on another server, or after a restart, starts with no history: dice left
        lying from its last throw (those not lifted out) would look like a new throw once a hand moved
        in the tray. Recalled, they are that throw, as they are to the detector that reported it.
        """
        self._reported = reported

    def expect(self, counts: Collection[int] | None) -> None:
        """Say how many dice the game accepts now (None or empty: any number); another count is never reported."""
        self._expected = tuple(sorted(set(counts or ())))

    @property
    def settling(self) -> bool:
        """Whether a read now would settle a throw: none is held, or the tray moved since (a server reads these first).

        Otherwise a read only rechecks dice already reported.
        """
        return self._held is None or self._unread_motion

    def wants_reading(self, moving: bool, timestamp: float) -> bool:
        """Whether to read this frame: still, not resting unchanged since a latch, due; call once per frame."""
        if moving:
            return False
        empty = self._held is not None and len(self._held) == 0
        wait = self.config.empty_recheck_seconds if empty else self.config.recheck_seconds
        recheck = timestamp - self._last_read_time >= wait
        if self._held is not None and not recheck and not self.gate.changed_from(self._held_thumb, faint=True):
            return False
        if self._held is None and self._mature(timestamp):
            return False  # the window has what it needs: settle now rather than after one more read
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
        """Advance by one frame (read as ``reading``, or None); the state's ``is_new`` is True once per throw."""
        if moving is None:
            moving = self.gate.update(frame.image)
        self._frame = (moving, frame.index, frame.timestamp)
        if moving:  # nothing is read; the next still read says whether any die moved
            self._still_frames, self._unread_motion = 0, True
            return self._state(SettlePhase.MOVING)
        if reading is not None:
            reading = self.trays.apply(frame.image, reading)
            self.reads += 1
            after_motion = self._unread_motion
            self._last_read_time, self._unread_motion = frame.timestamp, False
            self._latest = reading
            if self._held is not None and self._still_held(reading):
                self._held_thumb = self.gate.thumbnail  # the same dice (or fewer): this picture is the held one
            else:
                self._held = None
                self._add(reading, frame.timestamp, after_motion=after_motion)
        if self._held is not None:
            return self._state(self._held_phase, self._held, 1.0, len(self._held))
        return self._settle(frame)

    def _settle(self, frame: Frame) -> SettleState:
        """The window's verdict: still settling, empty, or settled (new throw, same throw, or wrong count)."""
        elapsed = frame.timestamp - self._since
        progress = min(1.0, elapsed / self.config.settle_seconds) if self.config.settle_seconds > 0 else 1.0
        seen = sum(d.sightings >= self.config.min_presence * len(self._reads) for d in self._dice)
        if not self._mature(frame.timestamp):
            phase = SettlePhase.SETTLING if self._dice else SettlePhase.IDLE
            return self._state(phase, progress=progress if self._dice else 0.0, seen=seen)
        final = self._vote or vote(self._reads, [d.rows for d in self._dice], self.config)
        voted = replace(
            _keep_told(final, self._told, self.config.match_iou), frame_index=frame.index, timestamp=frame.timestamp
        )
        self._restart(frame.timestamp)
        if len(voted) == 0:
            self._reported = None  # the tray was seen empty: whatever lands next is a throw
            return self._hold(voted, SettlePhase.IDLE)  # and is not read again until the picture changes
        if self._reported is not None and self._same_dice(voted, self._reported):
            return self._hold(self._reported, SettlePhase.LATCHED)  # lifted dice, a hand, glare: not a throw
        if self._expected and len(voted) not in self._expected:
            return self._hold(voted, SettlePhase.WRONG_COUNT)
        self._reported = voted
        self._hold(voted, SettlePhase.LATCHED)
        return self._state(SettlePhase.SETTLED, voted, 1.0, len(voted))

    def _still_held(self, reading: Reading) -> bool:
        """Whether a read shows the held dice: each where a held die sits (and as many, for a wrong count)."""
        held = self._held
        assert held is not None
        if len(held) == 0 or len(reading) == 0:
            return len(held) == len(reading)  # an empty tray stays empty; dice after it, or none left, are news
        if self._held_phase is SettlePhase.WRONG_COUNT and len(reading) != len(held):
            return False
        return self._same_dice(reading, held)

    def _mature(self, timestamp: float) -> bool:
        """Whether the window may latch by ``timestamp``: settled and every die told, or ``patience_seconds`` later."""
        if self._unread_motion:  # something moved since the last read: only a read can say it was not a die
            return False
        if self._newcomer:  # the last read has a box where no die lay: a die rolling in, unless the next read
            return False  # finds it gone (a false box) or in place (then it joined: the window begins again)
        held = timestamp - self._since
        if len(self._reads) < self.config.min_reads or held < self.config.settle_seconds:
            return False
        untold = self._untold()
        if self._told is None:
            self._told = self._vote  # the verdicts at the settle time: patience serves only the dice untold then
        return held >= self.config.settle_seconds + self.config.patience_seconds or not untold

    def _untold(self) -> bool:
        """Whether the window's vote so far leaves a die ``uncertain`` (voted once per read, then kept)."""
        if self._vote is None:
            self._vote = vote(self._reads, [d.rows for d in self._dice], self.config)
        return bool(np.any(self._vote.status == DieStatus.UNCERTAIN.value))

    def _hold(self, reading: Reading, phase: SettlePhase) -> SettleState:
        """Keep ``reading`` as what rests in the tray; no read until the picture changes."""
        self._held, self._held_phase, self._held_thumb = reading, phase, self.gate.thumbnail
        return self._state(phase, reading, 1.0, len(reading))

    def _state(
        self, phase: SettlePhase, reading: Reading | None = None, progress: float = 0.0, seen: int = 0
    ) -> SettleState:
        moving, index, timestamp = self._frame
        return SettleState(phase, reading, self._latest, progress, moving, index, timestamp, seen, self._expected)

    def _restart(self, since: float) -> None:
        """Begin a new settle window at time ``since``."""
        self._reads: list[Reading] = []
        self._dice: list[_Die] = []
        self._since = since
        self._vote = None
        self._told = None
        self._newcomer = False

    def _add(self, reading: Reading, timestamp: float, *, after_motion: bool = False) -> None:
        """Follow the dice of a new read; restart the window when a die moved, came or went.

        A die missing from the first read after motion was lifted; among still frames a die
        must miss ``max_missed`` reads in a row.
        """
        if len(reading) and not any(d.sightings for d in self._dice):
            self._restart(timestamp)  # the first dice after an empty tray: the empty reads say nothing of them
        if not self._reads:
            self._since = timestamp  # the window's time runs from its first still read
        boxes = np.array([d.box for d in self._dice], np.float32).reshape(-1, 4)
        pairs = dict(_match(box_iou(boxes, reading.xyxy), self.config.match_iou))
        changed = False
        for t, die in enumerate(self._dice):
            row = pairs.get(t)
            die.rows.append(row)
            if row is None:
                die.missed += 1
                gone = die.missed >= self.config.max_missed or after_motion
                changed |= gone and die.sightings >= 2  # it left the tray
                continue
            die.missed, die.box = 0, reading.xyxy[row].copy()
            (a, size), (b, _) = _centre_size(die.anchor), _centre_size(die.box)
            changed |= float(np.hypot(*(b - a))) > self.config.still_shift * size  # it still slides
        newcomers = sorted(set(range(len(reading))) - set(pairs.values()))
        for row in newcomers:
            box = reading.xyxy[row].copy()
            self._dice.append(_Die(box, box.copy(), [None] * len(self._reads) + [row], len(self._reads)))
        self._newcomer = bool(newcomers) and bool(self._reads)  # a box where no die of the window lies
        self._reads.append(reading)
        self._vote = None
        # a die that came after the window began and stayed (a slow last die coming to rest)
        changed |= any(d.born > 0 and None not in d.rows[-2:] for d in self._dice)
        if changed:  # begin again from this read: its dice, where they are now
            self._restart(timestamp)
            self._reads.append(reading)
            self._dice = [_Die(b.copy(), b.copy(), [row]) for row, b in enumerate(reading.xyxy)]

    def _same_dice(self, voted: Reading, reported: Reading) -> bool:
        """True when nothing was thrown: every die sits where a reported die sat, with its face where both read one.

        A die read ``uncertain`` (or cocked) on one side says nothing against it: its face is a guess.
        """
        pairs = _match(box_iou(voted.xyxy, reported.xyxy), self.config.match_iou)
        if len(pairs) < len(voted):
            return False
        ok = DieStatus.OK.value
        return all(
            voted.face[v] == reported.face[r] or ok != voted.status[v] or ok != reported.status[r] for v, r in pairs
        )
