"""How fast is a read? Median and p90 latency of each stage on a 640x480 frame.

    python bench/read_speed.py [--models DIR] [--image PATH] [--runs 100] [--threads N] [--views V]
    python bench/read_speed.py --against OTHER_DIR [--models DIR] [--image PATH] [--runs 60] [--rounds 6]
    python bench/read_speed.py --compare-config FIELD=VALUE [...] [--nothing-marked] [--image PATH] [--runs 60]

Stages: the detector (letterbox + ONNX + decode), and the detector as one camera's
stream reads it (a frame of small dice read once, at the size the last frame
needed: :class:`farklecam.vision.detection.detector.LookMemory`); the face classifier on the dice
found (crops + ONNX), the tray search, the pip counter, the search for the
camera's vertical (:mod:`farklecam.vision.pose.view_search`), and the whole ``DiceReader.read``
with the tray found in the frame: as configured by default (the vertical
searched for in each frame), without that search, and for a fixed camera whose
vertical is learned. Where the model folder has a cocked test and the image a
labelled tray: the cocked test, and the whole read with that tray calibrated (as
at a table). A benchmark, not a test: the numbers depend on the machine and on what
else runs on it.

``--against`` compares two model folders fairly on a shared, noisy machine:
the whole read (tray calibrated where the image has a labelled one) of each,
in alternating blocks of ``--runs`` reads, ``--rounds`` times, so that a slow
minute of the machine slows both alike. ``--compare-config`` (repeatable) does the same
for the default reader against one with those ``ReaderConfig`` fields changed;
``--nothing-marked`` times both with the tray found in the frame, as a photo is read.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2
import numpy as np

from farklecam.models.evaluate.run import load_labels, override_arg
from farklecam.vision.detection.detector import DieDetector, LookMemory
from farklecam.vision.faces.symbols import count_pips_in_boxes
from farklecam.vision.images import load_image
from farklecam.vision.pose.upright import upright_view
from farklecam.vision.pose.view_search import VerticalMemory, ViewSearchConfig, search_view
from farklecam.vision.reader import DiceReader, ReaderConfig
from farklecam.vision.tray.detect import detect_tray
from farklecam.vision.tray.outline import TrayOutline

ROOT = Path(__file__).resolve().parents[1]


def timed(fn: Callable[[], object], runs: int, warmup: int = 5) -> tuple[list[float], list[float]]:
    """Wall-clock and process CPU milliseconds of each run.

    CPU time is the sturdier number on a busy machine: other processes stretch the
    wall clock, not the work done (with one thread, CPU time is the idle wall time).
    """
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.process_time() - c0) * 1000.0)
    return wall, cpu


def frame_640x480(path: Path | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The frame to time, resized to 640x480, and its labelled tray corners scaled alike (None without a sidecar)."""
    if path is None:
        examples = sorted((ROOT / "examples").glob("*.jpg"))
        path = examples[0] if examples else None
    if path is None:
        rng = np.random.default_rng(0)
        return rng.integers(0, 255, (480, 640, 3)).astype(np.uint8), None
    image = load_image(path)
    h, w = image.shape[:2]
    tray = load_labels(path, w, h).tray
    scaled = None if tray is None else tray * np.array([640 / w, 480 / h], np.float32)
    return cv2.resize(image, (640, 480), interpolation=cv2.INTER_AREA), scaled


def compare(
    frame: np.ndarray,
    corners: np.ndarray | None,
    setups: dict[str, tuple[Path | None, ReaderConfig]],
    args: argparse.Namespace,
) -> None:
    """Print the median and p90 whole-read latency of each setup (model folder, config), timed in alternating blocks."""
    tray = TrayOutline.from_corners(corners) if corners is not None and not args.nothing_marked else None
    readers = {name: DiceReader(folder, config=config).with_tray(tray) for name, (folder, config) in setups.items()}
    times: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(args.rounds):
        for name, reader in readers.items():
            times[name] += timed(lambda reader=reader: reader.read(frame), args.runs)[0]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    what = "tray calibrated" if tray is not None else "nothing marked"
    print(f"whole read ({what}), {args.rounds} alternating blocks of {args.runs} reads, load {load:.1f}")
    print(f"{'setup':<44}{'median ms':>10}{'p90 ms':>9}")
    for name, wall in times.items():
        print(f"{name:<44}{statistics.median(wall):>10.2f}{statistics.quantiles(wall, n=10)[-1]:>9.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    ap.add_argument("--image", type=Path, default=None, help="image to read (default: the first example)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads (default: auto)")
    ap.add_argument(
        "--views", type=int, choices=(1, 2, 4, 8), default=ReaderConfig().face_views, help="classifier views per die"
    )
    ap.add_argument("--against", type=Path, default=None, help="compare the whole read with this model folder")
    ap.add_argument(
        "--compare-config",
        type=override_arg,
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="compare the whole read with ReaderConfig fields changed, e.g. face_views=1 (repeatable)",
    )
    ap.add_argument("--nothing-marked", action="store_true", help="with a comparison: ignore the image's labelled tray")
    ap.add_argument("--rounds", type=int, default=6, help="alternating blocks per setup, with --against")
    args = ap.parse_args()

    frame, corners = frame_640x480(args.image)
    config = ReaderConfig(threads=args.threads, face_views=args.views)
    if args.against is not None or args.compare_config is not None:
        setups = {str(args.models or "models"): (args.models, config)}
        if args.against is not None:
            setups[str(args.against)] = (args.against, config)
        if args.compare_config is not None:
            changed = dict(args.compare_config)
            name = ", ".join(f"{field}={value!r}" for field, value in changed.items())
            setups[name] = (args.models, dataclasses.replace(config, **changed))
        compare(frame, corners, setups, args)
        return 0
    reader = DiceReader(args.models, config=ReaderConfig(threads=args.threads, face_views=args.views))
    found = reader.detector(frame)
    boxes = found.xyxy
    if len(boxes) == 0:  # an untrained model finds nothing: time the classifier on six made-up dice
        boxes = np.array([[60 + 90 * i, 200, 110 + 90 * i, 250] for i in range(6)], np.float32)
    stages = [
        ("detector", lambda: reader.detector(frame)),
    ]
    if isinstance(reader.detector, DieDetector) and reader.detector.closer is not None:
        look = LookMemory()
        reader.detector(frame, look)  # the stream's first frame says the size its dice need
        stream = reader.detector
        stages.append((f"detector, a camera's stream (input {look.imgsz or 'own'})", lambda: stream(frame, look)))
    stages += [
        (f"classifier ({len(boxes)} dice x {args.views})", lambda: reader.classifier(frame, boxes)),
        ("tray search", lambda: detect_tray(frame, boxes)),
        (f"pip counter ({len(boxes)} dice)", lambda: count_pips_in_boxes(frame, boxes)),
    ]
    cocked_test, search = reader.cocked_test, ViewSearchConfig() if reader.config.vertical_search else None
    if cocked_test is not None and search is not None:
        stages.append((f"vertical search ({len(boxes)} dice)", lambda: search_view(cocked_test, frame, boxes, search)))
    stages.append(("whole read, tray found", lambda: reader.read(frame)))
    plain = DiceReader(
        args.models, config=ReaderConfig(threads=args.threads, face_views=args.views, vertical_search=False)
    )
    stages.append(("whole read, tray found, no search", lambda: plain.read(frame)))
    memory = VerticalMemory()
    fixed = reader.with_vertical_memory(memory)
    for _ in range(memory.needed):
        fixed.read(frame)  # a fixed camera: the vertical is learned from the first frames
    if memory.view is not None:
        stages.append(("whole read, fixed camera, vertical learned", lambda: fixed.read(frame)))
    # At a table the tray is calibrated once: no tray search, and the cocked test runs.
    view = upright_view(corners, (frame.shape[1], frame.shape[0])) if corners is not None else None
    if cocked_test is not None and view is not None:
        calibrated = reader.with_tray(TrayOutline.from_corners(corners))
        stages.append((f"cocked test ({len(boxes)} dice)", lambda: cocked_test(frame, boxes, view)))
        stages.append(("whole read, calibrated", lambda: calibrated.read(frame)))
    else:
        print("cocked test not timed: " + ("no cocked_test.onnx" if cocked_test is None else "no labelled tray"))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"frame 640x480, {len(found)} dice found, {args.runs} runs, {os.cpu_count()} CPUs, load {load:.1f}")
    print(f"{'stage':<44}{'median ms':>10}{'p90 ms':>9}{'cpu ms':>9}")
    for name, fn in stages:
        wall, cpu = timed(fn, args.runs)
        p90 = statistics.quantiles(wall, n=10)[-1]
        print(f"{name:<44}{statistics.median(wall):>10.2f}{p90:>9.2f}{statistics.median(cpu):>9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
