"""Where do the reader's cocked errors lie? Cocked recall and precision by the scene's condition.

    python bench/cocked_by_condition.py DIR... [--models FOLDER]

Reads every generated scene in each DIR (YOLO folder with sidecars) as
``python -m farklecam.models.evaluate`` does (the sidecar's tray as the calibrated one,
each labelled die matched by centre, occluded dice set aside) and joins each
die to what its sidecar says the picture went through: Gaussian blur, sensor
noise, JPEG quality (where the sidecar says), and the die's side in pixels. Prints, per folder, cocked
recall / precision / F1 in bins of each, then what the missed leaning dice were
read as (never found, ``uncertain``, a face, off the tray) and how far the
missed ones lean. A die a degraded picture hides would show as a bin far below
the others; a bin's score over a handful of leaning dice says little.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from farklecam.datasets.yolo import COCKED_CLASS, find_images
from farklecam.models.evaluate.metrics import f1, match_scored, predicted_classes, ratio
from farklecam.models.evaluate.run import load_labels, sidecar_outline
from farklecam.models.training.cocked import read_sidecar
from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader, default_model_dir

#: (sidecar or die field, bin edges): the conditions the table splits by.
BINS: dict[str, tuple[float, ...]] = {
    "blur_sigma": (0.0, 0.5, 1.0, 1.5, 99.0),
    "noise": (0.0, 2.0, 4.0, 99.0),
    "jpeg_quality": (0.0, 60.0, 80.0, 101.0),
    "side_px": (0.0, 30.0, 40.0, 55.0, 9999.0),
}


#: What a cocked call on no labelled die was read as.
NO_DIE = "no die"


@dataclass(frozen=True)
class DieCall:
    """One die's truth and call, with its picture's conditions (a false call on no die has ``leaning`` False).

    ``read_as`` is the reader's status for the die (``never found`` where it was not, :data:`NO_DIE`
    for a cocked call where no die is labelled), ``called``
    whether the reader called it cocked, as ``farklecam.models.evaluate.run`` counts it.
    """

    leaning: bool
    called: bool
    read_as: str
    tilt_deg: float
    conditions: dict[str, float | None]


def folder_calls(reader: DiceReader, folder: Path) -> list[DieCall]:
    """Every labelled die of the folder's scenes, and every cocked call on no labelled die."""
    calls: list[DieCall] = []
    for path in find_images(folder):
        frame = load_image(path)
        labels = load_labels(path, frame.shape[1], frame.shape[0])
        post = read_sidecar(path).get("post", {})
        scene: dict[str, float | None] = {
            key: float(post[key]) if key in post else None for key in ("blur_sigma", "noise", "jpeg_quality")
        }
        image_reader = reader if labels.tray is None else reader.with_tray(sidecar_outline(labels.tray, 0.0, path.name))
        reading = image_reader.read(frame)
        match = match_scored(reading, labels)
        cocked = predicted_classes(reading) == COCKED_CLASS  # the evaluator's call, whatever else the die is
        found = {j: i for i, j in match.pairs}
        for j in match.labels:
            i = found.get(j)
            read_as = "never found" if i is None else str(reading.status[i])
            box = labels.xyxy[j]
            tilt = float(labels.tilt_deg[j]) if labels.tilt_deg is not None else 0.0
            side = float(max(box[2] - box[0], box[3] - box[1]))
            leaning = bool(labels.classes[j] == COCKED_CLASS)
            called = i is not None and bool(cocked[i])
            calls.append(DieCall(leaning, called, read_as, tilt, {**scene, "side_px": side}))
        paired = {i for i, _ in match.pairs}
        for i in match.predictions:
            if i not in paired and cocked[i]:
                side = float(max(reading.xyxy[i][2:] - reading.xyxy[i][:2]))
                calls.append(DieCall(False, True, NO_DIE, 0.0, {**scene, "side_px": side}))
    return calls


def score(calls: list[DieCall]) -> str:
    """Dice, leaning dice, recall, precision and F1 of some calls, as table cells ("-" where undefined)."""
    tp = sum(c.leaning and c.called for c in calls)
    leaning = sum(c.leaning for c in calls)
    called = sum(c.called for c in calls)
    recall, precision = ratio(tp, leaning), ratio(tp, called)
    both = f1(recall, precision) if recall is not None and precision is not None else None
    cells = "".join(f"{'-' if v is None else f'{v:.3f}':>8}" for v in (recall, precision, both))
    return f"{len(calls):>7}{leaning:>8}{cells}"


def median_tilt(calls: list[DieCall]) -> str:
    """The dice's median tilt, "12.3 deg", or "-" for none."""
    return f"{float(np.median([c.tilt_deg for c in calls])):.1f} deg" if calls else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", type=Path, nargs="+", help="generated scenes (images/, labels/ with sidecars)")
    ap.add_argument("--models", type=Path, default=default_model_dir(), help="folder of the reader's models")
    args = ap.parse_args()
    reader = DiceReader(args.models)
    for folder in args.dirs:
        calls = folder_calls(reader, folder)
        print(f"\n{folder}\n{'condition':<26}{'dice':>7}{'leaning':>8}{'recall':>8}{'prec.':>8}{'F1':>8}")
        print(f"{'all':<26}{score(calls)}")
        for key, edges in BINS.items():
            for lo, hi in pairwise(edges):
                within = [c for c in calls if (v := c.conditions[key]) is not None and lo <= v < hi]
                print(f"{f'{key} {lo:g}-{hi:g}':<26}{score(within)}")
        missed = [c for c in calls if c.leaning and not c.called]
        counts = ", ".join(f"{name} {n}" for name, n in Counter(c.read_as for c in missed).most_common()) or "none"
        leans = median_tilt([c for c in calls if c.leaning])
        print(f"missed leaning dice: {len(missed)} ({counts}); median tilt {median_tilt(missed)} (all: {leans})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
