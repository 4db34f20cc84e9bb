"""How a table's profile reads dice as it is taught more of them: face accuracy and dice scored wrong.

    python -m farklecam.datasets.real export-holdout data/eval
    python bench/profile_curve.py data/eval/matteop65_webcam data/eval/byler_d6 --sizes 5 20 60 200 --seeds 5
    python bench/profile_curve.py data/eval/matteop65_webcam data/eval/byler_d6 --paint-six logo --seeds 5

Each folder is one world (a YOLO folder the models never trained on: the real photos' held-out
fifth). For each seed its pictures are shuffled; the first N labelled dice in that order are
taught to a new profile with ``farklecam teach NAME --labels FOLDER`` (a folder holding just
those dice's labels), and every picture none of them came from is read with and without the
profile (``farklecam read --profile NAME``), scored as ``python -m farklecam.models.evaluate``
scores it. ``--paint-six logo`` first paints a maker's logo over every six
(``bench/symbol_faces.py``): a look the classifier misreads (as a one) on every die of it, which
only the table's own corrections can teach. Figures are means over the seeds; "judged" is the
number of dice read per seed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.datasets.yolo import find_images, label_file, read_labels
from farklecam.models.evaluate.metrics import FolderStats
from farklecam.models.evaluate.run import load_labels
from farklecam.service.cli import main as farklecam
from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore
from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader
from farklecam.vision.reading import Reading

#: A split is judged only where at least this many labelled dice are left to read.
MIN_JUDGED = 20


def world(folder: Path, paint_six: str | None, out: Path) -> list[Path]:
    """The world's pictures: the folder's own, or copies with every six painted over (written under ``out``)."""
    images = find_images(folder)
    if paint_six is None:
        return images
    import cv2
    from symbol_faces import paint

    painted = []
    for image in images:
        frame = load_image(image).copy()
        height, width = frame.shape[:2]
        lines = label_file(image).read_text()
        for box in read_labels(label_file(image)):
            if box.cls == 5:
                paint(frame, list(box.to_xyxy(width, height)), paint_six)
        target = out / "images" / f"{image.stem}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(target), frame)
        (out / "labels").mkdir(exist_ok=True)
        (out / "labels" / f"{image.stem}.txt").write_text(lines)
        painted.append(target)
    return painted


def teach_folder(images: list[Path], n: int, out: Path) -> set[Path]:
    """A YOLO folder under ``out`` holding the first ``n`` labelled dice of ``images``; the pictures they came from."""
    (out / "images").mkdir(parents=True)
    (out / "labels").mkdir()
    left, used = n, set()
    for image in images:
        if left <= 0:
            break
        lines = [line for line in label_file(image).read_text().splitlines() if line.strip()]
        if not lines:
            continue
        (out / "images" / image.name).symlink_to(image.resolve())
        (out / "labels" / f"{image.stem}.txt").write_text("\n".join(lines[:left]) + "\n")
        left -= len(lines[:left])
        used.add(image)
    return used


def judge(reader: DiceReader, images: list[Path], readings: dict[Path, Reading] | None = None) -> FolderStats:
    """The evaluator's counts over ``images`` (``readings`` already made are used as they are)."""
    stats = FolderStats()
    for image in images:
        frame = load_image(image)
        reading = readings[image] if readings is not None else reader.read(frame)
        stats.add(reading, load_labels(image, frame.shape[1], frame.shape[0]))
    return stats


def curve(folder: Path, sizes: list[int], seeds: int, paint_six: str | None, scratch: Path) -> list[dict[str, object]]:
    """One world's rows: for each N, the mean figures with and without the profile."""
    images = world(folder, paint_six, scratch / "world")
    reader = DiceReader()
    plain = {image: reader.read(load_image(image)) for image in images}
    dice = {image: len(read_labels(label_file(image))) for image in images}
    store = ProfileStore()  # where $FARKLECAM_PROFILES_DIR points, as for the teach command
    rows: list[dict[str, object]] = []
    for n in sizes:
        if sum(dice.values()) - n < MIN_JUDGED:
            continue
        runs = []
        for seed in range(seeds):
            order = [images[i] for i in np.random.default_rng(seed).permutation(len(images))]
            name = f"{scratch.name}-s{seed}-n{n}"
            taught = teach_folder(order, n, scratch / name)
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                status = farklecam(["teach", name, "--labels", str(scratch / name)])
            seconds = time.perf_counter() - start
            if status != 0:
                raise SystemExit(f"farklecam teach {name} failed with status {status}")
            rest = [image for image in order if image not in taught]
            with_profile = judge(reader.with_profile(store.open(name)), rest).metrics()
            without = judge(reader, rest, plain).metrics()
            runs.append((without, with_profile, seconds))

        def mean(which: int, key: str, runs: list[tuple[dict, dict, float]] = runs) -> float:
            return float(np.mean([run[which][key] for run in runs]))

        rows.append(
            {
                "world": folder.name + (f" ({paint_six} sixes)" if paint_six else ""),
                "taught": n,
                "judged": mean(0, "dice"),
                "face_accuracy": [mean(0, "face_accuracy"), mean(1, "face_accuracy")],
                "scored_wrong": [mean(0, "ok_wrong"), mean(1, "ok_wrong")],
                "flat_ok_right": [mean(0, "flat_ok_right"), mean(1, "flat_ok_right")],
                "teach_s": max(run[2] for run in runs),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="YOLO folders, one world each")
    parser.add_argument("--sizes", nargs="+", type=int, default=[5, 20, 60, 200], help="dice taught")
    parser.add_argument("--seeds", type=int, default=5, help="shuffles of each world")
    parser.add_argument("--paint-six", choices=("logo", "skull", "star"), help="paint this over every six first")
    parser.add_argument("--json", action="store_true", help="one JSON row per world and size")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[PROFILES_ENV] = str(Path(tmp) / "profiles")
        for k, folder in enumerate(args.folders):
            rows += curve(folder, args.sizes, args.seeds, args.paint_six, Path(tmp) / f"world{k}")
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print("world                          taught  judged  face accuracy    scored wrong   flat ok+right    teach s")
    for r in rows:
        fa, sw, fo = r["face_accuracy"], r["scored_wrong"], r["flat_ok_right"]
        print(
            f"{r['world']:30s} {r['taught']:6d} {r['judged']:7.0f}  {fa[0]:.3f} -> {fa[1]:.3f}  "
            f"{sw[0]:4.1f} -> {sw[1]:4.1f}   {fo[0]:.3f} -> {fo[1]:.3f}   {r['teach_s']:5.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
