"""Tilt error of a pose network beside the reader's figures: ``python -m farklecam.vision.evaluate --pose-model``.

Issue 30 judges the pose network (:mod:`farklecam.vision.pose.net`) by the mean absolute error of
``tilt_deg`` on flat and on leaning dice, in worlds it never trained in. The evaluator
already reads every labelled scene with the real reader; this module measures the pose
network on the same dice the reader found (its boxes, matched to the labels by centre),
so the tilt figures and the reader's come from one run on one set of boxes. Only scenes
whose sidecars give each die's tilt count (generated ones; photos have no tilt labels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from farklecam.vision.evaluate.metrics import LEAN_BANDS_DEG, ImageLabels, match_by_centre

__all__ = ["TiltErrors"]


@dataclass
class TiltErrors:
    """Running tilt errors over matched dice, split at the generator's leaning threshold.

    A die counts as leaning past :data:`farklecam.vision.evaluate.metrics.LEAN_BANDS_DEG`'s first edge
    (15 degrees: the generators' own label), as the pose network's trainer splits it.
    """

    flat_err: list[float] = field(default_factory=list)
    lean_err: list[float] = field(default_factory=list)
    #: Matched dice whose tilt the network could not tell (no table normal: no tray, no consensus).
    unknown: int = 0

    def add(self, tilt_deg: npt.ArrayLike, xyxy: npt.ArrayLike, labels: ImageLabels) -> None:
        """Score one image: ``tilt_deg`` (n,) measured for the boxes ``xyxy`` (n, 4), NaN where unknown.

        Dice the labels mark occluded are left out (as the reader's scoring sets them aside);
        an image without tilt labels adds nothing.
        """
        if labels.tilt_deg is None:
            return
        tilt = np.asarray(tilt_deg, np.float64).reshape(-1)
        occluded = labels.occluded if labels.occluded is not None else np.zeros(len(labels.classes), bool)
        for i, j in match_by_centre(xyxy, labels.xyxy):
            if occluded[j]:
                continue
            if np.isnan(tilt[i]):
                self.unknown += 1
                continue
            truth = float(labels.tilt_deg[j])
            (self.lean_err if truth > LEAN_BANDS_DEG[0] else self.flat_err).append(abs(float(tilt[i]) - truth))

    def metrics(self) -> dict[str, float | int | None]:
        """``tilt_mae_flat``, ``tilt_mae_leaning`` (degrees; None with no such dice), the dice behind them."""
        return {
            "tilt_mae_flat": float(np.mean(self.flat_err)) if self.flat_err else None,
            "tilt_mae_leaning": float(np.mean(self.lean_err)) if self.lean_err else None,
            "tilt_flat_dice": len(self.flat_err),
            "tilt_leaning_dice": len(self.lean_err),
            "tilt_unknown": self.unknown,
        }

    def merge(self, other: TiltErrors) -> None:
        """Add another folder's errors (for a total over folders)."""
        self.flat_err.extend(other.flat_err)
        self.lean_err.extend(other.lean_err)
        self.unknown += other.unknown
