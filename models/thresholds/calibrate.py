"""Pick the face classifier's logit bias for "cocked": ``python -m models.thresholds.calibrate DIR... [--write]``.

Training banks each cocked die many times over (they are rare in thrown scenes)
so that the network learns them; the price is a network that calls "cocked" too
readily at a real table. Logit adjustment (Menon et al., 2021) undoes a
training prior by adding a constant to that class's logit. The constant is
picked here, by trying a grid of values with the whole reader on labelled
scenes that were *neither trained on nor held out for evaluation* (generate a
fresh seed for it), keeping the one with the best cocked F1 (per-die accuracy
breaking ties). Per-die accuracy alone is the wrong target: while fewer than
half of the "cocked" calls are right, it improves by never calling a die
cocked, and a scorer that never asks for a rethrow lets illegal throws count.
F1 weighs a missed cocked die and a false alarm alike. ``--write`` stores the
offset in the model's ``logit_bias`` metadata, where
:class:`farklecam.vision.faces.classifier.FaceClassifier` applies it.

Example::

    python -m farklecam.datasets.synthetic --out data/calib_synth --count 400 --seed 11 --generator-version 1
    python -m farklecam.models.thresholds.calibrate data/calib_synth --models models --write
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from farklecam.models.evaluate.metrics import FolderStats, f1
from farklecam.models.training.onnx_metadata import set_metadata
from farklecam.vision.faces.classifier import COCKED_NAME, FaceClassifier
from farklecam.vision.reader import CLASSIFIER_FILE, DiceReader, ReaderConfig, default_model_dir

__all__ = ["DEFAULT_GRID", "calibrate", "main", "write_logit_bias"]

#: Cocked logit offsets tried by default.
DEFAULT_GRID = tuple(float(v) for v in np.arange(-3.0, 1.01, 0.5))


def _score(metrics: dict[str, Any]) -> tuple[float, float]:
    recall, precision = metrics.get("cocked_recall") or 0.0, metrics.get("cocked_precision") or 0.0
    return float(metrics.get("face_accuracy") or 0.0), f1(recall, precision)


def calibrate(
    model_dir: Path, folders: Sequence[Path], grid: Sequence[float] = DEFAULT_GRID
) -> tuple[float, list[dict[str, Any]]]:
    """Evaluate the reader with each cocked offset in ``grid``; returns the best and every row."""
    from farklecam.models.evaluate.run import evaluate_folder

    # The offset tunes the classifier's own cocked call, which the reader uses where the
    # cocked test does not run (no tray outline, or no cocked_test.onnx): so without it.
    config = ReaderConfig(cocked_test=False)
    base = DiceReader(model_dir, config=config)
    views = base.config.face_views  # calibrate the classifier as the reader runs it
    names = FaceClassifier(model_dir / CLASSIFIER_FILE).names
    if COCKED_NAME not in names:
        raise SystemExit(f"error: {model_dir / CLASSIFIER_FILE} has no {COCKED_NAME!r} class")
    rows: list[dict[str, Any]] = []
    for offset in grid:
        bias = [offset if name == COCKED_NAME else 0.0 for name in names]
        classifier = FaceClassifier(model_dir / CLASSIFIER_FILE, views=views, logit_bias=bias)
        reader = DiceReader(model_dir, classifier=classifier, config=config)
        reader = reader.with_detector(base.detector)
        total = FolderStats()
        for folder in folders:
            stats, _ = evaluate_folder(reader, folder)
            total.merge(stats)
        metrics = total.metrics()
        accuracy, f1 = _score(metrics)
        rows.append({"cocked_bias": offset, "face_accuracy": accuracy, "cocked_f1": f1, **_cocked(metrics)})
    best = max(rows, key=lambda r: (round(r["cocked_f1"], 6), r["face_accuracy"]))
    return float(best["cocked_bias"]), rows


def _cocked(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: metrics.get(k) for k in ("cocked_recall", "cocked_precision", "exact_accuracy")}


def write_logit_bias(model_path: Path, bias: Sequence[float]) -> None:
    """Store ``bias`` as the model's ``logit_bias`` metadata (replacing an earlier one)."""
    set_metadata(model_path, "logit_bias", json.dumps([round(float(b), 4) for b in bias]))


def main(argv: Sequence[str] | None = None) -> int:
    """Print the grid as a table; with ``--write`` store the best offset in the model."""
    parser = argparse.ArgumentParser(
        prog="python -m farklecam.models.thresholds.calibrate", description=__doc__.splitlines()[0]
    )
    parser.add_argument("dirs", nargs="+", type=Path, help="labelled YOLO folders set apart for calibration")
    parser.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    parser.add_argument("--grid", type=float, nargs="+", default=list(DEFAULT_GRID), help="cocked offsets to try")
    parser.add_argument("--write", action="store_true", help="store the best offset in face_classifier.onnx")
    args = parser.parse_args(argv)
    missing = [str(d) for d in args.dirs if not d.is_dir()]
    if missing:
        sys.stderr.write(f"error: not a folder: {', '.join(missing)}\n")
        return 2
    model_dir = args.models or default_model_dir()
    best, rows = calibrate(model_dir, args.dirs, args.grid)
    header = f"{'cocked bias':>11}  {'face acc':>8}  {'exact':>6}  {'cocked R':>8}  {'cocked P':>8}  {'cocked F1':>9}"
    lines = [header]
    for r in rows:
        rec, prec = r["cocked_recall"] or 0.0, r["cocked_precision"] or 0.0
        lines.append(
            f"{r['cocked_bias']:>11.2f}  {r['face_accuracy']:>8.4f}  {r['exact_accuracy'] or 0:>6.3f}  "
            f"{rec:>8.3f}  {prec:>8.3f}  {r['cocked_f1']:>9.3f}"
        )
    lines.append(f"best cocked bias: {best:+.2f}")
    if args.write:
        names = FaceClassifier(model_dir / CLASSIFIER_FILE).names
        write_logit_bias(model_dir / CLASSIFIER_FILE, [best if n == COCKED_NAME else 0.0 for n in names])
        lines.append(f"wrote logit_bias into {model_dir / CLASSIFIER_FILE}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
