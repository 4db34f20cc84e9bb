"""The offers of a progressive win table in the compact form that cache files and the package hold.

With passing (:func:`farklecam.scoring.winprob_dp.passing_modelled`) a win table holds, next to
``V``, what every pass on offer adds to a turn start: at 10,000 points 24 million chances,
193 MB of float64, which lzma cannot shrink much. Each is a gain in ``[0, 1]``, so it is
stored to :data:`SCALE` (16 bits), differenced along the offers of one banked score
(neighbouring totals gain nearly the same; uint16 arithmetic wraps, so the round trip is
exact) and lzma-compressed: 7.6 MB for the progressive preset, read back in about 0.6 s.
A gain read back is within ``SCALE / 2`` (7.7e-6) of the solve's, and every chance the
advice shows moves by no more than that.
"""

from __future__ import annotations

import lzma
from typing import Any

import numpy as np

__all__ = ["SCALE", "decode", "encode", "quantize"]

#: A stored gain times this is a chance.
SCALE = 1.0 / 65535
_PRESET = 6  # lzma's level: 7.6 MB in 16 s at 10,000 points (level 1: 10.8 MB in 2 s)


def quantize(gains: Any) -> Any:
    """Gains in ``[0, 1]`` (float) as whole multiples of :data:`SCALE` (uint16)."""
    return np.rint(np.clip(gains, 0.0, 1.0) / SCALE).astype(np.uint16)


def encode(stored: Any) -> Any:
    """The uint16 offers table as one uint8 array (what goes into a ``.npz`` next to ``V``)."""
    steps = np.diff(stored, axis=1, prepend=np.uint16(0)).astype(np.uint16)
    return np.frombuffer(lzma.compress(steps.tobytes(), preset=_PRESET), dtype=np.uint8)


def decode(blob: Any, shape: tuple[int, ...]) -> Any:
    """The uint16 offers table of ``shape`` back from :func:`encode`'s bytes.

    Raises:
        ValueError: the bytes are not such a table of that shape (a corrupt or foreign file).
    """
    try:
        raw = lzma.decompress(np.asarray(blob, dtype=np.uint8).tobytes())
    except lzma.LZMAError as exc:
        raise ValueError(f"offers table unreadable: {exc}") from exc
    steps = np.frombuffer(raw, dtype=np.uint16)
    if steps.size != int(np.prod(shape)):
        raise ValueError("offers table does not match these rules")
    return np.cumsum(steps.reshape(shape), axis=1, dtype=np.uint16)
