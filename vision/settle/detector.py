"""From a stream of frames to one reading per throw: motion gate, settle rule, vote, latch.

A throw starts when dice move in the tray and ends when **every** die has held
still in place for ``settle_seconds`` and the count of dice has been stable over
that time; only then is one reading latched, each die's face voted over the
settled frames. :class:`SettleDetector` does it in four steps. (1) The **motion
gate** (:class:`MotionGate`) compares a small blurred grey thumbnail of every frame
with the previous one (well under a millisecond), so the reader runs on still
frames only, and once a throw is latched (or the tray is seen empty) it runs on
none until the picture changes, even faintly (a small die rolling in can stay
under the gate's threshold), or ``recheck_seconds`` pass: a resting table costs a
thumbnail a frame and a read every two seconds (an empty tray, every
``empty_recheck_seconds``: a lone small die can land under even the faint test).
(2) The **settle window** follows each die of the still frames' reads: a die that
slid from where the window first saw it (by ``still_shift`` of its size), a die that
appears and stays, or one missing ``max_missed`` reads in a row (lifted out)
restarts the window, so a slow last die or a changing count never latches early;
one missed or spurious box does not, but while the latest read has a box where no
die lay (a die still rolling in, too blurred and faint for the gate) the window
does not latch. A moving frame only pauses the window: when still frames return
with every die in its place (a glare frame, a hand passing by) the time counts on
(but a window never settles before a read after the motion, and a die missing from
that read has been lifted);
once the window has held ``settle_seconds`` with ``min_reads`` reads the throw
latches on the next frame, without waiting for one more read, unless its vote so far
leaves a die ``uncertain``: then it reads on for up to ``patience_seconds`` more, so
a die unclear in the first still frames gets its clear reads before it is latched
(the dice told at the settle time keep their verdicts).
(3) The **vote** (:func:`vote`) gives each die the status most of its reads tell (flat, cocked,
off the tray) and a flat die the face its reads' evidence, summed over the settled frames,
makes likeliest (:mod:`farklecam.vision.settle.evidence`): a read the reader was unsure of counts for
what it is worth, so several frames agreeing at 0.45 read a die no single frame could, while
reads doubted for another reason (a symbol face, an unconfirmed lean) abstain, so a glare
frame or a blurred read cannot spoil a face. A die whose reads disagree, or of whose face the
window is not ``min_posterior`` sure, or that is rarely read at all, becomes ``uncertain``
with an :class:`AmbiguityReason` and its likeliest face as the hint a player confirms.
(4) The **latch** decides whether the settled dice are a new throw: dice that all
sit where the last reported throw's dice sat, with the same faces, are not (a hand
passed, glare, set-aside dice lifted out while the others stayed put); a die in a
new place is (the dice moved). Where the game expects a number of dice
(:meth:`SettleDetector.expect`) and the settled dice are another count, the state
says so (``SettlePhase.WRONG_COUNT``, ``dice_seen``, ``dice_expected``) and nothing is
reported until the count is right.

Each read passes through the stream's :class:`~farklecam.vision.tray.memory.TrayMemory` first: a
read that found no tray, or doubted the one it found, gets the off-tray calls of the tray
earlier reads of the stream found (a lone die thrown off the tray leaves the finder
nothing to see the tray by).

Call ``detector.step(frame, reader)`` on every frame; ``read_every`` and ``max_read_fps``
thin the reads of a settle window further on slow machines.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.settle.evidence import OTHER, face_posterior
from farklecam.vision.tray.memory import TrayMemory

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
    """Every threshold of the settle layer, validated once.

    Attributes:
        gate_width: width in pixels of the grey thumbnail the motion gate compares.
        pixel_threshold: grey-level change (0-255) that counts a pixel as changed.
        motion_fraction: share of changed pixels above which the frame is "moving".
        settle_seconds: how long every die must hold still, with a stable count, before the throw latches.
        patience_seconds: how much longer a window whose vote leaves a die ``uncertain`` goes on reading
            still frames before it latches that die uncertain (a small or glared die often reads clearly a
            few frames later; a throw whose dice are all told latches without waiting).
        min_reads: reads the settle window needs at least (a slow stream still votes over several).
        read_every: read one still frame in this many (1: every still frame of a settle window).
        max_read_fps: at most this many reads per second of stream time (None: no cap).
        match_iou: IoU above which two boxes of two reads are the same die (and a die is where a reported one sat).
        still_shift: a die whose centre moved more than this share of its size since the window began still moves.
        max_missed: a die missing from this many reads in a row has left the tray (the count changed).
        recheck_seconds: resting dice are read again after this long even if the picture seems unchanged.
        empty_recheck_seconds: an empty tray, sooner: the next throw lands there, and one small die rolled
            in and at rest within a few frames can change the picture less than even the faint change test
            sees (an empty tray's read is the detector's alone).
        min_presence: share of the reads a die must appear in to count (drops flickering false boxes).
        min_clear: share of a die's reads that must tell something of it (a face, however unsure, ``cocked`` or
            ``off_tray``; not a read the reader doubted for another reason than its confidence) for a vote.
        min_agreement: share of a die's telling reads that must agree on its status (flat, cocked, off the
            tray), and of a flat die's face reads, weighted by their confidence, on its face (else ``uncertain``).
        min_posterior: how sure the window must be of a flat die's face, its reads' evidence summed
            (:func:`farklecam.vision.settle.evidence.face_posterior`), to score it (else ``uncertain``): 0.9, nine to
            one.
        evidence_reads: how many reads' worth of evidence a window holds at most: frames of a die at rest are
            not independent. With 3 (``min_reads``) and 0.9, reads that all name one face need a confidence of
            0.39 each (:func:`farklecam.vision.settle.evidence.unanimous_bar`); two reads 0.55; one read alone 0.9.
    """

    gate_width: int = 160
    pixel_threshold: int = 18
    motion_fraction: float = 0.002
    settle_seconds: float = 0.5
    patience_seconds: float = 0.3
    min_reads: int = 3
    read_every: int = 1
    max_read_fps: float | None = None
    match_iou: float = 0.5
    still_shift: float = 0.2
    max_missed: int = 2
    recheck_seconds: float = 2.0
    empty_recheck_seconds: float = 0.4
    min_presence: float = 0.6
    min_clear: float = 0.3
    min_agreement: float = 0.75
    min_posterior: float = 0.9
    evidence_reads: int = 3

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
    """What the settle layer says after one frame.

    Attributes:
        phase: see :class:`SettlePhase`.
        reading: the voted reading of the current throw (settled, latched, or of the wrong count), else None.
        latest: the newest raw reading (for drawing boxes while the dice settle), or None.
        progress: share of the settle time the dice have held still, 0..1.
        moving: the motion gate's verdict on this frame.
        frame_index: index of the frame this state belongs to.
        timestamp: time of that frame in seconds.
        dice_seen: dice in the settle window (or in the latched reading).
        dice_expected: the counts the game accepts now (empty: any count).
    """

    phase: SettlePhase
    reading: Reading | None = None
    latest: Reading | None = None
    progress: float = 0.0
    moving: bool = False
    frame_index: int = 0
    timestamp: float = 0.0
    dice_seen: int = 0
    dice_expected: tuple[int, ...] = field(default=())

    @property
    def is_new(self) -> bool:
        """True exactly once per throw: on the frame where it settled."""
        return self.phase is SettlePhase.SETTLED

    @property
    def wrong_count(self) -> bool:
        """True while the settled dice are not a count the game expects."""
        return self.phase is SettlePhase.WRONG_COUNT


class MotionGate:
    """Says whether the tray moves, from the difference of two consecutive small grey frames.

    Args:
        config: thresholds (``gate_width``, ``pixel_threshold``, ``motion_fraction``).
    """

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
        """Whether the last frame's thumbnail differs from ``reference`` as much as a moving frame does.

        With ``faint`` a third of ``pixel_threshold`` counts a pixel as changed: a small or pale die
        rolling in changes too little for the gate, but a blurred thumbnail's noise stays below that.
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


def _kind(reading: Reading, row: int) -> DieStatus:
    """What one read tells of one die: a face (``OK``, however unsure), ``COCKED``, ``OFF_TRAY``, or nothing.

    A read the reader doubted for another reason than its confidence (:func:`_flagged`), or
    that named no face, tells nothing (``UNCERTAIN``): it abstains.
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
    """Face, status, ambiguity, agreement and sureness of one die over its reads.

    First its status: the reads that tell something (:func:`_kind`) vote flat, cocked or
    off the tray, and the winner needs ``min_agreement`` of them (they ``min_clear`` of all
    reads). A flat die's face is then the evidence of its face reads summed
    (:func:`farklecam.vision.settle.evidence.face_posterior`): a read the reader was unsure of counts
    for what it is worth rather than abstaining, so frames agreeing at 0.45 read a die
    that no single frame could. It scores when the window is ``min_posterior`` sure of it and
    its reads, weighted by confidence, ``min_agreement`` agree; else it is ``uncertain`` with
    that face as the hint a player confirms. The sureness is that posterior for a flat die
    (None for a cocked or off-tray one).
    """
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
    """Whether the reader doubted this die for another reason than its confidence (a symbol face, a lean).

    No number of frames makes a logo face or an unconfirmed lean a number.
    """
    return any(bool(reading.data[key][row]) for key in ("symbol", "cocked") if key in reading.data)


def vote(readings: list[Reading], tracks: list[list[int | None]], config: SettleConfig) -> Reading:
    """One reading from several reads of the same still dice: a majority vote per die.

    Args:
        readings: the reads of the settle window, oldest first.
        tracks: per die, its row in each read (None where that read missed it).
        config: ``min_presence``, ``min_clear``, ``min_agreement``, ``min_posterior`` and ``evidence_reads``.

    Returns:
        One row per die seen in ``min_presence`` of the reads (a box seen once is dropped): median
        box, mean detector confidence, as face confidence the window's posterior of a flat die's face
        (a cocked or off-tray die: its reads' mean), ``data["ambiguity"]`` (an :class:`AmbiguityReason` value),
        ``data["agreement"]`` (the winning ballot's share) and ``data["faces_seen"]`` (how often
        each face was read, like ``"5:6 3:1"``: what a player confirming an uncertain die is offered).
        A flag on how the frame was read (``tray_set_aside``, ``straight_down_doubted``) holds if it
        held for any read; the tray and its ``tray_state`` are the last read's.
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
    """The final vote of a window, but a die the vote at the settle time told keeps that verdict.

    Reading on for an unclear die (``patience_seconds``) must not cost the others: more
    reads of a die already told can only add a stray misread that spoils its agreement.
    """
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
    """Stateful: feed it every frame, it reports each throw once (like supervision's ``DetectionsSmoother``).

    Args:
        config: thresholds; see :class:`SettleConfig`.
    """

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

    def expect(self, counts: Collection[int] | None) -> None:
        """Say how many dice the game accepts now (None or empty: any number); another count is never reported."""
        self._expected = tuple(sorted(set(counts or ())))

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
        """Advance by one frame; the returned state's ``is_new`` is True on one frame per throw.

        Args:
            frame: the frame; its pixels feed the gate unless ``moving`` is given.
            reading: the reader's result for this frame, or None when it was not read.
            moving: the gate's verdict if the caller already ran it (as :meth:`step` does).
        """
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
        """Whether the window may latch by ``timestamp``.

        It may once it has held ``settle_seconds`` with ``min_reads`` reads and its vote tells
        every die, or ``patience_seconds`` later whatever the vote says.
        """
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

        A die missing from the first read after motion went (a hand lifted it): one read
        suffices, where a die merely missed by the detector among still frames needs
        ``max_missed`` reads in a row.
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
