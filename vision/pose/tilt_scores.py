"""From measured tilts to the reader's cocked calls: where the pose network can tell, its tilt decides.

The reader's face classifier also reads a "cocked" class from the crop alone, which does
not know which way is down. Where the pose network measured a die's tilt
(:mod:`farklecam.vision.pose.net`), the :class:`~farklecam.vision.pose.tilt.TiltCall` replaces that guess:
past the band the die is cocked, inside it uncertain (its best face kept for a person to
confirm), below it flat with its best face. Where the tilt is unknown (no marked tray and
no consensus of the dice) the classifier's own call stands, as it did before any vertical
was known.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from farklecam.vision.faces.classifier import FaceScores
from farklecam.vision.pose.tilt import TiltCall

__all__ = ["TILT_COCKED_CONFIDENCE", "tilt_scores"]

#: The confidence a die called cocked by its tilt is read with: the call is a measurement past a
#: band that already holds the doubtful tilts, so it passes any ``cocked_min_conf``.
TILT_COCKED_CONFIDENCE = 1.0


def tilt_scores(
    scores: FaceScores, tilt_deg: npt.ArrayLike, call: TiltCall
) -> tuple[FaceScores, npt.NDArray[np.bool_]]:
    """The scores with each measured die's cocked call taken from its tilt.

    Args:
        scores: the face classifier's scores for the frame's dice.
        tilt_deg: each die's measured tilt (n,), NaN where unknown.
        call: the threshold and band.

    Returns:
        ``(scores, in_band)``: the new scores, and which dice lie in the band (to read
        ``uncertain`` whatever their face's confidence).
    """
    tilt = np.asarray(tilt_deg, np.float64).reshape(-1)
    known = ~np.isnan(tilt)
    cocked = np.where(known, call.cocked(tilt), scores.cocked)
    prob = np.where(known & cocked, TILT_COCKED_CONFIDENCE, scores.cocked_prob).astype(np.float32)
    in_band: npt.NDArray[np.bool_] = known & call.uncertain(tilt)
    return scores.with_cocked(cocked, prob), in_band
