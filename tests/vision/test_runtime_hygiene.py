"""Run-time rules: no torch or ultralytics on the read path, no sockets, sorted ``__all__``."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import farklecam.vision

ROOT = Path(__file__).resolve().parents[2]


def test_read_path_imports_no_training_stack(fake_model_dir: Path) -> None:
    code = textwrap.dedent(
        f"""
        import socket, sys
        def refuse(*a, **k):
            raise AssertionError("a socket was opened")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        import numpy as np
        from farklecam.vision.reader import DiceReader
        from farklecam.service.overlay import annotate_reading
        from farklecam.models.evaluate.run import main
        reader = DiceReader({str(fake_model_dir)!r})
        reading = reader.read(np.zeros((480, 640, 3), np.uint8))
        annotate_reading(np.zeros((480, 640, 3), np.uint8), reading)
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "ultralytics", "torchvision"))
        assert not bad, bad
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "name",
    sorted(
        m.name
        for m in pkgutil.walk_packages(farklecam.vision.__path__, "farklecam.vision.")
        if not m.name.endswith(".__main__")
    ),
)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        pytest.skip(f"{name} declares no __all__")
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical.
    assert list(exported) == sorted(exported, key=lambda s: (not s.isupper(), not s[:1].isupper(), s))
    for item in exported:
        assert hasattr(module, item), f"{name}.__all__ names missing {item}"


def test_package_exports_resolve_lazily() -> None:
    assert list(farklecam.vision.__all__) == sorted(
        farklecam.vision.__all__, key=lambda s: (not s.isupper(), not s[:1].isupper(), s)
    )
    for name in farklecam.vision.__all__:
        assert getattr(farklecam.vision, name) is not None
    with pytest.raises(AttributeError):
        farklecam.vision.nothing_here  # noqa: B018
