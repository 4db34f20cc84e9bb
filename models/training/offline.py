"""Keep ultralytics and onnxruntime off the network: call :func:`go_offline` before importing them.

farklecam never downloads anything (no weights, no fonts) and sends no
telemetry. Both libraries read their switches from the environment at import
time, so the switches must be set first:

- ``YOLO_OFFLINE=1``: ultralytics skips its online check (a DNS lookup), hub
  calls and analytics.
- ``YOLO_AUTOINSTALL=0``: it never pip-installs a missing requirement.
- ``YOLO_CONFIG_DIR``: a settings folder of ours instead of ``~/.config``,
  holding ``Ultralytics/Arial.ttf`` so plotting labels never fetches the font
  (any TTF will do; matplotlib ships DejaVuSans, copied under that name).
- ``ORT_DISABLE_TELEMETRY=1``: onnxruntime sends no usage events.

Datasets must also use ASCII class names and an absolute ``path:`` in their
YAML (see :mod:`farklecam.datasets.detector_data`), or ultralytics looks them up online.
"""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from pathlib import Path

__all__ = ["OFFLINE_ENV", "default_config_dir", "go_offline"]

#: Environment switches set by :func:`go_offline` (``YOLO_CONFIG_DIR`` is added per call).
OFFLINE_ENV: dict[str, str] = {
    "YOLO_OFFLINE": "1",
    "YOLO_AUTOINSTALL": "0",
    "YOLO_VERBOSE": "True",
    "ORT_DISABLE_TELEMETRY": "1",
}


def default_config_dir() -> Path:
    """``<repo>/data/ultralytics_config``: inside the git-ignored data folder of the checkout."""
    return Path(__file__).resolve().parents[2] / "data" / "ultralytics_config"


def _bundled_font() -> Path:
    """A TTF that is already on disk: matplotlib's DejaVuSans (matplotlib comes with ultralytics)."""
    import matplotlib  # local: only training needs it

    font = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    if not font.exists():
        raise FileNotFoundError(f"{font}: matplotlib's bundled font is missing")
    return font


def go_offline(config_dir: Path | None = None) -> Path:
    """Set the offline switches and prepare ultralytics' settings folder with a local font.

    Call before the first ``import ultralytics`` or ``import onnxruntime``; a
    warning says so when one of them is already imported (its import-time
    switches are then too late, though the environment still helps later
    calls). Safe to call more than once.

    Args:
        config_dir: settings folder for ultralytics; :func:`default_config_dir` when None.

    Returns:
        The settings folder now named by ``YOLO_CONFIG_DIR``.
    """
    late = [name for name in ("ultralytics", "onnxruntime") if name in sys.modules]
    folder = (config_dir or Path(os.environ.get("YOLO_CONFIG_DIR") or default_config_dir())).resolve()
    if late and os.environ.get("YOLO_CONFIG_DIR") != str(folder):
        warnings.warn(f"go_offline() called after importing {late}; call it first", stacklevel=2)
    os.environ.update(OFFLINE_ENV)
    os.environ["YOLO_CONFIG_DIR"] = str(folder)
    font = folder / "Ultralytics" / "Arial.ttf"
    if not font.exists():
        font.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_bundled_font(), font)
    return folder
