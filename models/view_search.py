"""Choose when to trust the view search (:mod:`vision.view_search`): ``python -m models.view_search``.

Without a calibrated tray the reader searches for the camera's vertical that
lays the dice flat, and then trusts the cocked test only where the dice agree
clearly (``max_score``) and only for a confident call (``threshold``). Both are
chosen here, on data the cocked test never trained on:

* the real photos' *training* part (:func:`datasets.real.split`): every die in
  them lies flat, so every cocked call is false. The cocked test learned from
  generated scenes alone, and real dice look different to it: a gate that
  calls none of them cocked keeps the reader's real-photo accuracy;
* calibration scenes (generated, neither trained on nor held out): their
  leaning dice give recall and precision.

Labelled boxes stand in for the detector's, so the gate is judged apart from
detection. Prints one row per (``max_score``, ``threshold``) pair.

Example::

    python -m models.view_search data/calib_synth
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models.cocked import LabelledScene, labelled_scenes
from vision.cocked import CockedTest
from vision.view_search import ViewSearchConfig, search_view

__all__ = ["GateCounts", "estimates", "gate_counts", "main"]

MAX_SCORES = (1.0, 0.1, 0.05, 0.03)
THRESHOLDS = (0.8, 0.9, 0.95, 0.98)


@dataclass(frozen=True)
class GateCounts:
    """Cocked calls of one gate over one set of frames."""

    dice: int
    true_calls: int
    false_calls: int
    missed: int

    @property
    def recall(self) -> float:
        """Leaning dice called cocked."""
        return self.true_calls / max(1, self.true_calls + self.missed)

    @property
    def precision(self) -> float:
        """Cocked calls that were right."""
        return self.true_calls / max(1, self.true_calls + self.false_calls)


def estimates(
    test: CockedTest, frames: Iterable[LabelledScene], cfg: ViewSearchConfig
) -> list[tuple[float, npt.NDArray[np.float32], npt.NDArray[np.bool_]]]:
    """Per frame with enough dice: the search's score, each die's cocked probability, and the truth."""
    rows = []
    for frame in frames:
        estimate = search_view(test, frame.image, frame.boxes, cfg)
        if estimate is not None:
            rows.append((estimate.score, estimate.probabilities, frame.cocked))
    return rows


def gate_counts(
    rows: Sequence[tuple[float, npt.NDArray[np.float32], npt.NDArray[np.bool_]]], max_score: float, threshold: float
) -> GateCounts:
    """What the reader would call with this gate: cocked where trusted and confident, else nothing."""
    true_calls = false_calls = missed = dice = 0
    for score, probs, truth in rows:
        called = probs >= threshold if score <= max_score else np.zeros(len(probs), bool)
        true_calls += int((called & truth).sum())
        false_calls += int((called & ~truth).sum())
        missed += int((~called & truth).sum())
        dice += len(probs)
    return GateCounts(dice, true_calls, false_calls, missed)


def _real_training_frames() -> Iterator[LabelledScene]:
    from datasets.real import SOURCES, split
    from vision.images import load_image

    for source in SOURCES:
        train, _holdout = split(source)
        for im in train:
            boxes = np.asarray(im.boxes, np.float32).reshape(-1, 4)
            yield LabelledScene(im.path, load_image(im.path), boxes, np.zeros(len(boxes), bool))


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the gate table as JSON lines."""
    ap = argparse.ArgumentParser(prog="python -m models.view_search", description=__doc__.splitlines()[0])
    ap.add_argument("dirs", type=Path, nargs="+", help="folders of generated scenes set apart for calibration")
    ap.add_argument("--model", type=Path, default=Path(__file__).with_name("cocked_test.onnx"))
    args = ap.parse_args(argv)
    test, cfg = CockedTest(args.model), ViewSearchConfig()
    real = estimates(test, _real_training_frames(), cfg)
    scenes = estimates(test, labelled_scenes(args.dirs), cfg)
    for max_score in MAX_SCORES:
        for threshold in THRESHOLDS:
            r, s = gate_counts(real, max_score, threshold), gate_counts(scenes, max_score, threshold)
            row = {
                "max_score": max_score,
                "threshold": threshold,
                "real_dice": r.dice,
                "real_false_calls": r.false_calls,
                "scene_dice": s.dice,
                "scene_recall": round(s.recall, 3),
                "scene_precision": round(s.precision, 3),
            }
            print(json.dumps(row))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
