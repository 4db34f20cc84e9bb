"""Train and export the one-class die detector with ultralytics (training extra only).

The detector finds every die and its whole-die box; the face is read later
by :mod:`farklecam.models.training.classifier` on a full-resolution crop. One class converges on
a CPU in tens of epochs where six face classes from scratch do not.
The network is built from its yaml: there are no pretrained weights, and
nothing is ever downloaded (:func:`farklecam.models.training.offline.go_offline` runs first).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from farklecam.models.training.offline import go_offline
from farklecam.vision.detection.yolo_head import level_strides

__all__ = [
    "DETECTOR_NAMES",
    "DetectorConfig",
    "add_metadata",
    "branch_convs",
    "cut_head",
    "export_detector",
    "farklecam_metadata",
    "recommend_conf",
    "train_detector",
]

#: The detector's one class, as ultralytics writes ``names`` metadata.
DETECTOR_NAMES = {0: "die"}


@dataclass(frozen=True)
class DetectorConfig:
    """Everything that decides a detector training run (hashed into ``train_config_sha``).

    Attributes:
        model: ultralytics model yaml, built from scratch.
        imgsz: square training and export size in pixels.
        epochs: training epochs.
        batch: images per batch.
        seed: ultralytics seed (with ``deterministic``).
        device: ``"cpu"`` or a CUDA index such as ``"0"``.
        workers: data-loading workers (2 CPU cores are shared with training).
        patience: epochs without improvement before stopping early.
        mosaic_off: final epochs trained without mosaic (closer to real frames).
        threads: torch CPU threads (ultralytics would use all cores but one: half of a 2-core box).
        warmup_epochs: learning-rate warm-up (shorter when fine-tuning our own checkpoint).
    """

    model: str = "yolov8n.yaml"
    imgsz: int = 320
    epochs: int = 30
    batch: int = 16
    seed: int = 0
    device: str = "cpu"
    workers: int = 2
    patience: int = 50
    mosaic_off: int = 5
    threads: int = max(1, os.cpu_count() or 1)
    warmup_epochs: float = 3.0

    def train_args(self) -> dict[str, Any]:
        """Keyword arguments for ``YOLO.train`` (besides data, project and name)."""
        return {
            "epochs": self.epochs,
            "imgsz": self.imgsz,
            "batch": self.batch,
            "seed": self.seed,
            "deterministic": True,
            "device": self.device,
            "workers": self.workers,
            "patience": self.patience,
            "close_mosaic": self.mosaic_off,
            "warmup_epochs": self.warmup_epochs,
            "cache": "ram",
            "amp": False,  # the AMP check loads a pretrained model (a download); CPU ignores AMP anyway
            "plots": False,
            "degrees": 10.0,
            "fliplr": 0.5,
            "flipud": 0.5,
            "hsv_h": 0.05,
            "exist_ok": True,
            "verbose": False,
        }


def _last_checkpoint(run_dir: Path) -> Path | None:
    last = run_dir / "weights" / "last.pt"
    return last if last.exists() else None


def train_detector(
    data_yaml: Path, run_dir: Path, config: DetectorConfig, *, init: Path | None = None, resume: bool = True
) -> Path:
    """Train (or resume) a detector run in ``run_dir`` and return its best checkpoint.

    The network starts from ``config.model`` (random weights) or, for a second
    stage, from ``init``, a checkpoint of an earlier stage of ours.

    A run interrupted part-way leaves ``weights/last.pt``; with ``resume``
    the next call continues it (ultralytics restores optimiser, epoch and
    arguments) unless ``run_dir/finished`` says it completed.

    Returns:
        ``run_dir/weights/best.pt`` (or ``last.pt`` when no validation ran).
    """
    go_offline()
    os.environ.setdefault("OMP_NUM_THREADS", str(config.threads))
    from ultralytics.models import YOLO  # after go_offline: ultralytics reads its switches at import
    from ultralytics.utils import torch_utils

    # select_device() sets torch's thread count from this module global; ultralytics imports it
    # there from ultralytics.utils without re-exporting it, hence the ignore.
    torch_utils.NUM_THREADS = config.threads  # type: ignore[attr-defined]
    finished = run_dir / "finished"
    last = _last_checkpoint(run_dir)
    if resume and last is not None and not finished.exists():
        YOLO(str(last)).train(resume=True)
    elif not (resume and finished.exists()):
        model = YOLO(str(init) if init is not None else config.model)
        model.train(data=str(data_yaml), project=str(run_dir.parent), name=run_dir.name, **config.train_args())
    finished.write_text(json.dumps({"config": config.__dict__}) + "\n")
    best = run_dir / "weights" / "best.pt"
    return best if best.exists() else run_dir / "weights" / "last.pt"


def recommend_conf(checkpoint: Path, data_yaml: Path, config: DetectorConfig) -> float:
    """The score threshold with the best F1 on the dataset's validation split (never the holdout).

    Written to the ONNX metadata as ``farklecam_det_conf``, which
    ``farklecam.vision.detection.detector`` uses when no threshold is given. Clipped to 0.1..0.7 so
    a tiny validation split cannot pick an extreme.
    """
    go_offline()
    from ultralytics.models import YOLO

    metrics = YOLO(str(checkpoint)).val(
        data=str(data_yaml), imgsz=config.imgsz, batch=config.batch, device=config.device, plots=False, verbose=False
    )
    f1 = np.asarray(metrics.box.f1_curve).mean(axis=0)
    if f1.size == 0 or not np.isfinite(f1).any() or f1.max() <= 0:
        return 0.25
    return float(np.clip(np.asarray(metrics.box.px)[int(np.nanargmax(f1))], 0.1, 0.7))


def add_metadata(onnx_path: Path, extra: dict[str, str]) -> None:
    """Add string entries to an ONNX file's ``metadata_props`` (replacing same-named ones)."""
    import onnx

    model = onnx.load(str(onnx_path))
    kept = [p for p in model.metadata_props if p.key not in extra]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    for key, value in extra.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(onnx_path))


#: The last convolution of a level's box (``cv2``) or class (``cv3``) branch in ultralytics' Detect head.
_BRANCH_CONV = re.compile(r"^/model\.\d+/cv([23])\.(\d+)/cv[23]\.\d+\.2/Conv$")


def branch_convs(graph: Any) -> dict[tuple[str, int], Any]:
    """The last convolution of each level's box (``"2"``) and class (``"3"``) branch, keyed by (branch, level).

    These produce what the decoding reads: :func:`cut_head` makes their outputs the
    graph's, and :mod:`farklecam.models.training.quantize` keeps them in float.
    """
    found: dict[tuple[str, int], Any] = {}
    for node in graph.node:
        match = _BRANCH_CONV.match(node.name)
        if match is not None:
            found[(match.group(1), int(match.group(2)))] = node
    return found


def _map_shapes(model: Any, tensors: list[str], imgsz: int) -> dict[str, tuple[int, ...]]:
    """The shapes of some of the graph's tensors when it is run on an ``imgsz`` square."""
    import onnx
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(name) for name in tensors)
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    maps = session.run(tensors, {session.get_inputs()[0].name: np.zeros((1, 3, imgsz, imgsz), np.float32)})
    return {name: tuple(int(d) for d in m.shape) for name, m in zip(tensors, maps, strict=True)}


def _prune(graph: Any, outputs: set[str]) -> None:
    """Drop every node, initializer and shape note of ``graph`` that ``outputs`` do not depend on."""
    needed, kept = set(outputs), []
    for node in reversed(graph.node):  # nodes are in topological order: walk back from the outputs
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(node.input)
    for field, keep in (
        (graph.node, list(reversed(kept))),
        (graph.initializer, [t for t in graph.initializer if t.name in needed]),
        (graph.value_info, [v for v in graph.value_info if v.name in needed]),
    ):
        del field[:]
        field.extend(keep)


def cut_head(onnx_path: Path, out: Path | None = None, imgsz: int = DetectorConfig.imgsz) -> Path:
    """Stop an exported detector's graph at its head's last convolutions (see :mod:`vision.detection.yolo_head`).

    The outputs become ``boxes_S`` (the box branch's raw distributions) and
    ``logits_S`` (the class logits) for each level of stride ``S``; the in-graph
    decoding, an eighth of the network's CPU time, is dropped and done by the
    reader for the few cells over its threshold. Metadata are kept.

    Args:
        onnx_path: a detector exported by ultralytics with its decoded output.
        out: where to write the cut model (default: over ``onnx_path``).
        imgsz: a square input size the model accepts, to measure the levels' strides.

    Returns:
        The written file.

    Raises:
        ValueError: no such file, not an ONNX model, already cut, or no ultralytics Detect head in it.
    """
    import onnx
    from onnx import helper

    if not onnx_path.is_file():
        raise ValueError(f"{onnx_path}: no such file")
    try:
        model = onnx.load(str(onnx_path))
    except Exception as exc:  # protobuf's DecodeError and friends: the file is not a model
        raise ValueError(f"{onnx_path} is not an ONNX model ({type(exc).__name__})") from exc
    graph = model.graph
    if level_strides([o.name for o in graph.output]) is not None:
        raise ValueError(f"{onnx_path} is already cut before its decoding (its outputs are per level)")
    branches = {key: node.output[0] for key, node in branch_convs(graph).items()}
    levels = sorted({level for _, level in branches})
    if not levels or any(("2", lv) not in branches or ("3", lv) not in branches for lv in levels):
        raise ValueError(f"{onnx_path} has no ultralytics Detect head to cut (its branch convolutions were not found)")
    shapes = _map_shapes(model, list(branches.values()), imgsz)
    renamed: dict[str, str] = {}
    for (branch, _level), tensor in sorted(branches.items(), key=lambda item: (item[0][1], item[0][0])):
        stride = imgsz // shapes[tensor][2]
        renamed[f"{'boxes' if branch == '2' else 'logits'}_{stride}"] = tensor
    graph.node.extend(
        helper.make_node("Identity", [src], [name], name=f"/farklecam/{name}") for name, src in renamed.items()
    )
    del graph.output[:]
    graph.output.extend(
        helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, [1, shapes[src][1], None, None])
        for name, src in renamed.items()
    )
    _prune(graph, set(renamed))
    onnx.checker.check_model(model)
    target = out or onnx_path
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target))
    return target


def export_detector(
    checkpoint: Path, out: Path, imgsz: int, metadata: dict[str, str], *, full_head: bool = False
) -> Path:
    """Export a checkpoint to ONNX with a dynamic input size, simplified, and add farklecam's metadata.

    The input's height and width are left free (``dynamic``), so that
    :class:`farklecam.vision.detection.detector.DieDetector` can feed the smallest padded rectangle
    that holds the frame at ``imgsz`` scale (320x256 for a 4:3 frame) rather
    than the full square: about 20 % faster at the same accuracy. (ultralytics
    frees the batch axis with them; the reader feeds one frame.)

    ultralytics writes ``names``, ``imgsz``, ``stride`` and ``task`` itself;
    ``metadata`` adds ``farklecam_version`` and ``train_config_sha``. ``names``
    is rewritten as ``{0: 'die'}`` in ultralytics' own format, whatever the
    checkpoint calls its class (``single_cls`` runs call it ``item``).

    The head is then cut before its decoding (:func:`cut_head`) unless
    ``full_head``: ultralytics can run only the full one, the reader runs both.

    Returns:
        ``out``, the exported file.
    """
    go_offline()
    from ultralytics.models import YOLO

    exported = YOLO(str(checkpoint)).export(
        format="onnx", imgsz=imgsz, dynamic=True, batch=1, simplify=True, device="cpu"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(exported).replace(out)
    add_metadata(out, {"names": repr(DETECTOR_NAMES), **metadata})
    return out if full_head else cut_head(out, imgsz=imgsz)


def farklecam_metadata(onnx_path: Path) -> dict[str, str]:
    """The entries farklecam added to an exported detector (version, config hash, threshold)."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    return {
        p.key: p.value for p in model.metadata_props if p.key.startswith("farklecam_") or p.key == "train_config_sha"
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m models.training.detector export CHECKPOINT --out FILE [--like FILE] [--full-head]`` or ``cut``.

    ``export`` exports without training. ``--like`` copies farklecam's metadata
    (threshold, config hash, version) from an earlier export of the same
    checkpoint, so a model can be re-exported (a new input layout, a newer
    exporter) without retraining or re-validating. ``cut`` turns an export with
    ultralytics' decoded output into a per-level head (:func:`cut_head`).
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m farklecam.models.training.detector",
        description="Export a detector checkpoint to ONNX without training.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="export a checkpoint to ONNX")
    export.add_argument("checkpoint", type=Path, help="an ultralytics .pt of ours")
    export.add_argument("--out", type=Path, required=True, help="the ONNX file to write")
    export.add_argument("--imgsz", type=int, default=DetectorConfig.imgsz, help="the size it was trained at")
    export.add_argument("--like", type=Path, help="copy farklecam's metadata from this earlier export")
    export.add_argument(
        "--full-head", action="store_true", help="keep ultralytics' decoded output (slower; what ultralytics runs)"
    )
    cut = sub.add_parser("cut", help="cut an exported detector's head before its decoding")
    cut.add_argument("source", type=Path, help="an ONNX detector exported by ultralytics")
    cut.add_argument("--out", type=Path, required=True, help="the ONNX file to write")
    args = parser.parse_args(argv)
    if args.command == "cut":
        try:
            out = cut_head(args.source, args.out)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}")  # noqa: T201
            return 2
        print(f"wrote {out}")  # noqa: T201
        return 0
    metadata = farklecam_metadata(args.like) if args.like else {}
    out = export_detector(args.checkpoint, args.out, args.imgsz, metadata, full_head=args.full_head)
    print(f"wrote {out} with {sorted(metadata)}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
