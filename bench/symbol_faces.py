"""Symbol faces painted on real dice: how many does the reader still score as a number?

    python bench/symbol_faces.py ../shared/datasets/real/byler_d6 [--first 0] [--count 25] [--models DIR]

For each photo (YOLO folder with whole-die boxes, such as ``byler_d6``) and each die labelled
1 or 6, one copy of the photo gets that die's top face painted over with a symbol in its own
pip colour: a maker's logo (a ring with a letter), a skull, or a star. The copy is read and
the painted die's status counted (``missed``: no die found there). Every die that reads ``ok``
is a symbol scored as a number; the target is none (``farklecam.vision.faces.symbols``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader

KINDS = ("logo", "skull", "star")


def paint(image: npt.NDArray[np.uint8], box: list[float], kind: str) -> None:
    """Paint ``kind`` over the die's top face (in place), in its pip colour on its body colour."""
    x1, y1, x2, y2 = (round(v) for v in box)
    w, h = x2 - x1, y2 - y1
    body = np.median(image[y1 + h // 4 : y2 - h // 4, x1 + w // 4 : x2 - w // 4].reshape(-1, 3), axis=0)
    pixels = image[y1:y2, x1:x2].reshape(-1, 3).astype(int)
    dark = pixels[pixels.sum(axis=1) <= np.percentile(pixels.sum(axis=1), 5)].mean(axis=0)
    ink_arr = dark if abs(body.sum() - dark.sum()) > 150 else 255 - body
    back, ink = tuple(int(v) for v in body), tuple(int(v) for v in ink_arr)
    cx, cy, r = (x1 + x2) // 2, (y1 + y2) // 2, int(0.36 * min(w, h))
    cv2.circle(image, (cx, cy), r, back, -1)  # the pips covered
    if kind == "logo":
        cv2.circle(image, (cx, cy), int(0.8 * r), ink, max(1, r // 5))
        cv2.putText(image, "F", (cx - r // 2, cy + r // 2), cv2.FONT_HERSHEY_SIMPLEX, r / 22, ink, max(1, r // 6))
    elif kind == "skull":
        cv2.ellipse(image, (cx, cy - r // 6), (int(0.7 * r), int(0.6 * r)), 0, 0, 360, ink, -1)
        cv2.rectangle(image, (cx - r // 3, cy + r // 4), (cx + r // 3, cy + int(0.7 * r)), ink, -1)
        for dx in (-r // 3, r // 3):
            cv2.circle(image, (cx + dx, cy - r // 5), max(1, r // 5), back, -1)
        cv2.line(image, (cx, cy + r // 4), (cx, cy + int(0.7 * r)), back, 1)
    else:
        angles = np.pi / 2 + np.arange(10) * np.pi / 5
        radii = np.where(np.arange(10) % 2 == 0, 0.9 * r, 0.4 * r)
        star = np.column_stack([cx + radii * np.cos(angles), cy - radii * np.sin(angles)]).astype(np.int32)
        cv2.fillPoly(image, [star], ink)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--first", type=int, default=0, help="skip this many photos (sorted by name)")
    parser.add_argument("--count", type=int, default=25, help="photos to paint")
    parser.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    args = parser.parse_args(argv)
    reader = DiceReader(args.models)
    tally: Counter[tuple[str, str]] = Counter()
    photos = sorted((args.folder / "images").iterdir())[args.first : args.first + args.count]
    for path in photos:
        image = load_image(path)
        height, width = image.shape[:2]
        labels = np.loadtxt(args.folder / "labels" / f"{path.stem}.txt", ndmin=2)
        for kind in KINDS:
            for cls, cx, cy, bw, bh in labels:
                if int(cls) not in (0, 5):
                    continue
                box = [(cx - bw / 2) * width, (cy - bh / 2) * height, (cx + bw / 2) * width, (cy + bh / 2) * height]
                painted = image.copy()
                paint(painted, box, kind)
                reading = reader.read(painted)
                centres = (reading.xyxy[:, :2] + reading.xyxy[:, 2:]) / 2
                near = np.hypot(centres[:, 0] - cx * width, centres[:, 1] - cy * height)
                if len(reading) == 0 or near.min() > 0.5 * bw * width:
                    tally[kind, "missed"] += 1
                else:
                    tally[kind, str(reading.status[int(near.argmin())])] += 1
    for kind in KINDS:
        row = {status: n for (k, status), n in sorted(tally.items()) if k == kind}
        print(kind, " ".join(f"{status}={n}" for status, n in row.items()))
    scored = sum(n for (_k, status), n in tally.items() if status == "ok")
    print(f"painted={sum(tally.values())} scored_as_a_number={scored}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
