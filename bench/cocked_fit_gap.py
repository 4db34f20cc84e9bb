"""Does the cocked test memorise its crops? Its F1 on the scenes it trained on against scenes it never saw.

    python bench/cocked_fit_gap.py [--model FILE] [--train DIR...] [--calib DIR...] [--limit N]

Reads every visible labelled die through its labelled box (the test alone, not the
detector's boxes: :func:`farklecam.models.training.cocked.labelled_box_probs`) in three kinds of scenes:
the training part of each training folder (what the test was fitted on), the held-out
part of the same folders (same renderer settings, never trained on), and the calibration
folders. Prints, per folder and part, the dice, the leaning ones and the best-threshold
cocked F1 with its recall and precision. A test that reads its training part far better
than the held-out part has memorised crops rather than learned what leaning looks like;
the gap between the held-out part and the calibration folders is the gap between
renderer recipes. ``--limit`` takes that many scenes per part: a spread-out, fixed subset of a
training folder's part, the first by name of a calibration folder.

With ``--sheets DIR`` it also draws, for each calibration folder, the leaning dice the
test missed and the flat dice it called cocked at that row's threshold
(``DIR/<folder>_missed.jpg``, ``DIR/<folder>_false.jpg``): each die at twice its box's
side, with its cocked probability and, from the scene's sidecar, its tilt in degrees.
Whether a person could tell those dice apart is the question the table cannot answer.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.datasets.training_sets import synthetic_paths
from farklecam.datasets.yolo import find_images
from farklecam.models.training.cocked import BoxReads, best_threshold, labelled_box_probs, read_sidecar
from farklecam.vision.pose.cocked import CockedTest
from farklecam.vision.reader import default_model_dir

TRAIN = ("data/synth", "data/synth_lean", "data/synth_v2")
CALIB = ("data/calib_synth", "data/calib_lean")

#: Tiles per sheet row, tile side in pixels, and at most this many dice per sheet.
SHEET_COLUMNS, TILE, SHEET_MAX = 8, 160, 48


def _tile(path: Path, box: npt.NDArray[np.float32], die: int, prob: float) -> npt.NDArray[np.uint8]:
    """The die at twice its box's side around its centre, labelled with its probability and tilt."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy, half = (x1 + x2) / 2, (y1 + y2) / 2, max(x2 - x1, y2 - y1)
    h, w = image.shape[:2]
    cut = image[max(0, int(cy - half)) : min(h, int(cy + half)), max(0, int(cx - half)) : min(w, int(cx + half))]
    tile = cv2.resize(cut, (TILE, TILE), interpolation=cv2.INTER_AREA)
    tilt = read_sidecar(path)["dice"][die]["tilt_deg"]
    text = f"p {prob:.2f}  tilt {tilt:.0f}"
    cv2.putText(tile, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 255, 255), 1, cv2.LINE_AA)
    return tile


def write_sheet(reads: BoxReads, rows: npt.NDArray[np.intp], out: Path) -> None:
    """A grid of the dice at ``rows`` (at most :data:`SHEET_MAX`), or nothing where there are none."""
    tiles = [
        _tile(reads.paths[i], reads.boxes[i], int(reads.index[i]), float(reads.probs[i])) for i in rows[:SHEET_MAX]
    ]
    if not tiles:
        return
    tiles += [np.zeros_like(tiles[0])] * (-len(tiles) % SHEET_COLUMNS)
    grid = [np.hstack(tiles[i : i + SHEET_COLUMNS]) for i in range(0, len(tiles), SHEET_COLUMNS)]
    cv2.imwrite(str(out), np.vstack(grid), [cv2.IMWRITE_JPEG_QUALITY, 85])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=default_model_dir() / "cocked_test.onnx")
    ap.add_argument("--train", type=Path, nargs="*", default=[Path(p) for p in TRAIN])
    ap.add_argument("--calib", type=Path, nargs="*", default=[Path(p) for p in CALIB])
    ap.add_argument("--limit", type=int, default=400, help="scenes per folder and part (default 400)")
    ap.add_argument("--sheets", type=Path, help="draw each calibration folder's missed and false calls here")
    args = ap.parse_args(argv)
    if not args.model.is_file():
        ap.error(f"no cocked test at {args.model}")
    test = CockedTest(args.model)
    parts: list[tuple[str, str, list[Path]]] = []
    for folder in args.train:
        for part, holdout in (("trained-on", False), ("held-out", True)):
            parts.append((folder.name, part, synthetic_paths(folder, args.limit, holdout=holdout)))
    parts += [(folder.name, "calibration", sorted(find_images(folder))[: args.limit]) for folder in args.calib]
    print(f"cocked test {args.model}, labelled boxes, best threshold per row")
    print(f"{'folder':<15} {'part':<12}{'dice':>6}{'leaning':>9}{'thr':>6}{'F1':>7}{'R':>7}{'P':>7}")
    for folder, part, paths in parts:
        reads = labelled_box_probs(test, paths)
        probs, truth = reads.probs, reads.truth
        if not truth.any():
            print(f"{folder:<15} {part:<12}{len(truth):>6}{0:>9}   (no leaning dice)")
            continue
        threshold, s = best_threshold(probs, truth)
        row = f"{folder:<15} {part:<12}{len(truth):>6}{int(truth.sum()):>9}{threshold:>6.2f}"
        print(f"{row}{s['f1']:>7.3f}{s['recall']:>7.3f}{s['precision']:>7.3f}", flush=True)
        if args.sheets is not None and part == "calibration":
            args.sheets.mkdir(parents=True, exist_ok=True)
            called = probs >= threshold
            write_sheet(reads, np.flatnonzero(truth & ~called), args.sheets / f"{folder}_missed.jpg")
            write_sheet(reads, np.flatnonzero(~truth & called), args.sheets / f"{folder}_false.jpg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
