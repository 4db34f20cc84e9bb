"""Smoke test of the training path: a tiny detector and classifier train, export and run, offline.

It proves in CI that ``python -m farklecam.models.training`` works end to end without the
network: every socket connection and DNS lookup during training and export is
recorded and refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from farklecam.datasets.real import real_data_root

pytestmark = [
    pytest.mark.train,
    pytest.mark.slow,
    pytest.mark.skipif(not real_data_root().is_dir(), reason="shared real photos not present"),
    # torch and ultralytics warn about their own internals (legacy exporter, deprecations).
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning", "ignore::FutureWarning"),
]


def test_quick_training_exports_working_models_offline(tmp_path: Path, no_network: list[Any]) -> None:
    from farklecam.models.training.offline import go_offline

    go_offline(tmp_path / "ultralytics_config")
    from farklecam.models.training.reproduce import main

    out = tmp_path / "models"
    args = ["--quick", "--hold-validation", "--out", str(out), "--runs", str(tmp_path / "runs"), "--name", "smoke"]
    args += ["--cls-streaks", "0.5", "--cls-motion-blur", "0.5"]  # the shipped recipe's crop effects run too
    args += ["--cls-width-scale", "1.5"]
    assert main(args) == 0
    assert no_network == []

    import onnxruntime as ort

    detector = ort.InferenceSession(str(out / "die_detector.onnx"), providers=["CPUExecutionProvider"])
    meta = detector.get_modelmeta().custom_metadata_map
    assert {"names", "imgsz", "stride", "farklecam_version", "train_config_sha"} <= meta.keys()
    assert meta["names"] == "{0: 'die'}"
    (inp,) = detector.get_inputs()
    assert inp.name == "images" and inp.shape[1] == 3 and all(isinstance(d, str) for d in inp.shape[2:])
    rng = np.random.default_rng(0)
    names = [o.name for o in detector.get_outputs()]
    assert names == ["boxes_8", "logits_8", "boxes_16", "logits_16", "boxes_32", "logits_32"]  # cut before decoding
    for shape in ((64, 64), (32, 64)):  # exported with a free input size: the reader feeds the smallest rectangle
        outputs = dict(
            zip(names, detector.run(None, {"images": rng.random((1, 3, *shape), dtype=np.float32)}), strict=True)
        )
        for stride in (8, 16, 32):
            cells = (shape[0] // stride, shape[1] // stride)
            assert outputs[f"boxes_{stride}"].shape == (1, 64, *cells)  # 4 sides x 16 distance bins
            assert outputs[f"logits_{stride}"].shape == (1, 1, *cells)  # one class

    classifier = ort.InferenceSession(str(out / "face_classifier.onnx"), providers=["CPUExecutionProvider"])
    meta = classifier.get_modelmeta().custom_metadata_map
    assert json.loads(meta["names"]) == ["1", "2", "3", "4", "5", "6", "cocked", "not_die"]
    assert meta["crop_size"] == "64" and float(meta["crop_context"]) == pytest.approx(0.15)
    for n in (1, 6):
        (logits,) = classifier.run(["logits"], {"crops": np.zeros((n, 3, 64, 64), np.float32)})
        assert logits.shape == (n, len(json.loads(meta["names"])))

    import onnx

    record = json.loads((out / "training.json").read_text())
    assert record["detector"]["stages"]["single"]["data"]["images"]["train"]
    assert record["classifier"]["steps"] == 3
    assert record["classifier"]["config"]["streaks"] == 0.5 and record["classifier"]["config"]["motion_blur"] == 0.5
    first_conv = next(t for t in onnx.load(str(out / "face_classifier.onnx")).graph.initializer if len(t.dims) == 4)
    assert record["classifier"]["config"]["width"] == 1.5 and list(first_conv.dims) == [24, 3, 3, 3]
    assert record["real_validation_held_back"] is True
    assert no_network == []
