"""Editing an exported ONNX model's metadata in place (calibration results are stored this way)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["set_metadata"]


def set_metadata(model: Path, key: str, value: str) -> None:
    """Set one ``custom_metadata_map`` entry of the ONNX file ``model``, replacing an earlier one."""
    import onnx

    proto = onnx.load(str(model))
    kept = [p for p in proto.metadata_props if p.key != key]
    del proto.metadata_props[:]
    proto.metadata_props.extend(kept)
    proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(model))
