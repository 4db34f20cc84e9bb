"""One ONNX file averaging several networks: the shipped cocked test and altered copies of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import numpy_helper

from farklecam.models.training.ensemble import EnsembleError, main, merge
from farklecam.vision.pose.cocked import CockedTest
from farklecam.vision.reader import default_model_dir

SHIPPED = default_model_dir() / "cocked_test.onnx"


def _shifted(model: onnx.ModelProto, shift: float) -> onnx.ModelProto:
    """A copy whose head's bias is shifted by ``shift`` per class (so its logits move by exactly that)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    bias = next(t for t in copy.graph.initializer if len(t.dims) == 1 and t.dims[0] == 2)
    values = numpy_helper.to_array(bias) + np.asarray([shift, -shift], np.float32)
    bias.CopyFrom(numpy_helper.from_array(values.astype(np.float32), bias.name))
    return copy


def _logits(model: onnx.ModelProto, crops: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"crops": crops})[0])


@settings(max_examples=5, deadline=None)
@given(shifts=st.lists(st.floats(-3.0, 3.0), min_size=2, max_size=4), seed=st.integers(0, 2**16))
def test_the_ensemble_outputs_the_mean_of_its_members_logits(shifts: list[float], seed: int) -> None:
    shipped = onnx.load(str(SHIPPED))
    members = [_shifted(shipped, s) for s in shifts]
    crops = np.random.default_rng(seed).random((3, 4, 64, 64), dtype=np.float32)
    expected = np.mean([_logits(m, crops) for m in members], axis=0)
    np.testing.assert_allclose(_logits(merge(members), crops), expected, atol=1e-4)


def test_the_merged_file_is_a_cocked_test_with_the_first_members_metadata(tmp_path: Path) -> None:
    out = tmp_path / "ensemble.onnx"
    assert main([str(SHIPPED), str(SHIPPED), "--out", str(out)]) == 0
    merged, alone = CockedTest(out), CockedTest(SHIPPED)
    settings_of = [(t.crop_size, t.crop_context, t.threshold, t.neighbours) for t in (merged, alone)]
    assert settings_of[0] == settings_of[1]
    assert merged.model.metadata["ensemble_members"] == 2
    crops = np.random.default_rng(1).random((2, 4, 64, 64), dtype=np.float32)
    np.testing.assert_allclose(merged.model.run(crops)[0], alone.model.run(crops)[0], atol=1e-5)


def test_members_reading_different_inputs_are_refused() -> None:
    classifier = onnx.load(str(default_model_dir() / "face_classifier.onnx"))
    with pytest.raises(EnsembleError, match="member 1"):
        merge([onnx.load(str(SHIPPED)), classifier])
    with pytest.raises(EnsembleError, match="two members"):
        merge([onnx.load(str(SHIPPED))])


def test_a_missing_member_is_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ensemble.onnx"
    assert main([str(SHIPPED), str(tmp_path / "nope.onnx"), "--out", str(out)]) == 2
    assert "no such model" in capsys.readouterr().err
    assert not out.exists()
