"""Does the cocked test memorise its crops? Its F1 on the scenes it trained on against scenes it never saw.

    python bench/cocked_fit_gap.py [--model FILE] [--train DIR...] [--calib DIR...] [--limit N]

Reads every visible labelled die through its labelled box (the test alone, not the
detector's boxes: :func:`models.cocked.labelled_box_probs`) in three kinds of scenes:
the training part of each training folder (what the test was fitted on), the held-out
part of the same folders (same renderer settings, never trained on), and the calibration
folders. Prints, per folder and part, the dice, the leaning ones and the best-threshold
cocked F1 with its recall and precision. A test that reads its training part far better
than the held-out part has memorised crops rather than learned what leaning looks like;
the gap between the held-out part and the calibration folders is the gap between
renderer recipes. ``--limit`` takes that many scenes per part (a spread-out, fixed subset).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from datasets.training_sets import synthetic_frames
from datasets.yolo import find_images
from models.cocked import best_threshold, labelled_box_probs
from vision.cocked import CockedTest
from vision.reader import default_model_dir

TRAIN = ("data/synth", "data/synth_lean", "data/synth_v2")
CALIB = ("data/calib_synth", "data/calib_lean")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=default_model_dir() / "cocked_test.onnx")
    ap.add_argument("--train", type=Path, nargs="*", default=[Path(p) for p in TRAIN])
    ap.add_argument("--calib", type=Path, nargs="*", default=[Path(p) for p in CALIB])
    ap.add_argument("--limit", type=int, default=400, help="scenes per folder and part (default 400)")
    args = ap.parse_args(argv)
    if not args.model.is_file():
        ap.error(f"no cocked test at {args.model}")
    test = CockedTest(args.model)
    parts: list[tuple[str, str, list[Path]]] = []
    for folder in args.train:
        for part, holdout in (("trained-on", False), ("held-out", True)):
            parts.append((folder.name, part, [f.path for f in synthetic_frames(folder, args.limit, holdout=holdout)]))
    parts += [(folder.name, "calibration", sorted(find_images(folder))[: args.limit]) for folder in args.calib]
    print(f"cocked test {args.model}, labelled boxes, best threshold per row")
    print(f"{'folder':<14}{'part':<13}{'dice':>6}{'leaning':>9}{'thr':>6}{'F1':>7}{'R':>7}{'P':>7}")
    for folder, part, paths in parts:
        probs, truth = labelled_box_probs(test, paths)
        if not truth.any():
            print(f"{folder:<14}{part:<13}{len(truth):>6}{0:>9}   (no leaning dice)")
            continue
        threshold, s = best_threshold(probs, truth)
        row = f"{folder:<14}{part:<13}{len(truth):>6}{int(truth.sum()):>9}{threshold:>6.2f}"
        print(f"{row}{s['f1']:>7.3f}{s['recall']:>7.3f}{s['precision']:>7.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
