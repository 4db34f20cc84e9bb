"""A generated scene's tray and camera, drawn so the dice come out the size asked for.

Both path-traced generators (:mod:`farklecam.datasets.raytraced`, :mod:`farklecam.datasets.blender`) frame a
scene the same way and differ only in their ranges (:class:`FramingRanges`): draw how many
pixels a die's edge spans and the lens, square the camera to the tray or not, size the tray
to what the frame holds at that scale (never so small that a die cannot lean), aim the
camera 0-15 degrees off straight down at a point near the tray's centre.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from farklecam.datasets.raytraced.camera import PinholeCamera, aim_camera
from farklecam.datasets.raytraced.placement import Tray

__all__ = ["FramingRanges", "frame_tray"]

Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class FramingRanges:
    """One generator's ranges (uniform draws; lengths in cm, a die's edge in pixels at 480 px high)."""

    edge_px: Range
    fov_deg: Range
    aligned: float  #: chance the picture is squared to the tray
    yaw_jitter_deg: float  #: how far a squared picture turns off square
    room_aligned: float  #: share of the frame a squared tray may fill
    wall_t: Range
    tray_width: Range
    wall_h: Range
    floor_t: Range
    room_askew: float = 0.6  #: the same for a tray seen askew


def frame_tray(
    rng: np.random.Generator, sizes: list[float], width: int, height: int, ranges: FramingRanges
) -> tuple[Tray, PinholeCamera, float]:
    """The tray, the camera and its tilt off straight down (degrees) for dice of edges ``sizes`` cm.

    Draws in a fixed order, so a generator's scenes stay a pure function of its seed.
    """
    edge_px = float(rng.uniform(*ranges.edge_px)) * (height / 480)
    fov = float(rng.uniform(*ranges.fov_deg))
    focal = height / 2 / math.tan(math.radians(fov) / 2)
    mean_size = float(np.mean(sizes))
    px_per_cm = edge_px / mean_size
    aligned = rng.random() < ranges.aligned
    jitter = ranges.yaw_jitter_deg
    yaw = (90.0 + 180.0 * int(rng.integers(0, 2)) + rng.uniform(-jitter, jitter)) if aligned else rng.uniform(0, 360)
    room = ranges.room_aligned if aligned else ranges.room_askew
    wall_t = float(rng.uniform(*ranges.wall_t))
    margin = 2 * mean_size + wall_t
    tray_w = float(min(rng.uniform(*ranges.tray_width), room * width / px_per_cm - 2 * margin))
    tray_d = float(min(tray_w * rng.uniform(0.55, 0.9), room * height / px_per_cm - 2 * margin))
    tray_w, tray_d = max(tray_w, 8 * mean_size), max(tray_d, 6 * mean_size)  # room to lean; may leave the frame
    tray = Tray(tray_w, tray_d, float(rng.uniform(*ranges.wall_h)), wall_t, float(rng.uniform(*ranges.floor_t)))
    target = np.array([*rng.normal(0.0, 0.8, 2), tray.floor_t])
    tilt = float(rng.uniform(0, 15))
    camera = aim_camera(target, focal * mean_size / edge_px, fov, (width, height), tilt, float(yaw))
    return tray, camera, tilt
