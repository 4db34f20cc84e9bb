"""farklecam.models.training.embedding_output: the classifier's pooled features as a second output, logits untouched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from farklecam.models.training.embedding_output import EMBEDDING_OUTPUT, add_embedding_output, main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "models" / "face_classifier.onnx"


def without_embedding(path: Path, out: Path) -> Path:
    """The shipped classifier as it was exported: only ``logits`` out, the pooled tensor unnamed."""
    proto = onnx.load(str(path))
    kept = [o for o in proto.graph.output if o.name != EMBEDDING_OUTPUT]
    del proto.graph.output[:]
    proto.graph.output.extend(kept)
    for node in proto.graph.node:
        node.output[:] = ["/Flatten_output_0" if n == EMBEDDING_OUTPUT else n for n in node.output]
        node.input[:] = ["/Flatten_output_0" if n == EMBEDDING_OUTPUT else n for n in node.input]
    onnx.save(proto, str(out))
    return out


def run(path: Path, crops: np.ndarray) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, {"crops": crops}), strict=True))


def test_the_shipped_classifier_gives_logits_and_its_pooled_features() -> None:
    outputs = [o.name for o in onnx.load(str(SHIPPED)).graph.output]
    assert outputs == ["logits", EMBEDDING_OUTPUT]


def test_adding_the_output_leaves_every_logit_as_it_was(tmp_path: Path) -> None:
    plain = without_embedding(SHIPPED, tmp_path / "plain.onnx")
    assert [o.name for o in onnx.load(str(plain)).graph.output] == ["logits"]
    added = add_embedding_output(plain, tmp_path / "added.onnx")
    crops = np.random.default_rng(0).random((9, 3, 64, 64), dtype=np.float32)
    before, after = run(plain, crops), run(added, crops)
    np.testing.assert_array_equal(before["logits"], after["logits"])  # bit for bit
    assert after[EMBEDDING_OUTPUT].shape == (9, 192)
    # The features are what the linear head reads: logits = features @ W.T + b.
    weights = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load(str(added)).graph.initializer}
    expected = after[EMBEDDING_OUTPUT] @ weights["head.weight"].T + weights["head.bias"]
    np.testing.assert_allclose(after["logits"], expected, rtol=1e-4, atol=1e-4)
    meta = {p.key: p.value for p in onnx.load(str(added)).metadata_props}
    assert meta == {p.key: p.value for p in onnx.load(str(SHIPPED)).metadata_props}


def test_a_model_that_has_it_is_written_unchanged_and_one_without_a_pool_is_refused(tmp_path: Path) -> None:
    again = add_embedding_output(SHIPPED, tmp_path / "again.onnx")
    assert [o.name for o in onnx.load(str(again)).graph.output] == ["logits", EMBEDDING_OUTPUT]
    from tests.vision.fakes import make_classifier

    fake = make_classifier(tmp_path / "fake.onnx")
    with pytest.raises(ValueError, match="0 GlobalAveragePool nodes"):
        add_embedding_output(fake)


def test_the_command_line_says_what_is_wrong_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing.onnx")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    plain = without_embedding(SHIPPED, tmp_path / "plain.onnx")
    assert main([str(plain)]) == 0
    assert [o.name for o in onnx.load(str(plain)).graph.output] == ["logits", EMBEDDING_OUTPUT]
