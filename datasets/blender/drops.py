"""Where each die starts before the rigid-body drop, and the leaning poses placed by geometry (no bpy).

Units are cm; the tray is centred on the origin with its inner floor's top at
``z = floor_t`` and the table at ``z = 0`` (the frame of :mod:`farklecam.datasets.raytraced`).
A die is one of:

- ``toss``: a random orientation 0.9-3 edges above the floor, anywhere over it; physics
  decides how it lands;
- ``off``: a random orientation above the table just outside the tray, where the camera
  sees it;
- ``wall``: leaning 18-50 degrees (most 24-40) on a wall, its lowest edge on the floor;
- ``die``: leaning the same way on a ``helper`` die that lies flat (both placed here).

Leaning dice and their helpers are placed, not dropped: under Blender's rigid bodies every
leaning die slid flat within a quarter of a second (see :mod:`farklecam.datasets.blender`), so
:mod:`farklecam.datasets.blender.physics` holds them still and drops the rest around them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from farklecam.datasets.blender.rotations import UPRIGHT, random_rotation, rotation_about
from farklecam.datasets.raytraced.camera import PinholeCamera
from farklecam.datasets.raytraced.framing import FramingRanges
from farklecam.datasets.raytraced.placement import Tray

__all__ = ["FRAMING", "HELD_KINDS", "Drop", "lean_pose", "plan_drops"]

F64 = npt.NDArray[np.float64]

#: The scene's framing (:func:`farklecam.datasets.raytraced.framing.frame_tray`): dice 16-27 px on an edge,
#: trays 14-34 cm wide with walls 2-5 cm high.
FRAMING = FramingRanges(
    edge_px=(16, 27),
    fov_deg=(38, 65),
    aligned=0.75,
    yaw_jitter_deg=10,
    room_aligned=0.85,
    wall_t=(0.8, 2.5),
    tray_width=(14, 34),
    wall_h=(2.0, 5.0),
    floor_t=(0.3, 0.8),
)

#: Kinds of die placed by geometry and held still in the simulation.
HELD_KINDS = frozenset({"wall", "die", "helper"})
_TRIES = 60


@dataclass(frozen=True, slots=True)
class Drop:
    """A die's starting pose: ``kind`` (toss, off, wall, die, helper), rotation (3, 3), centre (3,), set index."""

    kind: str
    rotation: F64
    position: F64
    index: int


def lean_pose(rng: np.random.Generator, towards: F64, tilt_deg: float) -> F64:
    """A rotation with a random face up, squared to ``towards``, its top tipped ``tilt_deg`` away from it.

    Tipped away, its lowest edge lies away from the support and its centre of mass leans
    onto the support (tipped towards it, the die would fall back flat).
    """
    yaw = math.atan2(towards[1], towards[0]) + math.radians(rng.uniform(-4, 4)) + rng.integers(4) * math.pi / 2
    upright = rotation_about((0, 0, 1), yaw) @ UPRIGHT[int(rng.integers(1, 7))]
    axis = np.cross([0.0, 0.0, 1.0], towards)
    out: F64 = rotation_about(axis, -math.radians(tilt_deg)) @ upright
    return out


class _Planner:
    """The starts drawn so far, and one try at placing a die of each kind (True when it was placed)."""

    def __init__(self, rng: np.random.Generator, tray: Tray, camera: PinholeCamera) -> None:
        self.rng, self.tray, self.camera = rng, tray, camera
        self.drops: list[Drop] = []
        self._taken: list[tuple[F64, float]] = []

    def free(self, p: F64, s: float) -> bool:
        """Whether a die of edge ``s`` centred at ``p`` keeps clear of every start so far."""
        return all(np.linalg.norm(p - q) > 0.87 * (s + t) + 0.1 for q, t in self._taken)

    def take(self, drop: Drop, s: float) -> None:
        self.drops.append(drop)
        self._taken.append((drop.position, s))

    def toss(self, k: int, s: float) -> bool:
        rng, tray = self.rng, self.tray
        half = np.array([tray.width, tray.depth]) / 2 - 0.9 * s
        p = np.array([*rng.uniform(-half, half), tray.floor_t + s * rng.uniform(0.9, 3.0)])
        if not self.free(p, s):
            return False
        self.take(Drop("toss", random_rotation(rng), p, k), s)
        return True

    def off(self, k: int, s: float) -> bool:
        rng, tray, camera = self.rng, self.tray, self.camera
        reach = np.array([tray.width / 2 + tray.wall_t + 4 * s, tray.depth / 2 + tray.wall_t + 4 * s])
        xy = rng.uniform(-reach, reach)
        if abs(xy[0]) < tray.width / 2 + tray.wall_t + 0.9 * s and abs(xy[1]) < tray.depth / 2 + tray.wall_t + 0.9 * s:
            return False  # over the tray (or its walls)
        p = np.array([*xy, s * rng.uniform(0.6, 2.0)])
        px, front = camera.project(p[None])
        u, v = px[0]
        in_frame = 0.05 * camera.width < u < 0.95 * camera.width and 0.05 * camera.height < v < 0.95 * camera.height
        if not front.all() or not in_frame or not self.free(p, s):
            return False
        self.take(Drop("off", random_rotation(rng), p, k), s)
        return True

    def on_wall(self, k: int, s: float, shape: F64, tilt: float) -> bool:
        rng, tray = self.rng, self.tray
        axis, sign = int(rng.integers(2)), float(rng.choice([-1, 1]))
        d = np.zeros(3)
        d[axis] = sign
        rotation = lean_pose(rng, d, tilt)
        v = (rotation @ shape.T).T  # the real (bevelled) mesh, so it rests on its surface
        half = (tray.width if axis == 0 else tray.depth) / 2
        other = (tray.depth if axis == 0 else tray.width) / 2 - s
        p = np.zeros(3)
        p[axis] = sign * (half - float(np.max(v @ d)) - 0.01)
        p[1 - axis] = rng.uniform(-other, other)
        p[2] = tray.floor_t - float(v[:, 2].min()) + 0.002
        if not self.free(p, s):
            return False
        self.take(Drop("wall", rotation, p, k), s)
        return True

    def on_helper(self, k: int, s: float, shape: F64, tilt: float) -> bool:
        rng, tray, ft = self.rng, self.tray, self.tray.floor_t
        half = np.maximum(np.array([tray.width, tray.depth]) / 2 - 2.6 * s, 0)
        q = np.array([*rng.uniform(-half, half), ft + s / 2 + 0.002])
        ang = rng.uniform(0, 2 * math.pi)
        d = np.array([math.cos(ang), math.sin(ang), 0.0])
        helper = rotation_about((0, 0, 1), ang + math.radians(rng.uniform(-5, 5))) @ UPRIGHT[int(rng.integers(1, 7))]
        rotation = lean_pose(rng, d, tilt)
        v = (rotation @ shape.T).T
        p = q - d * (s / 2 + float(np.max(v @ d)) + 0.01)
        p[2] = ft - float(v[:, 2].min()) + 0.002
        inside = abs(p[0]) < tray.width / 2 - s and abs(p[1]) < tray.depth / 2 - s
        if not (self.free(q, s) and self.free(p, s) and inside):
            return False
        self.take(Drop("helper", helper, q, k), s)
        self.take(Drop("die", rotation, p, k), s)
        return True


def plan_drops(
    rng: np.random.Generator, tray: Tray, sizes: list[float], shapes: list[F64], camera: PinholeCamera
) -> list[Drop]:
    """Starting poses of the dice of edges ``sizes`` (``shapes``: each one's mesh vertices in its own frame).

    Up to three lean (half on a wall, half on a helper die of the same set, which adds a
    die), up to two start off the tray, the rest are tossed. A die whose start cannot be
    drawn clear of the others in 60 tries is left out.
    """
    n = len(sizes)
    n_lean = min(n - 1, int(rng.choice([0, 1, 1, 2, 2, 3])))
    n_off = min(n - 1 - n_lean, int(rng.choice([0, 0, 0, 1, 1, 2])))
    kinds = ["lean"] * n_lean + ["off"] * n_off + ["toss"] * (n - n_lean - n_off)
    plan = _Planner(rng, tray, camera)
    for k, kind in enumerate(kinds):
        s = sizes[k]
        for _ in range(_TRIES):
            if kind == "toss":
                placed = plan.toss(k, s)
            elif kind == "off":
                placed = plan.off(k, s)
            else:
                tilt = float(np.clip(rng.normal(32, 8), 18, 50))
                lean = plan.on_wall if rng.random() < 0.5 else plan.on_helper
                placed = lean(k, s, shapes[k], tilt)
            if placed:
                break
    return plan.drops
