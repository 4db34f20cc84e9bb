"""Tiny hand-built ONNX models that honour docs/model-contract.md, for plumbing tests.

They need the ``onnx`` package (a training extra); tests that use them skip without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from farklecam.vision.reading import Reading


def _save(graph, path: Path, metadata: dict[str, str]) -> Path:  # type: ignore[no-untyped-def]
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def make_detector(path: Path, raw: np.ndarray, imgsz: int = 64, dynamic: bool = False) -> Path:
    """A "detector" whose output is always ``raw`` (1, 4 + nc, N), plus 0 x the input.

    ``dynamic`` leaves the input's height and width free, as ``export(dynamic=True)`` does.
    """
    from onnx import TensorProto, helper, numpy_helper

    raw = np.asarray(raw, np.float32)
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
        helper.make_node("Add", ["raw", "nothing"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "fake_detector",
        [
            helper.make_tensor_value_info(
                "images", TensorProto.FLOAT, [1, 3, "height", "width"] if dynamic else [1, 3, imgsz, imgsz]
            )
        ],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(raw.shape))],
        initializer=[
            numpy_helper.from_array(raw, "raw"),
            numpy_helper.from_array(np.zeros(1, np.float32), "zero"),
        ],
    )
    nc = raw.shape[1] - 4
    names = {i: "die" if nc == 1 else f"c{i}" for i in range(nc)}
    meta = {"imgsz": f"[{imgsz}, {imgsz}]", "names": repr(names), "task": "detect", "stride": "32"}
    return _save(graph, path, meta)


def _linear_on_mean_planes(name: str, weights: np.ndarray, bias: np.ndarray, batch: int | str):  # type: ignore[no-untyped-def]
    """Graph ``crops`` (batch, planes, 64, 64) -> plane means @ ``weights`` (planes, k) + ``bias`` = ``logits``."""
    from onnx import TensorProto, helper, numpy_helper

    planes, k = weights.shape
    nodes = [
        helper.make_node("ReduceMean", ["crops"], ["mean"], axes=[2, 3], keepdims=0),
        helper.make_node("MatMul", ["mean", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["logits"]),
    ]
    return helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, [batch, planes, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, k])],
        initializer=[numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")],
    )


def make_classifier(
    path: Path, weights: np.ndarray | None = None, batch: int | str = "n", not_die: bool = False
) -> Path:
    """A "classifier": logits = mean RGB of the crop @ weights (3, 7) x 20.

    With the default weights a bright red crop reads "1", green "2", blue "3", black "cocked".
    With ``not_die`` an eighth class, "not_die", wins on black crops instead (cocked second).
    """

    if weights is None:
        weights = np.array(
            [
                [1, 0, 0, 0, 0, 0, -1],
                [0, 1, 0, 0, 0, 0, -1],
                [0, 0, 1, 0, 0, 0, -1],
            ],
            np.float32,
        )
    weights = np.asarray(weights, np.float32) * 20.0
    bias = np.array([0, 0, 0, 0, 0, 0, 0.2 * 20], np.float32)
    names_list = ["1", "2", "3", "4", "5", "6", "cocked"]
    if not_die:
        weights = np.concatenate([weights, np.full((3, 1), -20.0, np.float32)], axis=1)
        bias = np.append(bias, 0.3 * 20).astype(np.float32)
        names_list.append("not_die")
    graph = _linear_on_mean_planes("fake_classifier", weights, bias, batch)
    return _save(graph, path, {"names": json.dumps(names_list), "crop_size": "64", "crop_context": "0.15"})


def make_cocked_test(
    path: Path,
    names: tuple[str, ...] = ("flat", "cocked"),
    threshold: str | None = "0.5",
    planes: int = 4,
    fusion: str | None = None,
    undo_foreshortening: str | None = None,
    neighbour_weight: float = 0.0,
) -> Path:
    """A "cocked test": cocked logit = 20 x (mean of the view-sine plane - 0.5) - 20 x mean red, flat logit 0.

    A die seen more steeply than 30 degrees (sine > 0.5) reads cocked, unless it is red.
    With ``planes=5`` the fifth (neighbour) plane's mean adds ``neighbour_weight`` times itself.
    """

    weights = np.zeros((planes, len(names)), np.float32)
    weights[min(3, planes - 1), -1] = 20.0
    weights[0, -1] = -20.0
    if planes == 5:
        weights[4, -1] = neighbour_weight
    bias = np.zeros(len(names), np.float32)
    bias[-1] = -10.0
    graph = _linear_on_mean_planes("fake_cocked_test", weights, bias, "n")
    meta = {"names": json.dumps(list(names)), "crop_size": "64", "crop_context": "0.15"}
    if threshold is not None:
        meta["threshold"] = threshold
    if fusion is not None:
        meta["fusion"] = fusion
    if undo_foreshortening is not None:
        meta["undo_foreshortening"] = undo_foreshortening
    return _save(graph, path, meta)


def raw_head(boxes_cxcywh: list[list[float]], scores: list[float], n_total: int = 20) -> np.ndarray:
    """A raw one-class head (1, 5, n_total) holding the given boxes, padded with zero scores."""
    raw = np.zeros((1, 5, n_total), np.float32)
    for i, (box, score) in enumerate(zip(boxes_cxcywh, scores, strict=True)):
        raw[0, :4, i] = box
        raw[0, 4, i] = score
    raw[0, 2:4, len(scores) :] = 1.0
    return raw


def make_reading(
    xyxy: list[list[float]],
    face: list[int],
    status: list[str],
    cocked: list[bool] | None = None,
    image_size: tuple[int, int] | None = None,
) -> Reading:
    """A reading with fixed confidences (0.9 / 0.9), for tests of what consumes readings."""
    n = len(xyxy)
    data = {"cocked": np.array(cocked)} if cocked is not None else {}
    return Reading(
        xyxy=np.array(xyxy, np.float32).reshape(-1, 4),
        confidence=[0.9] * n,
        face=face,
        face_confidence=[0.9] * n,
        status=status,
        data=data,
        image_size=image_size,
    )


def make_level_detector(
    path: Path,
    cell: tuple[int, int],
    sides: tuple[int, int, int, int],
    logit: float,
    imgsz: int = 64,
    dynamic: bool = False,
) -> Path:
    """A fixed-size "detector" with a per-level head (``boxes_S``, ``logits_S`` for strides 8, 16, 32).

    One cell of the stride-8 level, ``cell`` = (row, column), has class logit ``logit`` and a box
    whose distance to each side (left, top, right, bottom) is ``sides`` grid units; every other cell
    has logit -20. ``dynamic`` frees the input's height and width (the outputs stay sized for ``imgsz``).
    """
    from onnx import TensorProto, helper, numpy_helper

    reg_max = 16
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
    ]
    initializers, outputs = [numpy_helper.from_array(np.zeros(1, np.float32), "zero")], []
    for stride in (8, 16, 32):
        n = imgsz // stride
        boxes = np.full((1, 4 * reg_max, n, n), -20.0, np.float32)
        boxes[0, [side * reg_max + d for side, d in enumerate(sides)]] = 20.0
        logits = np.full((1, 1, n, n), -20.0, np.float32)
        if stride == 8:
            logits[0, 0, cell[0], cell[1]] = logit
        for name, value in ((f"boxes_{stride}", boxes), (f"logits_{stride}", logits)):
            initializers.append(numpy_helper.from_array(value, f"{name}_value"))
            nodes.append(helper.make_node("Add", [f"{name}_value", "nothing"], [name]))
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)))
    graph = helper.make_graph(
        nodes,
        "fake_level_detector",
        [
            helper.make_tensor_value_info(
                "images", TensorProto.FLOAT, [1, 3, "height", "width"] if dynamic else [1, 3, imgsz, imgsz]
            )
        ],
        outputs,
        initializer=initializers,
    )
    meta = {"imgsz": f"[{imgsz}, {imgsz}]", "names": repr({0: "die"}), "task": "detect", "stride": "32"}
    return _save(graph, path, meta)
