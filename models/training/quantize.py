"""Post-training int8 quantization of the die detector (static, QDQ, per-channel weights).

Calibration frames are letterboxed by the run-time detector's own
``preprocess``, so the ranges are measured on exactly what the model will see.
On a detector cut before its decoding (the shipped one, :func:`farklecam.models.training.detector.cut_head`)
every node is quantized and the decoding stays in float, in numpy
(:mod:`farklecam.vision.detection.yolo_head`). On one with ultralytics' decoded head, its decoding
nodes (DFL softmax, anchor arithmetic, the final concatenations) are kept in
float: those few cheap nodes turn small rounding errors into shifted boxes.
Either way the head's last convolutions stay in float (:func:`float_nodes`).

``python -m farklecam.models.training.quantize SRC.onnx DST.onnx IMAGE_DIR...`` (training extra: needs ``onnx``);
held-out and validation real photos (``farklecam.datasets.real``) are never used for calibration. A SRC that is
itself quantized (the shipped file) is first turned back into float (:func:`dequantized`), its weights
rounded once already.
"""

from __future__ import annotations

import argparse
import os
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["dequantized", "float_nodes", "quantize_detector"]


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

    from farklecam.models.training.detector import branch_convs

    graph = onnx.load(str(model_path)).graph
    heads = sorted(
        {n.name.split("/")[1] for n in graph.node if n.name.startswith("/model.")}, key=lambda s: int(s.split(".")[1])
    )
    last = f"/{heads[-1]}/"
    decoding = [n.name for n in graph.node if n.name.startswith(last) and not ("/cv2." in n.name or "/cv3." in n.name)]
    return decoding + [node.name for node in branch_convs(graph).values()]


def dequantized(src: Path, dst: Path) -> Path:
    """Write a float copy of the QDQ model ``src``: weights dequantized into float initialisers, activation pairs gone.

    The same graph ONNX Runtime runs with its graph optimisations off (each quantized weight
    times its scale, the activations in float): the shipped detector's float export was not
    kept, and this is the float model its int8 file stands for. Node names are kept, so
    :func:`float_nodes` still finds the head. Returns ``dst``.
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    rename: dict[str, str] = {}
    kept, new_weights = [], []
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in weights:
            q, scale = weights[node.input[0]].astype(np.float32), weights[node.input[1]].astype(np.float32)
            zero = weights[node.input[2]].astype(np.float32) if len(node.input) > 2 else np.zeros_like(scale)
            if scale.size > 1:  # per channel, along the node's axis
                axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
                shape = [-1 if k == axis else 1 for k in range(q.ndim)]
                scale, zero = scale.reshape(shape), zero.reshape(shape)
            new_weights.append(numpy_helper.from_array(((q - zero) * scale).astype(np.float32), node.output[0]))
        elif (
            node.op_type == "DequantizeLinear"
            and getattr(producer.get(node.input[0]), "op_type", "") == "QuantizeLinear"
        ):
            rename[node.output[0]] = producer[node.input[0]].input[0]
        elif node.op_type != "QuantizeLinear":
            kept.append(node)

    def resolve(name: str) -> str:  # through chains of removed pairs
        while name in rename:
            name = rename[name]
        return name

    for node in kept:
        for k, name in enumerate(node.input):
            node.input[k] = resolve(name)
    for out in graph.output:
        out.name = resolve(out.name)
    used = {name for node in kept for name in node.input}
    old = [i for i in graph.initializer if i.name in used and i.name not in {w.name for w in new_weights}]
    del graph.node[:], graph.initializer[:]
    graph.node.extend(kept)
    graph.initializer.extend(old + [w for w in new_weights if w.name in used])
    props = [p for p in model.metadata_props if p.key != "farklecam_quantized"]
    del model.metadata_props[:]
    model.metadata_props.extend(props)
    onnx.checker.check_model(model)
    dst.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(dst))
    return dst


def _calibration_tensors(model_path: Path, images: Sequence[Path]) -> Iterator[npt.NDArray[np.float32]]:
    from farklecam.vision.detection.detector import DieDetector
    from farklecam.vision.images import load_image

    detector = DieDetector(model_path)
    for path in images:
        tensor, _ = detector.preprocess(load_image(path))
        yield tensor


def quantize_detector(src: Path, dst: Path, calibration_images: Sequence[Path], *, reduce_range: bool = True) -> Path:
    """Write an int8 copy of ``src`` to ``dst``, calibrated on ``calibration_images``; keeps the metadata.

    Args:
        src: the fp32 detector exported by ultralytics (with farklecam's metadata).
        dst: where the quantized model goes.
        calibration_images: frames like the ones the model will see (a few dozen to a few hundred).
        reduce_range: weights in 7 bits. A CPU with AVX2 but no VNNI (most laptops before 2021) multiplies
            uint8 activations by int8 weights with VPMADDUBSW, whose 16-bit sums saturate; with full-range
            weights the shipped detector lost 1.7-2.7 points of recall there (``docs/tried.md``).

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
        reduce_range=reduce_range,
    )
    prepared.unlink(missing_ok=True)
    # quantize_static drops the metadata the run time reads (names, imgsz, threshold): copy it over.
    original, quantized = onnx.load(str(src)), onnx.load(str(dst))
    del quantized.metadata_props[:]
    quantized.metadata_props.extend(original.metadata_props)
    kind = "int8-static-qdq-per-channel" + ("-7bit-weights" if reduce_range else "")
    quantized.metadata_props.add(key="farklecam_quantized", value=kind)
    onnx.save(quantized, str(dst))
    return dst


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: quantize SRC into DST with calibration frames sampled from the given folders."""
    from farklecam.datasets.real import is_holdout, is_validation
    from farklecam.datasets.yolo import find_images

    parser = argparse.ArgumentParser(
        prog="python -m farklecam.models.training.quantize", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("images", type=Path, nargs="+", help="folders of calibration images")
    parser.add_argument("--count", type=int, default=200, help="calibration frames (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--full-range", action="store_true", help="8-bit weights (saturate on AVX2 without VNNI)")
    args = parser.parse_args(argv)
    # Calibration is a kind of training: the held-out real photos never take part, nor the
    # validation photos that judge the quantized model (farklecam.models.thresholds.candidate).
    pool = [p for root in args.images for p in find_images(root) if not (is_holdout(p.name) or is_validation(p.name))]
    random.Random(args.seed).shuffle(pool)
    import onnx

    src = args.src
    if any(p.key == "farklecam_quantized" for p in onnx.load(str(src)).metadata_props):
        src = dequantized(src, args.dst.with_suffix(".float.onnx"))
    quantize_detector(src, args.dst, pool[: args.count], reduce_range=not args.full_range)
    if src != args.src:
        src.unlink()
    print(f"wrote {args.dst} ({args.dst.stat().st_size / 1e6:.1f} MB) from {min(args.count, len(pool))} frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
