"""``bench/read_speed.py`` runs on the committed models and prints its tables (timings are not asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "read_speed.py"
IMAGE = ROOT / "examples" / "tray_cocked.jpg"

pytestmark = pytest.mark.skipif(not IMAGE.exists(), reason="needs the bundled example")


def run(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--image", str(IMAGE), "--runs", "2", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_every_stage_is_timed() -> None:
    out = run()
    for stage in ("detector", "classifier (3 dice x 4)", "whole read, calibrated", "vertical search (3 dice)"):
        assert stage in out, out


def test_two_model_folders_are_compared(tmp_path: Path) -> None:
    other = tmp_path / "models"
    other.mkdir()
    for name in ("die_detector.onnx", "face_classifier.onnx", "cocked_test.onnx"):
        (other / name).symlink_to(ROOT / "models" / name)
    out = run("--against", str(other), "--rounds", "1")
    assert "tray calibrated" in out and str(other) in out
    rows = [line for line in out.splitlines() if line.startswith(("setup", "models", str(other)))]
    assert len(rows) == 3  # the header and one row per folder


def test_a_config_change_is_compared_and_a_wrong_field_named() -> None:
    out = run("--compare-config", "face_views=1", "--rounds", "1")
    rows = [line.split()[0] for line in out.splitlines()[2:] if line.strip()]
    assert rows == ["models", "face_views=1"], out
    wrong = subprocess.run(
        [sys.executable, str(SCRIPT), "--compare-config", "face_view=2"], capture_output=True, text=True, cwd=ROOT
    )
    assert wrong.returncode == 2 and "'face_view' is no ReaderConfig field" in wrong.stderr
