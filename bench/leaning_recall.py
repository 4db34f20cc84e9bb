"""How many leaning dice does a detector find? The cap on the cocked test's recall.

    python bench/leaning_recall.py DIR [--models DETECTOR.onnx ...]

For each generated scene in DIR (YOLO folder with sidecars), every visible
leaning die counts as found when the centre of its labelled box lies inside a
box the detector finds at its own threshold. Leaning dice sit against walls and
other dice, where detectors miss most; a die never found is never called
cocked. Prints one row per detector.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from farklecam.models.training.cocked import labelled_scenes
from farklecam.vision.detection.detector import DieDetector

ROOT = Path(__file__).resolve().parents[1]


def leaning_found(detector: DieDetector, folder: Path) -> tuple[int, int]:
    """(visible leaning dice, how many of them the detector found)."""
    total = found = 0
    for scene in labelled_scenes([folder]):
        leaning = scene.boxes[scene.cocked]
        if len(leaning) == 0:
            continue
        boxes = detector(scene.image).xyxy
        centres = (leaning[:, :2] + leaning[:, 2:]) / 2
        inside = (
            (boxes[None, :, 0] <= centres[:, None, 0])
            & (centres[:, None, 0] <= boxes[None, :, 2])
            & (boxes[None, :, 1] <= centres[:, None, 1])
            & (centres[:, None, 1] <= boxes[None, :, 3])
        )
        total += len(leaning)
        found += int(inside.any(axis=1).sum())
    return total, found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path, help="generated scenes (images/, labels/ with sidecars)")
    ap.add_argument("--models", type=Path, nargs="+", default=[ROOT / "models" / "die_detector.onnx"])
    args = ap.parse_args()
    print(f"{'detector':<48}{'leaning':>9}{'found':>7}{'recall':>8}")
    for model in args.models:
        total, found = leaning_found(DieDetector(model), args.dir)
        print(f"{model!s:<48}{total:>9}{found:>7}{found / max(1, total):>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
