"""Several trained networks as one ONNX file that outputs the mean of their logits.

Seeds of one recipe err apart as much as recipes differ (the cocked test's F1
spreads 0.011-0.024 between seeds, ``docs/tried.md``), so averaging members is the
cheapest way to buy back that spread. The members are merged into one graph, so
the reader still loads one file, with one contract (``docs/model-contract.md``):
the same input, one ``logits`` output, the first member's metadata.

Members must take the same input (name, planes, crop size and context) and
output logits of the same shape; a mismatch is refused with the member named.

Example::

    python -m farklecam.models.training.ensemble runs/cocked_A0/cocked_test.onnx runs/cocked_B0/cocked_test.onnx \
        --out runs/e2.onnx
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import onnx
from onnx import compose, helper

from farklecam.vision.pose.cocked import UNDO_FORESHORTENING_KEY

__all__ = ["EnsembleError", "main", "merge"]

#: Metadata that decides what crops a member reads: members must agree on it.
_INPUT_KEYS = ("names", "crop_size", "crop_context", UNDO_FORESHORTENING_KEY)


class EnsembleError(ValueError):
    """Members that cannot be averaged: different inputs, outputs or crops."""


def _signature(model: onnx.ModelProto) -> tuple[object, ...]:
    def dims(value: onnx.ValueInfoProto) -> tuple[object, ...]:
        return tuple(d.dim_value or d.dim_param for d in value.type.tensor_type.shape.dim)

    meta = {p.key: p.value for p in model.metadata_props}
    return (
        [(i.name, dims(i)) for i in model.graph.input],
        dims(model.graph.output[0]),
        [meta.get(k) for k in _INPUT_KEYS],
    )


def merge(members: Sequence[onnx.ModelProto]) -> onnx.ModelProto:
    """One model feeding its input to every member and outputting the mean of their first outputs.

    The result keeps the first member's input and output names, opset and metadata.
    Raises :class:`EnsembleError` for fewer than two members or members that differ in
    input, output shape or crop metadata.
    """
    if len(members) < 2:
        raise EnsembleError(f"an ensemble needs two members or more, not {len(members)}")
    first = members[0]
    for index, member in enumerate(members[1:], start=1):
        if _signature(member) != _signature(first):
            raise EnsembleError(
                f"member {index} reads {_signature(member)}, member 0 reads {_signature(first)}: "
                "they cannot be averaged"
            )
    input_names = [i.name for i in first.graph.input]
    output_name = first.graph.output[0].name
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    outputs: list[str] = []
    for index, member in enumerate(members):
        prefix = f"m{index}_"
        renamed = compose.add_prefix(member, prefix)
        rename = {prefix + name: name for name in input_names}
        for node in renamed.graph.node:
            node.input[:] = [rename.get(name, name) for name in node.input]
        nodes.extend(renamed.graph.node)
        initializers.extend(renamed.graph.initializer)
        outputs.append(prefix + output_name)
    nodes.append(helper.make_node("Mean", outputs, [output_name], name="ensemble_mean"))
    graph = helper.make_graph(
        nodes,
        "ensemble",
        list(first.graph.input),
        [first.graph.output[0]],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=list(first.opset_import), ir_version=first.ir_version)
    for prop in first.metadata_props:
        model.metadata_props.add(key=prop.key, value=prop.value)
    model.metadata_props.add(key="ensemble_members", value=str(len(members)))
    onnx.checker.check_model(model)
    return model


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m farklecam.models.training.ensemble MEMBER... --out FILE``: write the members' mean as one model."""
    parser = argparse.ArgumentParser(
        prog="python -m farklecam.models.training.ensemble", description=__doc__.splitlines()[0]
    )
    parser.add_argument("members", nargs="+", type=Path, help="ONNX files taking the same input")
    parser.add_argument("--out", type=Path, required=True, help="where to write the merged model")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.members if not p.is_file()]
    if missing:
        print(f"error: no such model: {', '.join(missing)}", file=sys.stderr)  # noqa: T201
        return 2
    try:
        model = merge([onnx.load(str(p)) for p in args.members])
    except (EnsembleError, onnx.checker.ValidationError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(args.out))
    print(f"wrote {args.out}: the mean of {len(args.members)} members")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
