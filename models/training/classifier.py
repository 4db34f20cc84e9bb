"""The face classifier: a tiny CNN that reads the top face (or "cocked") from a 64x64 die crop.

It learns from a bank of crops of real and generated dice (:mod:`farklecam.models.bank.crop_bank`:
cut as at run time, around jittered and detected boxes, with "not_die" crops of
the detector's false alarms), turned by any angle on 70 % of the samples
(a die face is rotation-invariant up to the orientation of 2, 3 and 6, which
any-angle turns cover, and mirror-symmetric, so flips are safe too), given
marble streaks and motion blur on a share of them, and the shared photometric
augmentation (:mod:`farklecam.models.training.facenet`). At run time the reader drops a detection
the classifier calls "not_die" (see :mod:`farklecam.vision.faces.classifier`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from farklecam.models.bank.crop_bank import CLASSIFIER_NAMES, CropBank, centre_crops, turned_centres
from farklecam.models.bank.marbling import add_streaks
from farklecam.models.bank.motion_blur import add_motion_blur
from farklecam.models.training.classifier_config import ClassifierConfig
from farklecam.models.training.facenet import FaceNet, augment, fit, scaled_widths, to_tensor

__all__ = ["evaluate", "train_classifier"]


def _turn_some(crops: npt.NDArray[np.uint8], rng: np.random.Generator, p: float) -> npt.NDArray[np.uint8]:
    """Turn a share ``p`` of the banked crops by any angle (the rest stay as cut); the run-time crops."""
    angles = np.full(len(crops), np.nan)
    chosen = np.flatnonzero(rng.random(len(crops)) < p)
    angles[chosen] = rng.uniform(0, 360, len(chosen))
    return turned_centres(crops, angles)


def train_classifier(
    bank: CropBank, config: ClassifierConfig, log: Callable[[str], None] | None = None
) -> tuple[FaceNet, dict[str, float]]:
    """Train :class:`FaceNet` on a crop bank with augmentation; returns the model and run stats."""
    torch.manual_seed(config.seed)
    model = FaceNet(num_classes=len(CLASSIFIER_NAMES), widths=scaled_widths(config.width), head_grid=config.head_grid)
    # Streaks and smears draw from their own streams, so the batches, turns and
    # photometric draws stay those of the same recipe without them.
    streak_rng = np.random.default_rng([config.seed, 1])
    smear_rng = np.random.default_rng([config.seed, 2])

    def batch(idx: npt.NDArray[np.intp], rng: np.random.Generator, gen: torch.Generator) -> torch.Tensor:
        crops = add_streaks(_turn_some(bank.crops[idx], rng, p=0.7), streak_rng, config.streaks)
        crops = add_motion_blur(crops, smear_rng, config.motion_blur)
        return augment(to_tensor(crops), gen)

    return fit(model, bank.labels, batch, config, log)


@torch.no_grad()
def evaluate(model: nn.Module, bank: CropBank) -> dict[str, dict[str, float]]:
    """Accuracy of exact (unrotated, unaugmented) crops, per source: ``{source: {accuracy, crops}}``."""
    model.eval()
    pred = (
        np.concatenate(
            [
                model(to_tensor(centre_crops(bank.crops[i : i + 512]))).argmax(1).numpy()
                for i in range(0, len(bank.labels), 512)
            ]
        )
        if len(bank.labels)
        else np.zeros(0, np.int64)
    )
    out: dict[str, dict[str, float]] = {}
    sources = np.array(bank.sources)
    for source in sorted(set(bank.sources)):
        mask = sources == source
        out[source] = {"accuracy": float((pred[mask] == bank.labels[mask]).mean()), "crops": float(mask.sum())}
    return out
