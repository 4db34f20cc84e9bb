"""On-disk cache of solved policies: one ``.npz`` file per rule configuration and solver version.

The directory is ``$FARKLECAM_CACHE_DIR`` when set, else platformdirs'
``user_cache_dir("farklecam")``, with a ``policies`` folder inside. A file is
named by :meth:`farklecam.scoring.rules.Rules.key` and the solver version, so changing a
rule or the solver never reads a stale policy.

The cache is an optimisation only: a missing, unreadable, corrupt or
mismatched file is treated as absent (the caller recomputes and tries to write
it again), and an unwritable directory is skipped silently. Nothing here ever
raises to the caller. Writes go to a temporary file that is then renamed, so a
reader never sees half a file.

The cache is bounded: after each write the least recently used files (by
modification time, which a read refreshes) are removed until at most
:data:`MAX_FILES` files and :data:`MAX_BYTES` bytes remain, so clients trying
one rule set after another cannot fill the disk.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CACHE_ENV",
    "MAX_BYTES",
    "MAX_FILES",
    "cache_dir",
    "cache_path",
    "load_arrays",
    "prune",
    "read_arrays",
    "store_arrays",
]

#: Environment variable that overrides the cache directory.
CACHE_ENV = "FARKLECAM_CACHE_DIR"

#: Most policy files kept (the presets are six; a table tries a few variants).
MAX_FILES = 32
#: Most bytes of policy files kept (a preset's policy is 20-700 KiB; the largest allowed rules, ~15 MiB).
MAX_BYTES = 64 * 2**20

_log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Directory holding cached policies (not created here)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser() / "policies"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("farklecam")) / "policies"


def cache_path(name: str) -> Path:
    """File for one cache entry; ``name`` is the rules key plus the solver version."""
    return cache_dir() / f"{name}.npz"


def load_arrays(name: str, required: tuple[str, ...]) -> dict[str, Any] | None:
    """Read one entry's arrays, or ``None`` when absent, unreadable or missing one of ``required``."""
    path = cache_path(name)
    arrays = read_arrays(path, required)
    if arrays is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last file pruning removes
    return arrays


def read_arrays(path: Path, required: tuple[str, ...]) -> dict[str, Any] | None:
    """The arrays of one ``.npz`` file, or ``None`` when absent, unreadable or missing one of ``required``.

    Also reads the solved tables shipped in the package (:mod:`farklecam.scoring.bundle_tables`), which are never
    pruned.
    """
    try:
        with path.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
            arrays = {key: np.array(data[key]) for key in data.files}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as exc:
        _log.debug("ignoring unreadable policy cache %s: %s", path, exc)
        return None
    if any(key not in arrays for key in required):
        _log.debug("ignoring incomplete policy cache %s", path)
        return None
    return arrays


def store_arrays(name: str, arrays: dict[str, Any]) -> bool:
    """Write one entry atomically; ``False`` (and no error) when the directory is not writable."""
    path = cache_path(name)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        _log.debug("cannot write policy cache %s: %s", path, exc)
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    prune()
    return True


def prune(max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> list[Path]:
    """Remove the least recently used policy files beyond ``max_files`` files or ``max_bytes`` bytes.

    The newest file always stays, however large. Returns the files removed (never raises).
    """
    files: list[tuple[float, int, Path]] = []
    try:
        for path in cache_dir().glob("*.npz"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                files.append((stat.st_mtime, stat.st_size, path))
    except OSError:
        return []
    files.sort(key=lambda f: f[0], reverse=True)  # newest first
    kept_bytes, removed = 0, []
    for index, (_, size, path) in enumerate(files):
        kept_bytes += size
        if index and (index >= max_files or kept_bytes > max_bytes):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed
