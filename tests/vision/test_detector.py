from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import ModelLoadError
from farklecam.vision.detection.detector import DieDetector, Letterbox, letterbox
from tests.vision.fakes import make_detector, make_level_detector, raw_head


def test_letterbox_landscape_matches_ultralytics() -> None:
    frame = np.zeros((480, 640, 3), np.uint8)
    padded, box = letterbox(frame, (320, 320))
    assert padded.shape == (320, 320, 3)
    assert box == Letterbox(0.5, 0.0, 40.0)
    assert (padded[:40] == 114).all() and (padded[280:] == 114).all() and (padded[40:280] == 0).all()


def test_letterbox_portrait_and_back() -> None:
    frame = np.zeros((300, 100, 3), np.uint8)
    _, box = letterbox(frame, (64, 64))
    assert box.scale == pytest.approx(64 / 300)
    boxes = np.array([[box.pad_x, 0, box.pad_x + 10, 64]], np.float32)
    back = box.to_frame(boxes, 100, 300)
    assert back[0, 0] == pytest.approx(0, abs=0.5) and back[0, 3] == pytest.approx(300, abs=0.5)


def test_letterbox_with_stride_pads_only_to_the_stride() -> None:
    padded, box = letterbox(np.zeros((480, 640, 3), np.uint8), (320, 320), stride=32)
    assert padded.shape == (256, 320, 3) and box == Letterbox(0.5, 0.0, 8.0)
    padded, box = letterbox(np.zeros((720, 1280, 3), np.uint8), (320, 320), stride=32)
    assert padded.shape == (192, 320, 3) and box == Letterbox(0.25, 0.0, 6.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(8, 2000), st.integers(8, 2000), st.sampled_from([32, 64, 320]))
def test_letterbox_with_stride_keeps_the_scale_and_maps_back(width: int, height: int, size: int) -> None:
    """The padded input is the smallest multiple of the stride that holds the frame at the unpadded scale."""
    frame = np.zeros((height, width, 3), np.uint8)
    square, square_box = letterbox(frame, (size, size))
    padded, box = letterbox(frame, (size, size), stride=32)
    assert box.scale == square_box.scale  # dice are seen at the size the model was trained on
    out_h, out_w = padded.shape[:2]
    assert out_h % 32 == 0 and out_w % 32 == 0 and out_h <= square.shape[0] and out_w <= square.shape[1]
    assert out_h - max(1, round(height * box.scale)) < 32 and out_w - max(1, round(width * box.scale)) < 32
    corners = np.array([[box.pad_x, box.pad_y, out_w - box.pad_x, out_h - box.pad_y]], np.float32)
    back = box.to_frame(corners, width, height)[0]
    assert back[0] == pytest.approx(0, abs=2) and back[1] == pytest.approx(0, abs=2)
    assert back[2] == pytest.approx(width, abs=2 / box.scale) and back[3] == pytest.approx(height, abs=2 / box.scale)


def test_detector_on_fake_model(fake_model_dir: Path) -> None:
    detector = DieDetector(fake_model_dir / "die_detector.onnx")
    assert detector.imgsz == (64, 64) and detector.names == {0: "die"}
    reading = detector(np.zeros((128, 256, 3), np.uint8))
    # Input 64 px: 256x128 is scaled by 1/4 and padded by 16 px top and bottom.
    assert reading.xyxy.tolist() == [[48, 0, 80, 16], [144, 80, 176, 112]]  # the first clipped at the top
    assert reading.image_size == (256, 128)
    assert reading.status.tolist() == ["uncertain", "uncertain"]


def test_detector_maps_boxes_to_frame(tmp_path: Path, onnx_available: None) -> None:
    path = make_detector(tmp_path / "d.onnx", raw_head([[32, 32, 16, 8]], [0.9]), imgsz=64)
    reading = DieDetector(path)(np.zeros((128, 256, 3), np.uint8))
    # scale 1/4, pad_y 16: (24..40, 28..36) in input -> (96..160, 48..80) in the frame.
    assert reading.xyxy.tolist() == [[96, 48, 160, 80]]


def test_dynamic_detector_is_fed_the_smallest_rectangle(tmp_path: Path, onnx_available: None) -> None:
    path = make_detector(tmp_path / "d.onnx", raw_head([[32, 16, 16, 8]], [0.9]), imgsz=64, dynamic=True)
    detector = DieDetector(path)
    assert detector.stride == 32 and detector.imgsz == (64, 64)
    frame = np.zeros((128, 256, 3), np.uint8)
    tensor, box = detector.preprocess(frame)
    assert tensor.shape == (1, 3, 32, 64) and box == Letterbox(0.25, 0.0, 0.0)
    # scale 1/4, no padding: (24..40, 12..20) in input -> (96..160, 48..80) in the frame.
    assert detector(frame).xyxy.tolist() == [[96, 48, 160, 80]]
    fixed = DieDetector(make_detector(tmp_path / "f.onnx", raw_head([[32, 32, 16, 8]], [0.9]), imgsz=64))
    assert fixed.stride is None and fixed.preprocess(frame)[0].shape == (1, 3, 64, 64)


def test_detector_without_imgsz_uses_fixed_shape(tmp_path: Path, onnx_available: None) -> None:
    import onnx

    path = make_detector(tmp_path / "d.onnx", raw_head([[32, 32, 16, 8]], [0.9]), imgsz=64)
    model = onnx.load(str(path))
    del model.metadata_props[:]
    onnx.save(model, str(path))
    assert DieDetector(path).imgsz == (64, 64)


def test_detector_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        DieDetector(tmp_path / "nope.onnx")


def test_threshold_from_metadata(tmp_path: Path, onnx_available: None) -> None:
    from farklecam.vision.detection.detector import CONF_METADATA_KEY, DEFAULT_CONF
    from farklecam.vision.onnx_runtime import load_onnx

    path = make_detector(tmp_path / "d.onnx", raw_head([[32, 32, 16, 8], [10, 10, 4, 4]], [0.9, 0.5]))
    assert DieDetector(path).conf == DEFAULT_CONF
    import onnx

    model = onnx.load(str(path))
    model.metadata_props.add(key=CONF_METADATA_KEY, value="0.6")
    onnx.save(model, str(path))
    assert DieDetector(path).conf == 0.6 and len(DieDetector(path)(np.zeros((64, 64, 3), np.uint8))) == 1
    assert DieDetector(load_onnx(path), conf=0.1).conf == 0.1


def test_detector_decodes_a_per_level_head(tmp_path: Path, onnx_available: None) -> None:
    """A cell at column 4, row 3 of the stride-8 level, 2 grid units to each side: (20..52, 12..44) in input pixels."""
    detector = DieDetector(make_level_detector(tmp_path / "d.onnx", cell=(3, 4), sides=(2, 2, 2, 2), logit=3.0))
    assert detector.per_level
    reading = detector(np.zeros((128, 256, 3), np.uint8))
    # scale 1/4, pad_y 16: (20..52, 12..44) in input -> (80..208, -16..112) in the frame, clipped at the top.
    np.testing.assert_allclose(reading.xyxy, [[80, 0, 208, 112]], atol=1e-3)
    assert reading.confidence.tolist() == pytest.approx([1 / (1 + np.exp(-3.0))])
    assert len(DieDetector(detector.model, conf=0.96)(np.zeros((64, 64, 3), np.uint8))) == 0


def test_detector_rejects_a_per_level_head_of_the_wrong_size(tmp_path: Path, onnx_available: None) -> None:
    path = make_level_detector(tmp_path / "d.onnx", cell=(0, 0), sides=(1, 1, 1, 1), logit=3.0, dynamic=True)
    detector = DieDetector(path)  # fed 32 x 64 for a 2:1 frame, its levels sized for 64 x 64
    with pytest.raises(ModelLoadError, match=r"not a YOLO detector.*do not fit"):
        detector(np.zeros((128, 256, 3), np.uint8))
