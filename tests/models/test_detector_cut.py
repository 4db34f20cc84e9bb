"""``python -m farklecam.models.training.detector cut``: the shipped detector is cut; a graph that is no YOLO head is
refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from farklecam.models.training.detector import main
from farklecam.vision.detection.yolo_head import level_strides
from farklecam.vision.onnx_runtime import load_onnx
from tests.vision.fakes import make_detector, raw_head

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("onnx", reason="needs the training extra")


def test_the_shipped_detector_is_cut_before_its_decoding() -> None:
    model = load_onnx(ROOT / "models" / "die_detector.onnx")
    assert level_strides(model.output_names) == [8, 16, 32]
    assert {"names", "imgsz", "farklecam_det_conf", "train_config_sha"} <= model.metadata.keys()


def test_cut_refuses_a_graph_without_a_detect_head(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_detector(tmp_path / "d.onnx", raw_head([[32, 32, 16, 8]], [0.9]))
    assert main(["cut", str(source), "--out", str(tmp_path / "cut.onnx")]) == 2
    assert "no ultralytics Detect head" in capsys.readouterr().out
    assert not (tmp_path / "cut.onnx").exists()


def test_cut_refuses_a_cut_detector_a_missing_file_and_a_text_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cut", str(ROOT / "models" / "die_detector.onnx"), "--out", str(tmp_path / "again.onnx")]) == 2
    assert "already cut" in capsys.readouterr().out
    assert main(["cut", str(tmp_path / "nope.onnx"), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "nope.onnx" in capsys.readouterr().out
    (tmp_path / "text.onnx").write_text("not a model")
    assert main(["cut", str(tmp_path / "text.onnx"), "--out", str(tmp_path / "y.onnx")]) == 2
    assert "not an ONNX model" in capsys.readouterr().out
