"""Post-training int8 quantization of the die detector (static, QDQ, per-channel weights).

Calibration frames are letterboxed by the run-time detector's own
``preprocess``, so the ranges are measured on exactly what the model will see.
On a detector cut before its decoding (the shipped one, :func:`models.training.detector.cut_head`)
every node is quantized and the decoding stays in float, in numpy
(:mod:`vision.detection.yolo_head`). On one with ultralytics' decoded head, its decoding
nodes (DFL softmax, anchor arithmetic, the final concatenations) are kept in
float: those few cheap nodes turn small rounding errors into shifted boxes.
Either way the head's last convolutions stay in float (:func:`float_nodes`).

``python -m models.training.quantize SRC.onnx DST.onnx IMAGE_DIR...`` (training extra: needs ``onnx``);
held-out and validation real photos (``datasets.real``) are never used for calibration.
"""

from __future__ import annotations

import argparse
import os
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["float_nodes", "quantize_detector"]


def float_nodes(model_path: Path) -> list[str]:
    """Names of the nodes kept in float: the head's decoding, if the graph has one, and its branches' last convolutions.

    The decoding is everything in the last module but its conv branches (absent
    from a cut detector). The branches' last convolutions produce the numbers the
    decoding reads (box distance bins, class logits): rounding them shifted boxes
    (mean IoU with the float boxes 0.966 with them quantized, 0.975 in float, at
    the same speed, on 150 generated frames no model was judged on: ``python
    bench/detector_profile.py models/die_detector.onnx Q8 Q8H --fidelity
    data/synth_v3/images``).
    """
    import onnx

    from models.training.detector import branch_convs

    graph = onnx.load(str(model_path)).graph
    heads = sorted(
        {n.name.split("/")[1] for n in graph.node if n.name.startswith("/model.")}, key=lambda s: int(s.split(".")[1])
    )
    last = f"/{heads[-1]}/"
    decoding = [n.name for n in graph.node if n.name.startswith(last) and not ("/cv2." in n.name or "/cv3." in n.name)]
    return decoding + [node.name for node in branch_convs(graph).values()]


def _calibration_tensors(model_path: Path, images: Sequence[Path]) -> Iterator[npt.NDArray[np.float32]]:
    from vision.detection.detector import DieDetector
    from vision.images import load_image

    detector = DieDetector(model_path)
    for path in images:
        tensor, _ = detector.preprocess(load_image(path))
        yield tensor


def quantize_detector(src: Path, dst: Path, calibration_images: Sequence[Path]) -> Path:
    """Write an int8 copy of ``src`` to ``dst``, calibrated on ``calibration_images``; keeps the metadata.

    Args:
        src: the fp32 detector exported by ultralytics (with farklecam's metadata).
        dst: where the quantized model goes.
        calibration_images: frames like the ones the model will see (a few dozen to a few hundred).

    Returns:
        ``dst``.
    """
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class _Reader(CalibrationDataReader):  # type: ignore[misc]  # onnxruntime is untyped: its base is Any
        def __init__(self) -> None:
            self._tensors = _calibration_tensors(src, calibration_images)
            self._input = onnx.load(str(src)).graph.input[0].name

        def get_next(self) -> dict[str, npt.NDArray[np.float32]] | None:
            tensor = next(self._tensors, None)
            return None if tensor is None else {self._input: tensor}

    dst.parent.mkdir(parents=True, exist_ok=True)
    prepared = dst.with_suffix(".pre.onnx")
    quant_pre_process(str(src), str(prepared), skip_symbolic_shape=True)
    quantize_static(
        str(prepared),
        str(dst),
        _Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        nodes_to_exclude=float_nodes(src),
    )
    prepared.unlink(missing_ok=True)
    # quantize_static drops the metadata the run time reads (names, imgsz, threshold): copy it over.
    original, quantized = onnx.load(str(src)), onnx.load(str(dst))
    del quantized.metadata_props[:]
    quantized.metadata_props.extend(original.metadata_props)
    quantized.metadata_props.add(key="farklecam_quantized", value="int8-static-qdq-per-channel")
    onnx.save(quantized, str(dst))
    return dst


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: quantize SRC into DST with calibration frames sampled from the given folders."""
    from datasets.real import is_holdout, is_validation
    from datasets.yolo import find_images

    parser = argparse.ArgumentParser(prog="python -m models.training.quantize", description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("images", type=Path, nargs="+", help="folders of calibration images")
    parser.add_argument("--count", type=int, default=200, help="calibration frames (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # Calibration is a kind of training: the held-out real photos never take part, nor the
    # validation photos that judge the quantized model (models.thresholds.candidate).
    pool = [p for root in args.images for p in find_images(root) if not (is_holdout(p.name) or is_validation(p.name))]
    random.Random(args.seed).shuffle(pool)
    quantize_detector(args.src, args.dst, pool[: args.count])
    print(f"wrote {args.dst} ({args.dst.stat().st_size / 1e6:.1f} MB) from {min(args.count, len(pool))} frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
