"""Our numpy letterbox + decode + NMS must give what ultralytics gives on the same ONNX file.

Needs the training extra (ultralytics) and the committed detector; runs ultralytics in a
subprocess, offline, so this test process never imports it.
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

from vision.detector import DieDetector
from vision.images import load_image

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "die_detector.onnx"
IMAGES = sorted((ROOT / "examples").glob("*.jpg"))[:3]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None, reason="needs the training extra"),
    pytest.mark.skipif(not MODEL.exists() or not IMAGES, reason="needs the committed detector and examples"),
]


def test_boxes_match_ultralytics(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from models.offline import go_offline
        go_offline(Path({str(tmp_path / "ultralytics")!r}))
        from ultralytics import YOLO
        from vision.images import load_image
        model = YOLO({str(MODEL)!r}, task="detect")
        out = []
        for path in {[str(p) for p in IMAGES]!r}:
            r = model.predict(load_image(path), imgsz={list(DieDetector(MODEL).imgsz)!r}, conf=0.05, iou=0.5,
                              verbose=False)[0]
            out.append({{"xyxy": r.boxes.xyxy.numpy().tolist(), "conf": r.boxes.conf.numpy().tolist()}})
        print(json.dumps(out))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    theirs = json.loads(result.stdout.strip().splitlines()[-1])
    detector = DieDetector(MODEL, conf=0.05, iou=0.5)
    for path, ref in zip(IMAGES, theirs, strict=True):
        mine = detector(load_image(path))
        ref_xyxy = np.asarray(ref["xyxy"], np.float32).reshape(-1, 4)
        ref_conf = np.asarray(ref["conf"], np.float32)
        order = np.argsort(-ref_conf, kind="stable")
        k = min(len(mine), len(ref_conf), 20)
        assert abs(len(mine) - len(ref_conf)) <= 1, path.name  # ties at the threshold may differ by one
        np.testing.assert_allclose(mine.confidence[:k], ref_conf[order][:k], atol=1e-3)
        np.testing.assert_allclose(mine.xyxy[:k], ref_xyxy[order][:k], atol=1.0)
