"""The one place that opens ONNX models: CPU session, metadata, error mapping.

Every failure of onnxruntime leaves this module as a :class:`ModelLoadError` naming the file.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from farklecam.errors import ModelLoadError

if TYPE_CHECKING:
    import onnxruntime

__all__ = ["OnnxModel", "default_threads", "load_onnx", "map_onnx_errors", "parse_metadata_value"]


def default_threads() -> int:
    """Intra-op threads for one session: the CPUs this process may use, at most 4 (small models gain little more)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def parse_metadata_value(text: str) -> Any:
    """Decode one ``custom_metadata_map`` value: JSON (our exporter), else a Python literal (ultralytics), else text."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


@contextlib.contextmanager
def map_onnx_errors(path: Path, action: str = "load") -> Iterator[None]:
    """Turn any onnxruntime failure inside the block into a :class:`ModelLoadError` naming ``path``."""
    try:
        yield
    except ModelLoadError:
        raise
    except Exception as exc:  # onnxruntime raises its own pybind classes, not a common base
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"cannot {action} ONNX model {path}: {message}") from exc


@dataclass(frozen=True, eq=False)
class OnnxModel:
    """An opened ONNX model: its file, CPU session, single input, outputs and metadata.

    ``input_shape`` holds None for dynamic axes; ``metadata`` is the ``custom_metadata_map``
    decoded by :func:`parse_metadata_value`.
    """

    path: Path
    session: onnxruntime.InferenceSession
    input_name: str
    input_shape: tuple[int | str | None, ...]
    output_names: tuple[str, ...]
    metadata: Mapping[str, Any]

    def run(self, tensor: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float32]]:
        """Run the model on one input tensor; returns every output.

        Raises:
            ModelLoadError: the model rejects the input (wrong shape or type for this file).
        """
        with map_onnx_errors(self.path, "run"):
            outputs = self.session.run(list(self.output_names), {self.input_name: tensor})
        return [np.asarray(o) for o in outputs]

    def fixed_dim(self, axis: int) -> int | None:
        """The input's size along ``axis`` if it is fixed in the file, else None."""
        dim = self.input_shape[axis] if axis < len(self.input_shape) else None
        return dim if isinstance(dim, int) and dim > 0 else None


def load_onnx(
    path: str | Path,
    *,
    threads: int | None = None,
    spin: bool = True,
    expect_rank: int | None = 4,
    required_metadata: Sequence[str] = (),
) -> OnnxModel:
    """Open an ONNX model on the CPU with ``threads`` intra-op threads (None: :func:`default_threads`).

    With ``spin`` the worker threads busy-wait for the next operator while a run lasts (waking
    a thread for each short operator costs more than the work). The input must have rank
    ``expect_rank`` (None: any) and the metadata hold ``required_metadata``.

    Raises:
        ModelLoadError: missing file, corrupt model, unexpected input rank or missing metadata.
    """
    p = Path(path)
    if not p.is_file():
        raise ModelLoadError(f"ONNX model not found: {p}")
    # Must be set before onnxruntime is imported: some builds send telemetry otherwise.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    with map_onnx_errors(p):
        import onnxruntime as ort

        if hasattr(ort, "disable_telemetry_events"):
            ort.disable_telemetry_events()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: warnings about unused initialisers are noise
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        # Spinning on after a run would burn CPU the camera loop, the web server and the other models share.
        options.add_session_config_entry("session.force_spinning_stop", "1")
        session = ort.InferenceSession(str(p), sess_options=options, providers=["CPUExecutionProvider"])
        inputs, outputs = session.get_inputs(), session.get_outputs()
        raw_meta = dict(session.get_modelmeta().custom_metadata_map)
    if len(inputs) != 1:
        raise ModelLoadError(f"ONNX model {p} has {len(inputs)} inputs; expected exactly one")
    shape = tuple(d if isinstance(d, int) else None for d in inputs[0].shape)
    if expect_rank is not None and len(shape) != expect_rank:
        raise ModelLoadError(f"ONNX model {p} takes input of shape {shape}; expected rank {expect_rank}")
    metadata = {k: parse_metadata_value(v) for k, v in raw_meta.items()}
    missing = [k for k in required_metadata if k not in metadata]
    if missing:
        raise ModelLoadError(
            f"ONNX model {p} lacks metadata {missing}; re-export it with `python -m farklecam.models.training`"
        )
    return OnnxModel(
        path=p,
        session=session,
        input_name=inputs[0].name,
        input_shape=shape,
        output_names=tuple(o.name for o in outputs),
        metadata=metadata,
    )
