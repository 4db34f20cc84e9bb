"""Give an exported face classifier a second output, ``embedding``: the pooled features its linear head reads.

A table's profile (:mod:`farklecam.vision.profiles`) learns that table's dice from a few
corrections by comparing these features, which the classifier computes anyway, so the
reader gets them at no extra cost and with no training stack at run time. Only the
pooled tensor is named and exposed: no node's arithmetic changes, so ``logits`` stay
bit for bit what they were (``tests/models/test_embedding_output.py``)::

    python -m farklecam.models.training.embedding_output models/face_classifier.onnx
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["EMBEDDING_OUTPUT", "add_embedding_output", "main"]

#: Name of the graph output holding each crop's pooled features, (n, channels).
EMBEDDING_OUTPUT = "embedding"


def _pooled_node(graph: Any, path: Path) -> Any:
    """The one ``GlobalAveragePool`` of the graph: where the features stop depending on position."""
    pools = [node for node in graph.node if node.op_type == "GlobalAveragePool"]
    if len(pools) != 1:
        raise ValueError(f"{path} has {len(pools)} GlobalAveragePool nodes; expected exactly one (a FaceNet export)")
    return pools[0]


def _rename(graph: Any, old: str, new: str) -> None:
    """Rename the tensor ``old`` to ``new`` wherever a node makes or reads it."""
    for node in graph.node:
        for i, name in enumerate(node.output):
            if name == old:
                node.output[i] = new
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
    for info in graph.value_info:
        if info.name == old:
            info.name = new


def add_embedding_output(model_path: Path, out: Path | None = None) -> Path:
    """Expose the global average pool's output of the classifier ``model_path``, flattened, as ``embedding``.

    Where the pool feeds a ``Flatten`` (as every FaceNet export does), that node's output is
    renamed; otherwise a ``Flatten`` is added beside the graph. A model that already has the
    output is written unchanged. Metadata and the ``logits`` output are kept.

    Args:
        model_path: the exported ONNX classifier.
        out: where to write the result (None: over ``model_path``).

    Returns:
        The path written.

    Raises:
        ValueError: the graph has no single global average pool, or a tensor is already named ``embedding``.
    """
    import onnx
    from onnx import helper

    proto = onnx.load(str(model_path))
    graph = proto.graph
    target = out or model_path
    if any(o.name == EMBEDDING_OUTPUT for o in graph.output):
        onnx.save(proto, str(target))
        return target
    made = {name for node in graph.node for name in node.output}
    if EMBEDDING_OUTPUT in made or EMBEDDING_OUTPUT in {i.name for i in graph.input}:
        raise ValueError(f"{model_path} already has a tensor named {EMBEDDING_OUTPUT!r} that is no output")
    pooled = _pooled_node(graph, model_path).output[0]
    readers = [node for node in graph.node if pooled in node.input]
    flatten = next((node for node in readers if node.op_type == "Flatten"), None)
    if flatten is not None:
        _rename(graph, flatten.output[0], EMBEDDING_OUTPUT)
    else:
        graph.node.append(helper.make_node("Flatten", [pooled], [EMBEDDING_OUTPUT], axis=1, name="embedding_flatten"))
    inferred = onnx.shape_inference.infer_shapes(proto)
    shape: list[int | str] = ["n", 0]
    for info in inferred.graph.value_info:
        if info.name == EMBEDDING_OUTPUT:
            dims = info.type.tensor_type.shape.dim
            shape = [d.dim_param or d.dim_value or "n" for d in dims]
    graph.output.append(helper.make_tensor_value_info(EMBEDDING_OUTPUT, onnx.TensorProto.FLOAT, shape))
    onnx.checker.check_model(proto)
    onnx.save(proto, str(target))
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: add the ``embedding`` output to a classifier file in place (or to ``--out``)."""
    parser = argparse.ArgumentParser(
        prog="python -m farklecam.models.training.embedding_output",
        description="add the pooled features before the linear head as a second output, 'embedding'",
    )
    parser.add_argument("model", type=Path, help="the face classifier's ONNX file")
    parser.add_argument("--out", type=Path, help="write here instead of over MODEL")
    args = parser.parse_args(argv)
    if not args.model.is_file():
        sys.stderr.write(f"embedding_output: error: no such file: {args.model}\n")
        return 2
    try:
        written = add_embedding_output(args.model, args.out)
    except ValueError as exc:
        sys.stderr.write(f"embedding_output: error: {exc}\n")
        return 2
    sys.stdout.write(f"{written}: outputs logits and {EMBEDDING_OUTPUT}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
