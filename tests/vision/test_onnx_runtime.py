from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from farklecam.errors import ModelLoadError
from farklecam.vision.onnx_runtime import default_threads, load_onnx, parse_metadata_value
from tests.vision.fakes import make_classifier

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('["1", "2", "cocked"]', ["1", "2", "cocked"]),
        ("{0: 'die'}", {0: "die"}),
        ("[320, 320]", [320, 320]),
        ("64", 64),
        ("0.15", 0.15),
        ("2026-11-30T06:00:00", "2026-11-30T06:00:00"),
        ("detect", "detect"),
    ],
)
def test_parse_metadata_value(text: str, value: Any) -> None:
    assert parse_metadata_value(text) == value


def test_default_threads() -> None:
    assert 1 <= default_threads() <= 4


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"not found: .*absent\.onnx"):
        load_onnx(tmp_path / "absent.onnx")


@pytest.mark.parametrize("content", [b"", b"not a model at all", b"\x08\x07" * 50])
def test_corrupt_file_names_the_path(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(content)
    with pytest.raises(ModelLoadError, match=r"broken\.onnx") as info:
        load_onnx(path)
    assert isinstance(info.value, RuntimeError)


def test_metadata_rank_and_required_keys(tmp_path: Path, onnx_available: None) -> None:
    path = make_classifier(tmp_path / "c.onnx")
    model = load_onnx(path, threads=1)
    assert model.metadata["names"][-1] == "cocked" and model.metadata["crop_size"] == 64
    assert model.input_name == "crops" and model.fixed_dim(0) is None and model.fixed_dim(2) == 64
    with pytest.raises(ModelLoadError, match="rank 2"):
        load_onnx(path, expect_rank=2)
    with pytest.raises(ModelLoadError, match="lacks metadata"):
        load_onnx(path, required_metadata=["imgsz"])


def test_run_with_wrong_input_is_model_error(tmp_path: Path, onnx_available: None) -> None:
    model = load_onnx(make_classifier(tmp_path / "c.onnx"))
    with pytest.raises(ModelLoadError, match="cannot run"):
        model.run(np.zeros((1, 3, 32, 32), np.float32))


def _spin_entries(model: Any) -> tuple[str, str]:
    options = model.session.get_session_options()
    return (
        options.get_session_config_entry("session.intra_op.allow_spinning"),
        options.get_session_config_entry("session.force_spinning_stop"),
    )


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="needs the committed models")
def test_threads_spin_only_while_a_model_runs() -> None:
    from farklecam.vision.reader import DiceReader

    assert _spin_entries(load_onnx(ROOT / "models" / "cocked_test.onnx")) == ("1", "1")
    assert _spin_entries(load_onnx(ROOT / "models" / "cocked_test.onnx", spin=False)) == ("0", "1")
    reader = DiceReader()
    models = (reader.detector.model, reader.classifier.model, reader.cocked_test.model)  # type: ignore[attr-defined, union-attr]
    assert {_spin_entries(m)[0] for m in models} == {"1"}
