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


def test_the_bundled_examples_are_counted_by_their_cameras_tilt_with_and_without_the_check() -> None:
    # tray_ok and tray_off_tray look within 5 degrees of straight down, tray_cocked and tray_webcam 25-35 off.
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(ROOT / "examples"), "--check", "10"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    header, *lines = result.stdout.splitlines()
    assert "as said" in header and "check 10" in header
    rows = {line.split()[0]: [part.split() for part in line.split("|")] for line in lines}
    assert set(rows) == {"0-5", "25-30", "30-35"}
    assert sum(int(band[0][3]) + int(band[0][4]) for band in rows.values()) == 12  # flat + leaning dice on trays
    for (_tilt, _deg, scenes, flat, leaning), said, checked in rows.values():
        assert len(said) == len(checked) == 4  # called, share, found, doubted
        assert int(said[3]) == 0 and int(checked[3]) <= int(scenes)  # only the check doubts, once a scene at most
        assert int(checked[0]) <= int(flat) and int(checked[2]) <= int(leaning)
