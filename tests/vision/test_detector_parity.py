"""Our numpy letterbox + decoding + NMS must give what ultralytics gives, on both head layouts.

ultralytics exports a small one-class YOLO (random weights, its batch norms fitted to the
examples so that the cells' scores and boxes vary) with its decoded head and predicts on the examples; the reader then
runs that file, and the same file cut before its decoding (:func:`farklecam.models.training.detector.cut_head`,
what farklecam ships). Needs the training extra; runs ultralytics in a subprocess, offline, so
this test process never imports it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from farklecam.vision.detection.detector import DieDetector
from farklecam.vision.images import load_image
from farklecam.vision.onnx_runtime import load_onnx

ROOT = Path(__file__).resolve().parents[2]
IMAGES = sorted((ROOT / "examples").glob("*.jpg"))[:3]
CONF = 0.05

pytestmark = [
    pytest.mark.train,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None, reason="needs the training extra"),
    pytest.mark.skipif(not IMAGES, reason="needs the examples"),
]


def _ultralytics_export_and_predict(tmp_path: Path) -> tuple[Path, list[dict[str, list[list[float]]]]]:
    """A full-head ONNX export of a random one-class yolov8n, and ultralytics' predictions with it."""
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from farklecam.models.training.offline import go_offline
        go_offline(Path({str(tmp_path / "ultralytics")!r}))
        import torch
        import ultralytics
        from ultralytics import YOLO
        from farklecam.vision.images import load_image
        torch.manual_seed(0)
        yaml = Path(ultralytics.__file__).parent / "cfg" / "models" / "v8" / "yolov8.yaml"
        one_class = Path("yolov8n.yaml")  # the scale comes from the name
        one_class.write_text(yaml.read_text().replace("nc: 80", "nc: 1"))
        model = YOLO(str(one_class))
        # Random weights leave every activation near zero (every score 0.5, ties everywhere): let the
        # batch norms measure the examples' statistics first, so that scores and boxes vary.
        net = model.model
        for layer in net.modules():
            if isinstance(layer, torch.nn.BatchNorm2d):
                layer.momentum = None  # a plain average over the batches below
        images = [torch.from_numpy(load_image(p)[:, :, ::-1].copy()).permute(2, 0, 1).float() / 255
                  for p in {[str(p) for p in IMAGES]!r}]
        net.train()
        with torch.no_grad():
            for image in images:
                net(torch.nn.functional.interpolate(image[None], size=(256, 320)))
        net.eval()
        onnx_path = model.export(format="onnx", imgsz=320, dynamic=True, batch=1, simplify=True, device="cpu")
        exported = YOLO(onnx_path, task="detect")
        out = []
        for path in {[str(p) for p in IMAGES]!r}:
            r = exported.predict(load_image(path), imgsz=320, conf={CONF}, iou=0.5, verbose=False)[0]
            out.append({{"xyxy": r.boxes.xyxy.numpy().tolist(), "conf": r.boxes.conf.numpy().tolist()}})
        print(json.dumps({{"onnx": str(Path(onnx_path).resolve()), "predictions": out}}))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return Path(answer["onnx"]), answer["predictions"]


def test_both_heads_match_ultralytics(tmp_path: Path) -> None:
    from farklecam.models.training.detector import cut_head

    full, theirs = _ultralytics_export_and_predict(tmp_path)
    cut = cut_head(full, tmp_path / "cut.onnx")
    assert load_onnx(cut).output_names == ("boxes_8", "logits_8", "boxes_16", "logits_16", "boxes_32", "logits_32")
    for model in (full, cut):
        detector = DieDetector(model, conf=CONF, iou=0.5, max_det=300)
        assert detector.per_level == (model == cut)
        for path, ref in zip(IMAGES, theirs, strict=True):
            mine = detector(load_image(path))
            ref_xyxy = np.asarray(ref["xyxy"], np.float32).reshape(-1, 4)
            ref_conf = np.asarray(ref["conf"], np.float32)
            assert len(ref_conf) >= 2, "the random network should leave several boxes after NMS"
            order = np.argsort(-ref_conf, kind="stable")
            k = min(len(mine), len(ref_conf), 20)
            assert abs(len(mine) - len(ref_conf)) <= 1, path.name  # ties at the threshold may differ by one
            np.testing.assert_allclose(mine.confidence[:k], ref_conf[order][:k], atol=1e-3)
            np.testing.assert_allclose(mine.xyxy[:k], ref_xyxy[order][:k], atol=1.0)
