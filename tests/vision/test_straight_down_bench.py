"""``bench/straight_down.py``: the camera's tilt from a sidecar, and the table over the bundled examples."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "straight_down.py"
sys.path.insert(0, str(ROOT / "bench"))

from straight_down import camera_tilt_deg  # noqa: E402  (a script folder, not a package)


@pytest.mark.parametrize(("eye", "tilt"), [((0, 0, 30), 0.0), ((10, 0, 10), 45.0), ((0, -3, 3 * 3**0.5), 30.0)])
def test_the_camera_tilt_is_the_angle_of_its_line_of_sight_from_straight_down(
    eye: tuple[float, float, float], tilt: float
) -> None:
    assert camera_tilt_deg({"eye": list(eye), "target": [0.0, 0.0, 0.0]}) == pytest.approx(tilt)


def test_the_bundled_examples_are_counted_by_their_cameras_tilt() -> None:
    # tray_ok and tray_off_tray look within 5 degrees of straight down, tray_cocked and tray_webcam 25-35 off.
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(ROOT / "examples")], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert "0-5" in rows and sum(int(r[2]) + int(r[5]) for r in rows.values()) == 12  # flat + leaning dice on trays
