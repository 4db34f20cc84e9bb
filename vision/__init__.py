"""Run-time vision: camera frame in, :class:`~farklecam.vision.reading.Reading` out (onnxruntime only).

The main names are importable from here, lazily, so importing one module (as training
imports :mod:`farklecam.vision.crops`) does not load the reader::

    DiceReader().read(load_image("roll.jpg")).to_dict()  # {"dice": [...], "rethrow": 0, "faces": [1, 5, 5], ...}
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "DiceReader",
    "Die",
    "DieStatus",
    "ReaderConfig",
    "Reading",
    "TrayOutline",
    "decode_image",
    "load_image",
    "save_image",
]

_HOMES = {
    "DiceReader": "farklecam.vision.reader",
    "ReaderConfig": "farklecam.vision.reader",
    "Die": "farklecam.vision.reading",
    "DieStatus": "farklecam.vision.reading",
    "Reading": "farklecam.vision.reading",
    "TrayOutline": "farklecam.vision.tray.outline",
    "decode_image": "farklecam.vision.images",
    "load_image": "farklecam.vision.images",
    "save_image": "farklecam.vision.images",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'farklecam.vision' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
