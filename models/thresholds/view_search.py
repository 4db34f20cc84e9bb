"""Choose when to trust the view search (:mod:`vision.pose.view_search`): ``python -m models.thresholds.view_search``.

Without a calibrated tray the reader searches for the camera's vertical that
lays the dice flat, and then trusts the cocked call only where the dice agree
clearly (``max_score``) and only when it is confident (``threshold``). Both are
chosen here, on data the deciding networks never trained on:

* real photos: every die in them lies flat, so every cocked call is false. The
  cocked test learned from generated scenes alone, and real dice look
  different to it: a gate that calls none of them cocked keeps the reader's
  real-photo accuracy. For the test alone these are the real *training*
  photos (:func:`farklecam.datasets.real.split`). The fused call (the test with the face
  classifier, :class:`farklecam.vision.pose.cocked.CockedFusion`) also hears the classifier,
  which did train on them; it is judged on the *validation* photos
  (``--real validation``) with a classifier trained without them
  (``python -m farklecam.models.training --hold-validation``) and its own fusion;
* calibration scenes (generated, neither trained on nor held out): their
  leaning dice give recall and precision.

Labelled boxes stand in for the detector's, so the gate is judged apart from
detection. Prints one row per kind of call (``test``, and ``fused`` where the
folder's fusion names its classifier), ``max_score`` and ``threshold``.

Example::

    python -m farklecam.models.thresholds.view_search data/calib_synth
    python -m farklecam.models.thresholds.view_search data/calib_synth --models runs/cls10A_out --real validation
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.models.training.cocked import LabelledScene, labelled_scenes
from farklecam.vision.pose.cocked import CockedTest
from farklecam.vision.pose.upright import UprightView
from farklecam.vision.pose.view_search import ViewSearchConfig, search_view
from farklecam.vision.reader import COCKED_TEST_FILE

__all__ = ["GateCounts", "SearchRow", "estimates", "gate_counts", "gate_table", "main"]

MAX_SCORES = (1.0, 0.1, 0.05, 0.03)
THRESHOLDS = (0.8, 0.9, 0.95, 0.98)
FUSED_THRESHOLDS = (0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)

#: The classifier's and fusion's say in a frame: (picture, boxes, test probabilities, searched vertical) -> fused.
Fuse = Callable[
    [npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.float32], UprightView], npt.NDArray[np.float32]
]


@dataclass(frozen=True)
class SearchRow:
    """One searched frame: how well the dice agreed, each die's cocked probabilities, and the truth.

    Attributes:
        score: the search's score (lower: the dice agree better on a flat vertical).
        test: the cocked test's probability per die under the vertical found.
        fused: the same fused with the face classifier's, or None without a fusion.
        truth: which dice lean.
    """

    score: float
    test: npt.NDArray[np.float32]
    fused: npt.NDArray[np.float32] | None
    truth: npt.NDArray[np.bool_]

    def gate_row(self, call: str) -> tuple[float, npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """``(score, probabilities, truth)`` of one kind of call (``"test"`` or ``"fused"``) for :func:`gate_counts`."""
        probs = self.fused if call == "fused" else self.test
        if probs is None:
            raise ValueError("this row has no fused probabilities")
        return self.score, probs, self.truth


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
    test: CockedTest, frames: Iterable[LabelledScene], cfg: ViewSearchConfig, fuse: Fuse | None = None
) -> list[SearchRow]:
    """One row per frame with enough dice to search (``fuse`` adds the fused probabilities)."""
    rows = []
    for frame in frames:
        estimate = search_view(test, frame.image, frame.boxes, cfg)
        if estimate is not None:
            probs = estimate.probabilities
            fused = None if fuse is None else fuse(frame.image, frame.boxes, probs, estimate.view)
            rows.append(SearchRow(estimate.score, probs, fused, frame.cocked))
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


def _real_frames(part: str) -> Iterator[LabelledScene]:
    """The real photos of one part of the training photos (``training``: all; ``validation``: that slice)."""
    from farklecam.datasets.real import SOURCES, split, validation_split
    from farklecam.vision.images import load_image

    for source in SOURCES:
        photos = validation_split(source)[1] if part == "validation" else split(source)[0]
        for im in photos:
            boxes = np.asarray(im.boxes, np.float32).reshape(-1, 4)
            yield LabelledScene(im.path, load_image(im.path), boxes, np.zeros(len(boxes), bool))


def _fuse(folder: Path, test: CockedTest) -> Fuse | None:
    """The folder's classifier and fusion as a :data:`Fuse`, where the fusion was fitted with that classifier."""
    from farklecam.vision.faces.classifier import FaceClassifier
    from farklecam.vision.reader import CLASSIFIER_FILE, fusion_for

    classifier = FaceClassifier(folder / CLASSIFIER_FILE)
    fusion = fusion_for(test, classifier)
    if fusion is None:
        return None

    def fuse(
        image: npt.NDArray[np.uint8], boxes: npt.NDArray[np.float32], probs: npt.NDArray[np.float32], view: UprightView
    ) -> npt.NDArray[np.float32]:
        return fusion.in_frame(probs, classifier(image, boxes), boxes, view)

    return fuse


def gate_table(
    folder: Path, dirs: Sequence[Path], real: str = "training", gates: Sequence[tuple[str, float, float]] | None = None
) -> list[dict[str, Any]]:
    """The gate's calls with ``folder``'s models: one row per kind of call, ``max_score`` and ``threshold``.

    Args:
        folder: the model folder.
        dirs: calibration scenes (their leaning dice give recall and precision).
        real: which real photos' flat dice count false calls (``training`` or ``validation``).
        gates: ``(call, max_score, threshold)`` to report; None reports the whole grid
            (``fused`` rows only where the folder's fusion names its classifier).
    """
    test, cfg = CockedTest(folder / COCKED_TEST_FILE), ViewSearchConfig()
    fuse = _fuse(folder, test)
    real_rows = estimates(test, _real_frames(real), cfg, fuse)
    scene_rows = estimates(test, labelled_scenes(dirs), cfg, fuse)
    if gates is None:
        # The fused call decides at the fusion's own threshold (farklecam.vision.reader): always on the grid.
        fused = tuple(sorted({*FUSED_THRESHOLDS, test.fusion.threshold})) if test.fusion else FUSED_THRESHOLDS
        kinds = [("test", THRESHOLDS)] + ([("fused", fused)] if fuse is not None else [])
        gates = [(kind, m, t) for kind, thresholds in kinds for m in MAX_SCORES for t in thresholds]
    by_kind = {
        kind: ([row.gate_row(kind) for row in real_rows], [row.gate_row(kind) for row in scene_rows])
        for kind in dict.fromkeys(kind for kind, _, _ in gates)
    }
    table = []
    for kind, max_score, threshold in gates:
        r = gate_counts(by_kind[kind][0], max_score, threshold)
        s = gate_counts(by_kind[kind][1], max_score, threshold)
        table.append(
            {
                "call": kind,
                "max_score": max_score,
                "threshold": threshold,
                "real": real,
                "real_dice": r.dice,
                "real_false_calls": r.false_calls,
                "scene_dice": s.dice,
                "scene_recall": round(s.recall, 3),
                "scene_precision": round(s.precision, 3),
            }
        )
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the gate table as JSON lines."""
    from farklecam.vision.reader import default_model_dir

    ap = argparse.ArgumentParser(
        prog="python -m farklecam.models.thresholds.view_search", description=__doc__.splitlines()[0]
    )
    ap.add_argument("dirs", type=Path, nargs="+", help="folders of generated scenes set apart for calibration")
    ap.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    ap.add_argument(
        "--real",
        choices=("training", "validation"),
        default="training",
        help="real photos whose flat dice count false calls (validation: for a --hold-validation classifier)",
    )
    args = ap.parse_args(argv)
    for row in gate_table(args.models or default_model_dir(), args.dirs, args.real):
        print(json.dumps(row))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
