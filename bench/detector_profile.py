"""Where does a detector's time go? The network alone, and onnxruntime's profile by kind of node.

    python bench/detector_profile.py MODEL.onnx [MODEL.onnx ...] [--runs N] [--size HxW] [--threads T]
        [--fidelity IMAGE_DIR [--limit N]]

Each model is run on the same random input of ``--size`` (320x256: a 4:3 frame
as the reader feeds it), in alternating blocks so that a slow minute of a shared
machine slows all alike, and its median ``session.run`` time is printed; then
onnxruntime's own profile of each, summed by node kind (``Conv``, ``Softmax``,
...): the kernel time per run, in milliseconds (threads add up, so the sum
exceeds the wall time). With ``--fidelity``, each model after the first also
reads the images of IMAGE_DIR as the reader does (letterbox, decoding, NMS at
the first model's threshold), and its boxes are matched to the first model's:
the mean and 5th percentile of the matched boxes' IoU, and the boxes found by
one only (how far a quantized copy strays from its float original).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import onnxruntime as ort

from farklecam.datasets.yolo import find_images
from farklecam.vision.detection.detector import DieDetector
from farklecam.vision.images import load_image
from farklecam.vision.onnx_runtime import load_onnx


def _size(text: str) -> tuple[int, int]:
    h, w = (int(v) for v in text.lower().split("x"))
    return h, w


def kernel_times(path: Path, tensor: np.ndarray, runs: int, threads: int | None) -> dict[str, float]:
    """Kernel milliseconds per run by node kind, from onnxruntime's profiler."""
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.mkdtemp()) / "profile")
    options.intra_op_num_threads = threads or 0
    session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    for _ in range(runs):
        session.run(None, {name: tensor})
    events = json.loads(Path(session.end_profiling()).read_text())
    by_kind: dict[str, float] = defaultdict(float)
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_kind[event["args"]["op_name"]] += event["dur"] / runs / 1000.0
    return dict(by_kind)


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in ``a`` (n, 4) with every box in ``b`` (m, 4)."""
    x1, y1 = np.maximum(a[:, None, 0], b[None, :, 0]), np.maximum(a[:, None, 1], b[None, :, 1])
    x2, y2 = np.minimum(a[:, None, 2], b[None, :, 2]), np.minimum(a[:, None, 3], b[None, :, 3])
    inter = (x2 - x1).clip(0) * (y2 - y1).clip(0)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None] - inter, 1e-9)


def fidelity(reference: Path, other: Path, images: list[Path]) -> tuple[float, float, int, int]:
    """(mean IoU, 5th percentile IoU) of ``other``'s boxes matched to ``reference``'s; boxes only one found."""
    ref = DieDetector(reference)
    cand = DieDetector(other, conf=ref.conf)
    ious: list[float] = []
    only_ref = only_other = 0
    for path in images:
        frame = load_image(path)
        a, b = ref(frame).xyxy, cand(frame).xyxy
        if len(a) == 0 or len(b) == 0:
            only_ref, only_other = only_ref + len(a), only_other + len(b)
            continue
        overlap = _iou(a, b)
        best = overlap.max(axis=1)
        ious += best[best > 0.5].tolist()
        only_ref += int((best <= 0.5).sum())
        only_other += int((overlap.max(axis=0) <= 0.5).sum())
    values = np.asarray(ious) if ious else np.zeros(1)
    return float(values.mean()), float(np.percentile(values, 5)), only_ref, only_other


def main(argv: list[str] | None = None) -> int:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", type=Path, nargs="+", help="ONNX detectors (any input of shape 1x3xHxW)")
    parser.add_argument("--runs", type=int, default=120, help="timed runs per model")
    parser.add_argument("--size", type=_size, default=(256, 320), help="input height x width (default 256x320)")
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads (default: the reader's)")
    parser.add_argument("--fidelity", type=Path, default=None, help="images to compare the boxes on")
    parser.add_argument("--limit", type=int, default=150, help="with --fidelity: the first N images")
    args = parser.parse_args(argv)
    tensor = np.random.default_rng(0).random((1, 3, *args.size), dtype=np.float32)
    models = {str(path): load_onnx(path, threads=args.threads) for path in args.models}
    times: dict[str, list[float]] = {key: [] for key in models}
    blocks = 8
    for _ in range(blocks):
        for key, model in models.items():
            model.run(tensor)  # warm
            for _ in range(max(1, args.runs // blocks)):
                t0 = time.perf_counter()
                model.run(tensor)
                times[key].append((time.perf_counter() - t0) * 1000.0)
    width = max(len(key) for key in models)
    print(f"{'model':{width}}  median ms   p90 ms   ({args.size[0]}x{args.size[1]}, alternating blocks)")
    for key, values in times.items():
        print(f"{key:{width}}  {np.median(values):9.2f} {np.percentile(values, 90):8.2f}")
    for path in args.models:
        kinds = kernel_times(path, tensor, 40, args.threads)
        top = sorted(kinds.items(), key=lambda item: -item[1])[:6]
        listed = ", ".join(f"{kind} {ms:.2f}" for kind, ms in top)
        print(f"{path}: kernel ms per run {sum(kinds.values()):.2f}: {listed}")
    if args.fidelity is not None:
        images = find_images(args.fidelity)[: args.limit]
        print(f"boxes against {args.models[0]} on {len(images)} images of {args.fidelity}:")
        for path in args.models[1:]:
            mean, p5, only_ref, only_other = fidelity(args.models[0], path, images)
            print(
                f"  {path}: IoU mean {mean:.4f}, 5th percentile {p5:.4f}; {only_ref} found by the first only, "
                f"{only_other} by this one only"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
