"""Scoring a reading against labels: matching by box centre, and the counts behind every metric.

Two box conventions meet here: whole-die boxes (generated scenes, most real
photos) and pip-pattern boxes (one real source boxes only the pips of the top
face, so a one's box is a small square). Overlap (IoU) would call those misses;
centres do not care. A prediction matches a label when its centre lies inside
the label's box or the label's centre inside the prediction's box, one to one,
closest centres first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from farklecam.models.evaluate.confusion import ConfusionMatrix
from farklecam.vision.reading import DieStatus, Reading

__all__ = [
    "COCKED_CLASS",
    "LEAN_BANDS_DEG",
    "SIZE_BANDS_PX",
    "SIZE_BAND_NAMES",
    "FolderStats",
    "ImageLabels",
    "ScoredMatch",
    "centre_overlap",
    "f1",
    "lean_band",
    "lean_band_name",
    "match_by_centre",
    "match_scored",
    "predicted_classes",
    "ratio",
    "size_band",
    "touching",
]

#: Class id of a cocked die (faces are 0-5 = face - 1).
COCKED_CLASS = 6
#: Lower edges (degrees off vertical) of the lean bands cocked recall is broken down by.
#: The first is the generator's own cocked threshold (``farklecam.datasets.synthetic.mesh``); a
#: die just past it shows most of its top face and is the hardest to call.
LEAN_BANDS_DEG = (15.0, 25.0, 35.0)
#: Upper edges (pixels, a die's longer box side) of the die-size bands recall and faces are broken down by.
SIZE_BANDS_PX = (30.0, 45.0, 70.0, 150.0)
#: The bands as the tables print them.
SIZE_BAND_NAMES = ("<30", "30-45", "45-70", "70-150", ">150")
#: Two dice touch where their boxes, each grown by this share of its side, overlap.
TOUCH_MARGIN = 0.1


def size_band(xyxy: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Index into :data:`SIZE_BAND_NAMES` of each box (its longer side, pixels)."""
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    return np.searchsorted(SIZE_BANDS_PX, sides, side="right").astype(np.int64)


def touching(xyxy: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Which boxes touch another: side to side, corner to corner or in a row (grown boxes overlap)."""
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    pad = TOUCH_MARGIN * np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    grown = boxes + np.stack([-pad, -pad, pad, pad], axis=1)
    x_overlap = (grown[:, None, 0] < grown[None, :, 2]) & (grown[None, :, 0] < grown[:, None, 2])
    y_overlap = (grown[:, None, 1] < grown[None, :, 3]) & (grown[None, :, 1] < grown[:, None, 3])
    both = x_overlap & y_overlap
    np.fill_diagonal(both, False)
    return np.asarray(both.any(axis=1), bool)


def lean_band(tilt_deg: float) -> int:
    """Index into :data:`LEAN_BANDS_DEG` of a leaning die's tilt.

    The last band is open; a tilt below the first edge (which a cocked label should not
    have) counts in the first.
    """
    return max(0, int(np.searchsorted(LEAN_BANDS_DEG, tilt_deg, side="right")) - 1)


def lean_band_name(index: int) -> str:
    """``"15-25"``, ..., ``"35+"``: a band as the tables print it (degrees)."""
    low = LEAN_BANDS_DEG[index]
    return f"{low:.0f}+" if index == len(LEAN_BANDS_DEG) - 1 else f"{low:.0f}-{LEAN_BANDS_DEG[index + 1]:.0f}"


def centre_overlap(pred_xyxy: npt.ArrayLike, label_xyxy: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Which predictions may stand for which labels: a centre of one lies inside the other's box.

    Returns:
        Boolean matrix of shape (n, m). A prediction with no True in its row is
        about no labelled die at all (what training mines as "not a die").
    """
    pred = np.asarray(pred_xyxy, np.float64).reshape(-1, 4)
    gt = np.asarray(label_xyxy, np.float64).reshape(-1, 4)
    pc = (pred[:, :2] + pred[:, 2:]) / 2
    gc = (gt[:, :2] + gt[:, 2:]) / 2

    def inside(points: npt.NDArray[np.float64], boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        x, y = points[:, None, 0], points[:, None, 1]
        return (x >= boxes[None, :, 0]) & (x <= boxes[None, :, 2]) & (y >= boxes[None, :, 1]) & (y <= boxes[None, :, 3])

    return np.asarray(inside(pc, gt) | inside(gc, pred).T, dtype=bool)


def match_by_centre(pred_xyxy: npt.ArrayLike, label_xyxy: npt.ArrayLike) -> list[tuple[int, int]]:
    """Pair predictions with labels by box centre, one to one, closest first.

    Args:
        pred_xyxy: predicted boxes, shape (n, 4).
        label_xyxy: labelled boxes, shape (m, 4).

    Returns:
        ``(pred_index, label_index)`` pairs, sorted by prediction index.
    """
    pred = np.asarray(pred_xyxy, np.float64).reshape(-1, 4)
    gt = np.asarray(label_xyxy, np.float64).reshape(-1, 4)
    if len(pred) == 0 or len(gt) == 0:
        return []
    pc = (pred[:, :2] + pred[:, 2:]) / 2  # (n, 2)
    gc = (gt[:, :2] + gt[:, 2:]) / 2  # (m, 2)
    ok = centre_overlap(pred, gt)  # (n, m)
    dist = np.hypot(pc[:, None, 0] - gc[None, :, 0], pc[:, None, 1] - gc[None, :, 1])
    rows, cols = np.nonzero(ok)
    order = np.argsort(dist[rows, cols], kind="stable")
    used_p: set[int] = set()
    used_g: set[int] = set()
    pairs = []
    for k in order:
        i, j = int(rows[k]), int(cols[k])
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def predicted_classes(reading: Reading) -> npt.NDArray[np.int64]:
    """Class id of each die read: face - 1, 6 for cocked, -1 for found but not read."""
    cocked = reading.data.get("cocked")
    is_cocked = np.asarray(cocked, bool) if cocked is not None else reading.status == DieStatus.COCKED
    cls = np.where(reading.face > 0, reading.face - 1, -1).astype(np.int64)
    cls[is_cocked] = COCKED_CLASS
    return cls


@dataclass(frozen=True)
class ImageLabels:
    """The labels of one image.

    Attributes:
        xyxy: boxes, shape (m, 4), pixels.
        classes: class ids, shape (m,): face - 1, or 6 for cocked.
        off_tray: whether each die is labelled off the tray, shape (m,); None when unknown.
        tray: labelled tray corners in pixels, shape (k, 2), or None.
        occluded: dice too hidden or cut off to be read, shape (m,), scored like PASCAL
            VOC's "difficult" objects (see :func:`match_scored`); None when unknown.
        tilt_deg: how far each die's top face leans off vertical, shape (m,); None
            when unknown (generated scenes know it, photos do not).
    """

    xyxy: npt.NDArray[np.float32]
    classes: npt.NDArray[np.int64]
    off_tray: npt.NDArray[np.bool_] | None = None
    tray: npt.NDArray[np.float32] | None = None
    occluded: npt.NDArray[np.bool_] | None = None
    tilt_deg: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True)
class ScoredMatch:
    """A reading matched to its labels, with occluded dice set aside.

    Attributes:
        pairs: ``(prediction, label)`` pairs that count, both sides not ignored.
        labels: indices of the labels that count.
        predictions: indices of the predictions that count (those matched to an
            occluded die are neither right nor wrong, and are left out).
        ignored: how many labelled dice were set aside as occluded.
    """

    pairs: list[tuple[int, int]]
    labels: list[int]
    predictions: list[int]
    ignored: int


def match_scored(reading: Reading, labels: ImageLabels) -> ScoredMatch:
    """Match by centre, then set occluded dice aside: finding one is no error, missing one no miss."""
    pairs = match_by_centre(reading.xyxy, labels.xyxy)
    m = len(labels.classes)
    occluded = labels.occluded if labels.occluded is not None else np.zeros(m, bool)
    ignored_preds = {i for i, j in pairs if occluded[j]}
    return ScoredMatch(
        pairs=[(i, j) for i, j in pairs if not occluded[j]],
        labels=[j for j in range(m) if not occluded[j]],
        predictions=[i for i in range(len(reading)) if i not in ignored_preds],
        ignored=int(occluded.sum()),
    )


def ratio(num: int, den: int) -> float | None:
    """``num / den``, or None when there is nothing to divide (a metric that does not apply)."""
    return num / den if den else None


def f1(recall: float, precision: float) -> float:
    """The harmonic mean of recall and precision; 0 where both are 0."""
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


_COUNTS = (
    "images",
    "exact",
    "labels",
    "predictions",
    "matched",
    "face_correct",
    "cocked_tp",
    "cocked_labels",
    "cocked_preds",
    "cocked_rethrown",
    "off_tp",
    "off_labels",
    "off_preds",
    "ok_matched",
    "ok_correct",
    "flat_in_tray",
    "flat_ok_right",
    "uncertain",
    "ignored",
)


@dataclass
class FolderStats:
    """Running counts for one folder of labelled images; metrics are ratios of them."""

    images: int = 0
    exact: int = 0
    labels: int = 0
    predictions: int = 0
    matched: int = 0
    face_correct: int = 0
    cocked_tp: int = 0
    cocked_labels: int = 0
    cocked_preds: int = 0
    #: Labelled cocked dice the reading sends back to the throw (cocked, off the tray or unread).
    cocked_rethrown: int = 0
    off_tp: int = 0
    off_labels: int = 0
    off_preds: int = 0
    ok_matched: int = 0
    ok_correct: int = 0
    #: Labelled flat dice in the tray (not cocked, not off it), and those read ``ok`` with the right face.
    flat_in_tray: int = 0
    flat_ok_right: int = 0
    uncertain: int = 0
    ignored: int = 0
    off_labelled: bool = False
    latencies_ms: list[float] = field(default_factory=list)
    confusion: ConfusionMatrix = field(default_factory=ConfusionMatrix)
    #: Per :data:`LEAN_BANDS_DEG` band: labelled cocked dice with a known tilt, and those called cocked.
    lean_labels: list[int] = field(default_factory=lambda: [0] * len(LEAN_BANDS_DEG))
    lean_found: list[int] = field(default_factory=lambda: [0] * len(LEAN_BANDS_DEG))
    #: Per group of labelled dice (:data:`SIZE_BAND_NAMES`, ``"touching"``, ``"apart"``): dice, found, read right.
    groups: dict[str, list[int]] = field(default_factory=dict)

    def add(self, reading: Reading, labels: ImageLabels, latency_ms: float | None = None) -> bool:
        """Score one image; returns whether it was read exactly.

        Exactly: every die found and read right, and where the labels say which dice are
        off the tray, every one of them flagged ``off_tray`` and no other (a die off the
        tray must be thrown again, so missing the flag misreads the throw).
        """
        scored = match_scored(reading, labels)
        pred_cls = predicted_classes(reading)
        right = 0
        for i, j in scored.pairs:
            truth = int(labels.classes[j])
            self.confusion.add(truth, int(pred_cls[i]))
            right += int(pred_cls[i] == truth)
            is_ok = reading.status[i] == DieStatus.OK
            if is_ok:
                self.ok_matched += 1
                self.ok_correct += int(pred_cls[i] == truth)
            if truth != COCKED_CLASS and (labels.off_tray is None or not labels.off_tray[j]):
                self.flat_ok_right += int(is_ok and pred_cls[i] == truth)
            self.uncertain += int(reading.status[i] == DieStatus.UNCERTAIN)
        n, m, matched = len(scored.predictions), len(scored.labels), len(scored.pairs)
        p_off = reading.status == DieStatus.OFF_TRAY
        flags_right = labels.off_tray is None or all(p_off[i] == labels.off_tray[j] for i, j in scored.pairs)
        exact = right == m and n == m and matched == m and flags_right
        self.images += 1
        self.exact += int(exact)
        self.labels += m
        self.predictions += n
        self.matched += matched
        self.face_correct += right
        self.ignored += scored.ignored
        preds, labelled = np.array(scored.predictions, np.int64), np.array(scored.labels, np.int64)
        flat = labels.classes[labelled] != COCKED_CLASS
        if labels.off_tray is not None:
            flat &= ~labels.off_tray[labelled]
        self.flat_in_tray += int(flat.sum())  # a missed die is not read right: it counts here
        p_cocked = pred_cls == COCKED_CLASS
        g_cocked = labels.classes == COCKED_CLASS
        self.cocked_preds += int(p_cocked[preds].sum())
        self.cocked_labels += int(g_cocked[labelled].sum())
        self.cocked_tp += sum(1 for i, j in scored.pairs if p_cocked[i] and g_cocked[j])
        rethrown = reading.rethrow_mask | (reading.status == DieStatus.UNCERTAIN)  # thrown again, or looked at
        self.cocked_rethrown += sum(1 for i, j in scored.pairs if rethrown[i] and g_cocked[j])
        if labels.tilt_deg is not None:
            called = {j for i, j in scored.pairs if p_cocked[i]}
            for j in labelled[g_cocked[labelled]]:
                band = lean_band(float(labels.tilt_deg[j]))
                self.lean_labels[band] += 1
                self.lean_found[band] += int(j in called)
        if labels.off_tray is not None:
            self.off_labelled = True
            self.off_preds += int(p_off[preds].sum())
            self.off_labels += int(labels.off_tray[labelled].sum())
            self.off_tp += sum(1 for i, j in scored.pairs if p_off[i] and labels.off_tray[j])
        self._add_groups(labels, scored, pred_cls)
        if latency_ms is not None:
            self.latencies_ms.append(latency_ms)
        return exact

    def _add_groups(self, labels: ImageLabels, scored: ScoredMatch, pred_cls: npt.NDArray[np.int64]) -> None:
        """Count each labelled die in its size band and as touching another or apart."""
        found = {j: int(pred_cls[i]) for i, j in scored.pairs}
        bands, touches = size_band(labels.xyxy), touching(labels.xyxy)
        for j in scored.labels:
            for group in (SIZE_BAND_NAMES[int(bands[j])], "touching" if touches[j] else "apart"):
                counts = self.groups.setdefault(group, [0, 0, 0])
                counts[0] += 1
                counts[1] += int(j in found)
                counts[2] += int(found.get(j) == int(labels.classes[j]))

    def metrics(self) -> dict[str, float | int | None]:
        """Every metric; None where it does not apply (no labels of that kind)."""
        return {
            "images": self.images,
            "dice": self.labels,
            "face_accuracy": ratio(self.face_correct, self.matched),
            "exact_accuracy": ratio(self.exact, self.images),
            "ok_accuracy": ratio(self.ok_correct, self.ok_matched),
            # Dice scored with a wrong face (a leaning die scored counts too): the silent error.
            "ok_wrong": self.ok_matched - self.ok_correct,
            "flat_ok_right": ratio(self.flat_ok_right, self.flat_in_tray),
            "uncertain_rate": ratio(self.uncertain, self.matched),
            "recall": ratio(self.matched, self.labels),
            "ignored": self.ignored,
            "precision": ratio(self.matched, self.predictions),
            "cocked_recall": ratio(self.cocked_tp, self.cocked_labels),
            "cocked_precision": ratio(self.cocked_tp, self.cocked_preds),
            # The player's view of a leaning die: thrown again, whether as cocked or as a die to look at.
            "cocked_rethrown": ratio(self.cocked_rethrown, self.cocked_labels),
            "off_tray_recall": ratio(self.off_tp, self.off_labels) if self.off_labelled else None,
            "off_tray_precision": ratio(self.off_tp, self.off_preds) if self.off_labelled else None,
            "median_ms": float(np.median(self.latencies_ms)) if self.latencies_ms else None,
        }

    def by_group(self) -> dict[str, dict[str, float | int | None]]:
        """Recall and face accuracy (over the dice found) per die size band and for touching dice."""
        order = (*SIZE_BAND_NAMES, "touching", "apart")
        return {
            name: {"dice": n, "recall": ratio(found, n), "face_accuracy": ratio(right, found)}
            for name in order
            if name in self.groups
            for n, found, right in [self.groups[name]]
        }

    def cocked_recall_by_lean(self) -> dict[str, dict[str, float | int | None]]:
        """Cocked recall per lean band, where tilts are labelled: ``{band: {dice, found, recall}}``."""
        return {
            lean_band_name(k): {"dice": n, "found": f, "recall": ratio(f, n)}
            for k, (n, f) in enumerate(zip(self.lean_labels, self.lean_found, strict=True))
            if n
        }

    def merge(self, other: FolderStats) -> None:
        """Add another folder's counts (for a total over folders)."""
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.off_labelled = self.off_labelled or other.off_labelled
        self.lean_labels = [a + b for a, b in zip(self.lean_labels, other.lean_labels, strict=True)]
        self.lean_found = [a + b for a, b in zip(self.lean_found, other.lean_found, strict=True)]
        self.latencies_ms.extend(other.latencies_ms)
        self.confusion.merge(other.confusion)
        for name, counts in other.groups.items():
            mine = self.groups.setdefault(name, [0, 0, 0])
            for k, value in enumerate(counts):
                mine[k] += value
