"""Where the dice rest, found by geometry instead of physics.

The tray is axis-aligned and centred on the origin, its inner floor's top at
``z = floor_t``; the table is ``z = 0``. Each die is placed in one of four ways:

- **flat**: a face up, a random yaw and up to 2 degrees of wobble, its lowest point on the
  floor (:meth:`~farklecam.datasets.raytraced.dice.RoundedDie.support`);
- **wall**: tilted 15-50 degrees (most 25-36) towards a wall, lowest edge on the floor, its
  far side touching the wall's inner face;
- **die**: tilted the same way towards a flat helper die, lowest edge on the floor, slid
  towards the helper by bisection on the signed distance until the two touch;
- **off**: flat on the table just outside the tray.

A placement is kept only if no two dice overlap (by the signed distance of each one's
mesh vertices to the other, :meth:`~farklecam.datasets.raytraced.dice.RoundedDie.clearance`) and
no die in the tray crosses a wall; otherwise it is drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from farklecam.datasets.raytraced.dice import FACE_NORMALS, RoundedDie

__all__ = [
    "OVERLAP_TOL_CM",
    "TOUCH_CM",
    "Placed",
    "Tray",
    "flat_die",
    "lean_on_die",
    "lean_on_wall",
    "lean_tilt",
    "off_tray_die",
    "overlaps",
]

F64 = npt.NDArray[np.float64]

#: Dice may sink into each other by at most this much (cm): mesh facets, not overlap.
OVERLAP_TOL_CM = 0.01
#: Dice (or a die and a wall) closer than this are said to touch.
TOUCH_CM = 0.03
_UP = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True, slots=True)
class Tray:
    """Inner floor ``width`` x ``depth``, wall height and thickness, floor thickness (cm)."""

    width: float
    depth: float
    wall_h: float
    wall_t: float
    floor_t: float

    def floor_corners(self) -> F64:
        """The inner floor's corners (4, 3), counter-clockwise from (-x, -y)."""
        w, d, z = self.width / 2, self.depth / 2, self.floor_t
        return np.array([[-w, -d, z], [w, -d, z], [w, d, z], [-w, d, z]])

    def inside(self, point: npt.ArrayLike) -> bool:
        """Whether a point's x, y lie over the inner floor."""
        x, y = (float(v) for v in np.asarray(point)[:2])
        return abs(x) <= self.width / 2 and abs(y) <= self.depth / 2

    def wall_gap(self, die: RoundedDie) -> float:
        """The smallest gap between a die in the tray and the four walls' inner faces (negative: crossing)."""
        gaps = []
        for axis, half in ((0, self.width / 2), (1, self.depth / 2)):
            for sign in (1.0, -1.0):
                n = np.zeros(3)
                n[axis] = sign
                gaps.append(half - sign * float(die.position[axis]) - die.support(n))
        return min(gaps)


@dataclass(frozen=True, slots=True)
class Placed:
    """A placed die and how: ``flat``, ``wall``, ``die`` (leaning on another) or ``off`` (off the tray)."""

    die: RoundedDie
    kind: str


def _rot_z(angle: float) -> F64:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rot_axis(axis: F64, angle: float) -> F64:
    """Rodrigues' rotation about a unit axis."""
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    out: F64 = np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * (kx @ kx)
    return out


def _face_up(face: int) -> F64:
    """A rotation taking face ``face``'s normal to world up (a quarter or half turn, exact)."""
    n = np.asarray(FACE_NORMALS[face])
    if n[2] > 0.5:
        return np.eye(3)
    if n[2] < -0.5:
        return np.diag([1.0, -1.0, -1.0])
    axis = np.cross(n, _UP)
    return np.rint(_rot_axis(axis, np.pi / 2))


def _upright(rng: np.random.Generator, yaw: float) -> F64:
    """A random face up, turned ``yaw`` about the vertical."""
    face = int(rng.integers(1, 7))
    return _rot_z(yaw) @ _face_up(face)


def _rest(size: float, rounding: float, rotation: F64, xy: F64, floor_z: float) -> RoundedDie:
    """The die with its lowest point on the plane ``z = floor_z``."""
    probe = RoundedDie(size, rounding, rotation, np.zeros(3))
    return RoundedDie(size, rounding, rotation, np.array([xy[0], xy[1], floor_z + probe.support(-_UP)]))


def lean_tilt(rng: np.random.Generator) -> float:
    """A leaning die's tilt in degrees: 15-50, most (70%) 25-36."""
    return float(rng.uniform(25, 36) if rng.random() < 0.7 else rng.uniform(15, 50))


def flat_die(rng: np.random.Generator, size: float, rounding: float, xy: F64, floor_z: float) -> RoundedDie:
    """A die lying on a face at ``xy``: random face and yaw, up to 2 degrees of wobble."""
    wobble = _rot_axis(np.array([*rng.normal(size=2), 0.0]), np.radians(rng.uniform(0, 2)))
    return _rest(size, rounding, wobble @ _upright(rng, rng.uniform(0, 2 * np.pi)), xy, floor_z)


def _leaning(rng: np.random.Generator, toward: F64, tilt_deg: float) -> F64:
    """A rotation with a random face up, squared to ``toward`` (+-5 degrees), tipped ``tilt_deg`` towards it."""
    yaw = float(np.arctan2(toward[1], toward[0])) + np.radians(rng.uniform(-5, 5))
    tip = _rot_axis(np.cross(_UP, toward), np.radians(tilt_deg))
    return tip @ _upright(rng, yaw)


def lean_on_wall(rng: np.random.Generator, size: float, rounding: float, tray: Tray, tilt_deg: float) -> RoundedDie:
    """A die leaning on a random wall of ``tray``, touching it, its lowest edge on the floor."""
    k = int(rng.integers(0, 4))
    axis, sign = k // 2, (1.0, -1.0)[k % 2]
    toward = np.zeros(3)
    toward[axis] = sign
    rotation = _leaning(rng, toward, tilt_deg)
    half = (tray.width, tray.depth)[axis] / 2
    along_half = (tray.depth, tray.width)[axis] / 2 - size
    probe = _rest(size, rounding, rotation, np.zeros(2), tray.floor_t)
    xy = np.zeros(2)
    xy[axis] = sign * (half - probe.support(toward))
    xy[1 - axis] = rng.uniform(-along_half, along_half)
    return RoundedDie(size, rounding, rotation, np.array([xy[0], xy[1], probe.position[2]]))


def lean_on_die(
    rng: np.random.Generator, helper: RoundedDie, size: float, rounding: float, floor_z: float, tilt_deg: float
) -> RoundedDie:
    """A die leaning on ``helper`` (a flat die), from the side one of its faces looks to.

    Starts well clear of the helper on the floor and slides towards it by bisection
    until the gap between the two is under 0.005 cm.
    """
    sides = [helper.rotation[:, i] * s for i in range(3) for s in (1.0, -1.0)]
    horizontal = [v for v in sides if abs(float(v[2])) < 0.5]
    normal = horizontal[int(rng.integers(0, len(horizontal)))]
    toward = -np.array([normal[0], normal[1], 0.0]) / np.linalg.norm(normal[:2])
    rotation = _leaning(rng, toward, tilt_deg)
    far, near = 2.0 * (size + helper.size), 0.0
    centre = helper.position[:2]

    def at(distance: float) -> RoundedDie:
        return _rest(size, rounding, rotation, centre - toward[:2] * distance, floor_z)

    for _ in range(40):
        mid = (far + near) / 2
        if at(mid).clearance(helper) > 0:
            far = mid
        else:
            near = mid
        if far - near < 0.005:
            break
    return at(far)


def off_tray_die(
    rng: np.random.Generator, size: float, rounding: float, tray: Tray, reach: tuple[float, float]
) -> RoundedDie:
    """A die flat on the table beside a random side of the tray, 0.5-4 cm beyond its outer wall.

    ``reach`` bounds how far from the centre (x, y in cm) a die may lie and stay in frame.
    """
    k = int(rng.integers(0, 4))
    axis, sign = k // 2, (1.0, -1.0)[k % 2]
    outer = (tray.width, tray.depth)[axis] / 2 + tray.wall_t
    gap = rng.uniform(0.5, 4.0) + size
    xy = np.zeros(2)
    xy[axis] = sign * min(outer + gap, reach[axis] - size)
    xy[1 - axis] = rng.uniform(-1, 1) * ((tray.depth, tray.width)[axis] / 2)
    return flat_die(rng, size, rounding, xy, 0.0)


def overlaps(die: RoundedDie, others: list[RoundedDie]) -> bool:
    """Whether ``die`` sinks into any of ``others`` by more than :data:`OVERLAP_TOL_CM`."""
    for other in others:
        if np.linalg.norm(die.position - other.position) > 0.9 * (die.size + other.size):
            continue  # too far apart to touch: each reaches at most sqrt(3)/2 of its edge
        if die.clearance(other) < -OVERLAP_TOL_CM:
            return True
    return False
