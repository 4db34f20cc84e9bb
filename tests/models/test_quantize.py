"""farklecam.models.training.quantize: the shipped detector turned back into float, and its 7-bit weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from farklecam.models.training.quantize import dequantized  # noqa: E402
from farklecam.vision.detection.detector import DieDetector  # noqa: E402
from farklecam.vision.images import load_image  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "models" / "die_detector.onnx"


def test_the_shipped_detector_has_7_bit_weights() -> None:
    # Full-range int8 weights saturate ONNX Runtime's int8 sums on AVX2 CPUs without VNNI (most laptops
    # before 2021): detection recall fell 1.7-2.7 points there. With 7-bit weights no sum can saturate.
    model = onnx.load(str(SHIPPED))
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["farklecam_quantized"] == "int8-static-qdq-per-channel-7bit-weights"
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    weights = [inits[n.input[0]] for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits]
    int8 = [w for w in weights if w.dtype == np.int8]
    assert int8 and all(int(np.abs(w.astype(np.int16)).max()) <= 64 for w in int8)


@pytest.mark.parametrize("example", ["tray_ok", "tray_cocked", "tray_off_tray", "tray_webcam"])
def test_dequantized_is_the_float_detector_the_int8_file_stands_for(tmp_path: Path, example: str) -> None:
    float_copy = dequantized(SHIPPED, tmp_path / "float.onnx")
    model = onnx.load(str(float_copy))
    assert not {n.op_type for n in model.graph.node} & {"QuantizeLinear", "DequantizeLinear"}
    assert "farklecam_quantized" not in {p.key for p in model.metadata_props}
    frame = load_image(ROOT / "examples" / f"{example}.jpg")
    int8, plain = DieDetector(SHIPPED)(frame).xyxy, DieDetector(float_copy)(frame).xyxy
    # The same dice, boxed within a pixel or two (only the activations' rounding differs); a wrong scale axis
    # or a dropped bias moves or loses boxes.
    assert len(plain) == len(int8) > 0
    assert np.abs(np.sort(plain, axis=0) - np.sort(int8, axis=0)).max() < 2.0
