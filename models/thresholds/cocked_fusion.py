"""Fit how the cocked test and the face classifier's ``cocked`` class are combined.

    python -m farklecam.models.thresholds.cocked_fusion data/calib_synth [--models DIR] [--write]

The two networks see a leaning die differently: the cocked test with "down"
known (the crop turned so the nadir lies below), the classifier in any
orientation but with its own view of the die's faces. Their mistakes are not
the same ones, so where the vertical is calibrated the reader combines them
(:class:`farklecam.vision.pose.cocked.CockedFusion`): a two-weight logistic regression on
their logits, fitted here by Newton's method (a few lines of numpy; no
library is needed for three parameters), with the threshold chosen by cocked
F1 as ``farklecam.models.training.cocked calibrate`` chooses the test's own.

The rows are what the reader sees at run time: every die the shipped detector
finds in the calibration scenes (never trained on, not a holdout), the tray
calibrated from the scene's sidecar, dice the support test would hold flat
never called. ``--write`` stores the fusion, naming the classifier it was
fitted with, in the cocked test's metadata.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.datasets.yolo import COCKED_CLASS, find_images
from farklecam.models.training.cocked import best_threshold, call_scores, mean_group_f1
from farklecam.models.training.onnx_metadata import set_metadata
from farklecam.vision.pose.cocked import FUSION_METADATA_KEY, FUSION_TERMS, CockedEvidence, CockedFusion, logit

__all__ = [
    "FusionRows",
    "collect_rows",
    "fit_fusion",
    "fit_logistic",
    "fusion_inputs",
    "out_of_fold",
    "refit",
    "write_fusion",
]


@dataclass(frozen=True)
class FusionRows:
    """One row per detected die.

    Attributes:
        test: the cocked test's probability.
        classifier: the face classifier's ``cocked`` probability.
        truth: 1 leaning, 0 lying flat, -1 no labelled die (a false alarm).
        folder: the index of the calibration folder each row comes from; None for one folder.
        evidence: what else the reader knows of each die (:class:`farklecam.vision.pose.cocked.CockedEvidence`).
        scene: the index of each row's scene within its folder (for folds); None where unknown.
    """

    test: npt.NDArray[np.float32]
    classifier: npt.NDArray[np.float32]
    truth: npt.NDArray[np.int64]
    folder: npt.NDArray[np.int64] | None = None
    evidence: CockedEvidence | None = None
    scene: npt.NDArray[np.int64] | None = None

    def __getitem__(self, index: npt.NDArray[np.bool_]) -> FusionRows:
        """Some of the rows (a boolean mask)."""
        return FusionRows(
            self.test[index],
            self.classifier[index],
            self.truth[index],
            None if self.folder is None else self.folder[index],
            None if self.evidence is None else self.evidence[index],
            None if self.scene is None else self.scene[index],
        )


def collect_rows(dirs: Sequence[Path], models: Path | None = None) -> FusionRows:
    """Run the shipped detector, classifier and cocked test on every scene with a sidecar tray."""
    from farklecam.models.evaluate.metrics import match_by_centre
    from farklecam.models.evaluate.run import load_labels
    from farklecam.vision.images import load_image
    from farklecam.vision.pose.upright import upright_view
    from farklecam.vision.reader import DiceReader

    reader = DiceReader(models)
    reader.fusion = None  # the fusion is fitted on the test's own probabilities
    test = reader.cocked_test
    if test is None:
        raise SystemExit("error: the model folder has no cocked test")
    cols: dict[str, list[npt.NDArray[np.generic]]] = {
        "test": [],
        "classifier": [],
        "truth": [],
        "folder": [],
        "scene": [],
    }
    evidence: list[CockedEvidence] = []
    for index, folder in enumerate(dirs):
        for scene_index, path in enumerate(find_images(folder)):
            frame = load_image(path)
            size = (frame.shape[1], frame.shape[0])
            labels = load_labels(path, *size)
            view = upright_view(labels.tray, size) if labels.tray is not None else None
            if view is None or labels.tray is None:
                continue
            found = reader.detector(frame)
            scores = reader.classifier(frame, found.xyxy)
            keep = ~scores.not_die
            xyxy, scores = found.xyxy[keep], scores[keep]
            if not len(xyxy):
                continue
            truth = np.full(len(xyxy), -1, np.int64)
            for i, j in match_by_centre(xyxy, labels.xyxy):
                occluded = labels.occluded is not None and bool(labels.occluded[j])
                truth[i] = -2 if occluded else int(labels.classes[j] == COCKED_CLASS)
            scored = truth != -2  # occluded dice are neither right nor wrong (as in farklecam.models.evaluate.run)
            cols["test"].append(test(frame, xyxy, view)[scored])
            cols["classifier"].append(scores.cocked_prob[scored])
            cols["truth"].append(truth[scored])
            cols["folder"].append(np.full(int(scored.sum()), index, np.int64))
            cols["scene"].append(np.full(int(scored.sum()), scene_index, np.int64))
            evidence.append(CockedEvidence.of(scores.face_probs, xyxy, view)[scored])
    if not cols["truth"]:
        raise SystemExit("error: no scene with a sidecar tray in " + ", ".join(map(str, dirs)))
    return FusionRows(
        test=np.concatenate(cols["test"]).astype(np.float32),
        classifier=np.concatenate(cols["classifier"]).astype(np.float32),
        truth=np.concatenate(cols["truth"]).astype(np.int64),
        folder=np.concatenate(cols["folder"]).astype(np.int64) if len(dirs) > 1 else None,
        evidence=CockedEvidence.concatenate(evidence),
        scene=np.concatenate(cols["scene"]).astype(np.int64),
    )


def fit_logistic(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], l2: float = 1e-2, steps: int = 50
) -> npt.NDArray[np.float64]:
    """Weights of ``sigmoid(x @ w)`` by Newton's method with a small L2 penalty (which keeps separable data finite).

    Args:
        x: (n, k) features; include a column of ones for a bias.
        y: (n,) targets in {0, 1}.
        l2: ridge penalty on every weight.
        steps: most Newton steps (it stops earlier once a step is below 1e-9).
    """
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + l2 * w
        hess = x.T @ (x * (p * (1.0 - p))[:, None]) + l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def fusion_inputs(rows: FusionRows, terms: Sequence[str] = ()) -> npt.NDArray[np.float64]:
    """The regression's columns: logit(test), logit(classifier), each of ``terms``, and ones for the bias."""
    t = logit(rows.test)
    columns = [t, logit(rows.classifier)]
    if terms:
        if rows.evidence is None:
            raise ValueError(f"the rows carry no evidence for the terms {list(terms)}")
        columns += [rows.evidence.term(name, t) for name in terms]
    return np.column_stack([*columns, np.ones(len(rows.truth))])


def fit_fusion(
    rows: FusionRows, classifier_sha: str, terms: Sequence[str] = ()
) -> tuple[CockedFusion, dict[str, float]]:
    """The fusion fitted on the labelled dice of ``rows``, its threshold the F1-best.

    The weights (of the two logits and of each of ``terms``, :data:`farklecam.vision.pose.cocked.FUSION_TERMS`)
    are fitted on every row. The threshold is the F1-best over every row, or, where the rows
    come from several calibration folders, the best mean of the folders' own F1
    (:func:`farklecam.models.training.cocked.best_threshold`).

    Returns:
        The fusion and its recall, precision and F1 on ``rows``.
    """
    dice = rows.truth >= 0
    x = fusion_inputs(rows, terms)
    w = fit_logistic(x[dice], rows.truth[dice].astype(np.float64))
    named = tuple((name, float(weight)) for name, weight in zip(terms, w[2:-1], strict=True))
    fusion = CockedFusion(float(w[0]), float(w[1]), float(w[-1]), 0.5, classifier_sha, named)
    fused = np.asarray(fusion(rows.test, rows.classifier, rows.evidence), np.float32)
    threshold, scores = best_threshold(fused, rows.truth == 1, rows.folder)
    return dataclasses.replace(fusion, threshold=threshold), scores


def out_of_fold(rows: FusionRows, terms: Sequence[str] = ()) -> dict[str, float]:
    """The fusion's calls where it never saw the scene: fitted on even scenes, scoring odd ones, and the reverse.

    More weights always fit their own rows a little better; this says whether they
    also call dice better on scenes they were not fitted on. Scores are over every
    row, with ``mean_f1`` (the folders' own F1, averaged) where the rows come from
    several folders.
    """
    if rows.scene is None:
        raise ValueError("the rows do not say which scene each comes from")
    called = np.zeros(len(rows.truth), bool)
    for parity in (0, 1):
        held = rows.scene % 2 == parity
        fusion, _ = fit_fusion(rows[~held], "", terms)
        part = rows[held]
        called[held] = fusion(part.test, part.classifier, part.evidence) >= fusion.threshold
    truth = rows.truth == 1
    scores = call_scores(called, truth)
    if rows.folder is not None:
        scores["mean_f1"] = mean_group_f1(called, truth, rows.folder)
    return scores


def refit(
    folder: Path, dirs: Sequence[Path], terms: Sequence[str] | None = None
) -> tuple[CockedFusion, dict[str, Any]]:
    """Fit the fusion of ``folder``'s cocked test and classifier on calibration scenes; the fusion and a report.

    ``terms`` are the evidence weighed beyond the two logits; None keeps those of the
    folder's present fusion (none if it has none), so a refit after swapping a network
    keeps the fusion's shape.

    The report holds the dice, leaning dice and false alarms seen, the test alone at
    its own threshold, the fused call (weights, threshold, scores) and the same recipe
    out of fold (:func:`out_of_fold`), beside the two-logit fusion's where ``terms``
    are weighed.
    """
    from farklecam.vision.onnx_runtime import load_onnx
    from farklecam.vision.reader import CLASSIFIER_FILE, COCKED_TEST_FILE

    sha = str(load_onnx(folder / CLASSIFIER_FILE).metadata.get("train_config_sha", ""))
    test_model = load_onnx(folder / COCKED_TEST_FILE)
    test_threshold = float(test_model.metadata.get("threshold", 0.5))
    if terms is None:
        present = test_model.metadata.get(FUSION_METADATA_KEY)
        terms = [] if present is None else [n for n, _ in CockedFusion.from_metadata(present, folder).terms]
    rows = collect_rows(dirs, folder)
    fusion, fused = fit_fusion(rows, sha, terms)
    alone = rows.test >= test_threshold
    report = {
        "dice": int((rows.truth >= 0).sum()),
        "leaning": int((rows.truth == 1).sum()),
        "false_alarms": int((rows.truth < 0).sum()),
        "test_alone": {"threshold": test_threshold, **call_scores(alone, rows.truth == 1)},
        "fused": {**json.loads(fusion.to_json()), **fused},
        "out_of_fold": out_of_fold(rows, terms),
    }
    if terms:
        report["out_of_fold_two_logits"] = out_of_fold(rows)
    return fusion, report


def write_fusion(folder: Path, fusion: CockedFusion) -> None:
    """Store ``fusion`` in the metadata of ``folder``'s cocked test (it names the classifier it was fitted with)."""
    from farklecam.vision.reader import COCKED_TEST_FILE

    set_metadata(folder / COCKED_TEST_FILE, FUSION_METADATA_KEY, fusion.to_json())


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: fit, print the fusion against the test alone, and optionally store it."""
    from farklecam.vision.reader import default_model_dir

    ap = argparse.ArgumentParser(
        prog="python -m farklecam.models.thresholds.cocked_fusion", description=__doc__.splitlines()[0]
    )
    ap.add_argument("dirs", type=Path, nargs="+", help="folders of generated scenes set apart for calibration")
    ap.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    ap.add_argument("--write", action="store_true", help="store the fusion in the folder's cocked test")
    ap.add_argument(
        "--terms",
        default=None,
        help=f"comma-separated evidence to weigh beyond the two logits, of {', '.join(FUSION_TERMS)}; "
        "'none' for the two logits alone (default: those of the present fusion)",
    )
    args = ap.parse_args(argv)
    folder = args.models or default_model_dir()
    terms = None
    if args.terms is not None:
        terms = [] if args.terms == "none" else [t.strip() for t in args.terms.split(",") if t.strip()]
        unknown = sorted(set(terms) - set(FUSION_TERMS))
        if unknown:
            ap.error(f"unknown --terms {unknown}; expected some of {', '.join(FUSION_TERMS)}")
    fusion, report = refit(folder, args.dirs, terms)
    print(json.dumps(report, indent=2))  # noqa: T201
    if args.write:
        write_fusion(folder, fusion)
    return 0


if __name__ == "__main__":
    sys.exit(main())
