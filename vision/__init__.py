"""Run-time vision: camera frame in, :class:`~vision.reading.Reading` out (onnxruntime only).

The main names are importable from here, lazily, so ``import vision.crops`` (as
training does) does not load the reader::

    from vision import DiceReader, annotate_reading, load_image

    reader = DiceReader()                       # loads both models once
    reading = reader.read(load_image("roll.jpg"))
    print(reading.to_dict())                    # {"dice": [...], "rethrow": 0, "faces": [1, 5, 5]}
    scene = annotate_reading(frame, reading, keep_faces=[1, 5], text_lines=["keep 1+5: 150"])
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
    "annotate_reading",
    "decode_image",
    "load_image",
    "save_image",
]

_HOMES = {
    "DiceReader": "vision.reader",
    "ReaderConfig": "vision.reader",
    "Die": "vision.reading",
    "DieStatus": "vision.reading",
    "Reading": "vision.reading",
    "TrayOutline": "vision.tray.outline",
    "annotate_reading": "vision.overlay",
    "decode_image": "vision.images",
    "load_image": "vision.images",
    "save_image": "vision.images",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'vision' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
