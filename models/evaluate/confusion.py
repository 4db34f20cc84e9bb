"""A confusion matrix of die classes, printable as text and drawable as a PNG with OpenCV."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["CLASS_LABELS", "ConfusionMatrix"]

#: Row and column names: faces 1-6, then cocked (the YOLO class ids 0-6).
CLASS_LABELS: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", "cocked")


class ConfusionMatrix:
    """Counts of (labelled class, predicted class) over matched dice.

    Rows are the labels, columns the predictions, both in :data:`CLASS_LABELS` order.
    A prediction with no class (a die found but not read) is counted in ``unread``.
    """

    def __init__(self, labels: Sequence[str] = CLASS_LABELS) -> None:
        self.labels = tuple(labels)
        k = len(self.labels)
        self.counts: npt.NDArray[np.int64] = np.zeros((k, k), np.int64)
        self.unread: npt.NDArray[np.int64] = np.zeros(k, np.int64)

    def add(self, truth: int, predicted: int) -> None:
        """Count one matched die; ``predicted`` < 0 means found but not read."""
        if predicted < 0:
            self.unread[truth] += 1
        else:
            self.counts[truth, predicted] += 1

    def merge(self, other: ConfusionMatrix) -> None:
        """Add another matrix's counts to this one."""
        self.counts += other.counts
        self.unread += other.unread

    def text(self) -> str:
        """The matrix as a plain table (rows: label, columns: predicted)."""
        width = max(6, *(len(s) for s in self.labels)) + 1
        head = "label\\pred".ljust(11) + "".join(s.rjust(width) for s in self.labels) + "unread".rjust(width)
        rows = [head]
        for i, name in enumerate(self.labels):
            cells = "".join(str(v).rjust(width) for v in self.counts[i]) + str(self.unread[i]).rjust(width)
            rows.append(name.ljust(11) + cells)
        return "\n".join(rows)

    def to_dict(self) -> dict[str, object]:
        """JSON form: labels, counts (rows: label) and unread per label."""
        return {"labels": list(self.labels), "counts": self.counts.tolist(), "unread": self.unread.tolist()}

    def image(self, cell: int = 56, title: str = "") -> npt.NDArray[np.uint8]:
        """The matrix drawn as a BGR image: cells shaded by row share, counts written in."""
        k = len(self.labels)
        margin, top = 80, 70 if title else 50
        h, w = top + k * cell + 20, margin + (k + 1) * cell + 20
        img = np.full((h, w, 3), 255, np.uint8)
        font = cv2.FONT_HERSHEY_SIMPLEX
        if title:
            cv2.putText(img, title, (10, 22), font, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
        full = np.concatenate([self.counts, self.unread[:, None]], axis=1)
        share = full / np.maximum(full.sum(axis=1, keepdims=True), 1)
        names = [*self.labels, "unread"]
        for j, name in enumerate(names):
            cv2.putText(img, name[:6], (margin + j * cell + 4, top - 8), font, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
        cv2.putText(
            img, "rows: label, columns: predicted", (margin, top - 30), font, 0.45, (80, 80, 80), 1, cv2.LINE_AA
        )
        for i in range(k):
            y = top + i * cell
            cv2.putText(img, self.labels[i][:6], (8, y + cell // 2 + 5), font, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
            for j in range(k + 1):
                x = margin + j * cell
                s = float(share[i, j])
                good = i == j
                # Diagonal cells shade blue, mistakes red (boosted: a few percent must show).
                e = min(1.0, 0.15 + 3.0 * s) if s > 0 else 0.0
                color = (255, 255 - 155 * s, 255 - 200 * s) if good else (255 - 200 * e, 255 - 200 * e, 255)
                cv2.rectangle(img, (x, y), (x + cell, y + cell), tuple(int(c) for c in color), -1)
                cv2.rectangle(img, (x, y), (x + cell, y + cell), (200, 200, 200), 1)
                text = str(int(full[i, j]))
                (tw, th), _ = cv2.getTextSize(text, font, 0.5, 1)
                ink = (255, 255, 255) if (s if good else e) > 0.6 else (0, 0, 0)
                org = (x + (cell - tw) // 2, y + (cell + th) // 2)
                cv2.putText(img, text, org, font, 0.5, ink, 1, cv2.LINE_AA)
        return img

    def write_png(self, path: str | Path, title: str = "") -> Path:
        """Write :meth:`image` to ``path`` (creating its folder)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        if not cv2.imwrite(str(p), self.image(title=title)):
            raise OSError(f"cannot write {p}")
        return p
