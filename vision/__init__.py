"""Run-time vision: camera frame in, :class:`~farklecam.vision.reading.Reading` out (onnxruntime only).

The main names are importable from here, lazily, so ``import farklecam.vision.crops`` (as
training does) does not load the reader::

    from farklecam.vision import DiceReader, load_image

    reader = DiceReader()                       # loads the models once
    reading = reader.read(load_image("roll.jpg"))
    print(reading.to_dict())                    # {"dice": [...], "rethrow": 0, "faces": [1, 5, 5]}

Drawing a reading over the picture is the service's job (:mod:`farklecam.service.overlay`).
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
