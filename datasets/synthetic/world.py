"""The physical scene in pybullet: a table, a tray with walls, and dice thrown into it.

Units are centimetres and seconds (gravity -981): Bullet is most stable for objects
between about 0.05 and 10 units, and a 1.6 cm die in metres would fall below that.
The table top is the plane z = 0; the tray floor's top is at ``z = tray.floor_t``;
the tray is axis-aligned and centred on the origin (the camera supplies the yaw).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pybullet as p

from farklecam.datasets.synthetic.mesh import cube_corners, die_mesh

__all__ = [
    "GRAVITY",
    "TIME_STEP",
    "DiePose",
    "Tray",
    "World",
    "flat_rotation",
    "lean_pose",
    "quat_from_matrix",
    "random_quaternion",
]

GRAVITY = -981.0
TIME_STEP = 1.0 / 240.0


@dataclass(frozen=True, slots=True)
class Tray:
    """Inner floor ``width`` x ``depth``, wall height and thickness, floor thickness (cm)."""

    width: float
    depth: float
    wall_h: float
    wall_t: float
    floor_t: float = 0.5

    def floor_corners(self) -> np.ndarray:
        """Corners of the inner floor (4, 3), counter-clockwise from (-x, -y)."""
        w, d, z = self.width / 2, self.depth / 2, self.floor_t
        return np.array([[-w, -d, z], [w, -d, z], [w, d, z], [-w, d, z]])

    def inside(self, xy: np.ndarray) -> bool:
        """Whether a point's x, y lie over the inner floor."""
        return abs(float(xy[0])) <= self.width / 2 and abs(float(xy[1])) <= self.depth / 2


@dataclass(frozen=True, slots=True)
class DiePose:
    """Where a die is: body id, edge size, position (3,) and rotation matrix (3, 3)."""

    body: int
    size: float
    position: np.ndarray
    rotation: np.ndarray

    def corners(self) -> np.ndarray:
        """World coordinates of the 8 corners, (8, 3)."""
        corners: np.ndarray = self.position + cube_corners(self.size) @ self.rotation.T
        return corners


def random_quaternion(rng: np.random.Generator) -> list[float]:
    """A uniformly random orientation (x, y, z, w)."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return [float(v) for v in q]


def quat_from_matrix(rot: np.ndarray) -> list[float]:
    """Quaternion (x, y, z, w) of a rotation matrix (Shepperd's method, numerically safe)."""
    m = rot
    tr = float(np.trace(m))
    if tr > 0:
        s = np.sqrt(tr + 1.0) * 2
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = np.sqrt(1.0 + m[i, i] - m[j, j] - m[k, k]) * 2
        q = [0.0, 0.0, 0.0, (m[k, j] - m[j, k]) / s]
        q[i] = 0.25 * s
        q[j] = (m[j, i] + m[i, j]) / s
        q[k] = (m[k, i] + m[i, k]) / s
    return [float(v) for v in q]


def _axis_angle_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    turn: np.ndarray = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
    return turn


#: Rotations that bring each face up, from a die at rest with face 1 up: none, quarter
#: turns about x and y (the four side faces), a half turn about x (the opposite face).
_FACE_UP_TURNS: tuple[tuple[tuple[float, float, float], float], ...] = (
    ((1.0, 0.0, 0.0), 0.0),
    ((1.0, 0.0, 0.0), np.pi / 2),
    ((1.0, 0.0, 0.0), -np.pi / 2),
    ((0.0, 1.0, 0.0), np.pi / 2),
    ((0.0, 1.0, 0.0), -np.pi / 2),
    ((1.0, 0.0, 0.0), np.pi),
)


def flat_rotation(rng: np.random.Generator | None, yaw: float) -> np.ndarray:
    """A die lying flat, turned ``yaw`` radians about the vertical, with a random face up.

    With ``rng`` None the die shows the face it rests on unturned (face 1), as
    generator version 1 placed its helper dice.
    """
    axis, angle = _FACE_UP_TURNS[int(rng.integers(0, 6))] if rng is not None else _FACE_UP_TURNS[0]
    rotation: np.ndarray = _axis_angle_matrix(np.array([0.0, 0.0, 1.0]), yaw) @ _axis_angle_matrix(
        np.array(axis), angle
    )
    return rotation


def lean_pose(
    rng: np.random.Generator, size: float, direction: np.ndarray, plane: float, floor_z: float, tilt_deg: float
) -> tuple[np.ndarray, np.ndarray]:
    """A pose for a die leaning on a vertical plane (a wall, or another die's side).

    A cube only stays leaning when its centre of mass is past the floor edge it pivots
    on, towards the wall: its most-upward face then tilts *away* from the wall by less
    than 45 degrees. So we take one of the 24 axis-aligned orientations, tilt it by
    ``tilt_deg`` so that up turns away from ``direction``, and place it touching both the
    floor and the plane ``x . direction = plane``.

    Returns:
        ``(position (3,), rotation (3, 3))``.
    """
    d = np.array([direction[0], direction[1], 0.0])
    d /= np.linalg.norm(d)
    side = np.cross([0.0, 0.0, 1.0], d)
    # Axis-aligned base orientation in the (d, side, up) frame, with a random face up.
    perms = [np.eye(3)[list(pm)] for pm in ((0, 1, 2), (1, 2, 0), (2, 0, 1))]
    base = perms[int(rng.integers(0, 3))] * rng.choice([-1.0, 1.0], 3)[:, None]
    if np.linalg.det(base) < 0:
        base[0] *= -1
    frame = np.stack([d, side, [0.0, 0.0, 1.0]], axis=1)
    rot = _axis_angle_matrix(side, -np.radians(tilt_deg)) @ frame @ base
    corners = cube_corners(size) @ rot.T
    pos = np.zeros(3)
    pos[2] = floor_z + 0.02 - corners[:, 2].min()
    reach = float((corners[:, :2] @ d[:2]).max())
    pos[:2] = d[:2] * (plane - 0.03 - reach)
    return pos, rot


@dataclass
class World:
    """A pybullet DIRECT client holding the table, the tray and the dice of one scene.

    Use as a context manager so the client (and every texture it loaded) is freed.
    """

    tray: Tray
    client: int = -1
    table: int = -1
    tray_bodies: list[int] = field(default_factory=list)
    dice: list[tuple[int, float]] = field(default_factory=list)

    def __enter__(self) -> World:
        self.client = p.connect(p.DIRECT)
        p.setGravity(0, 0, GRAVITY, physicsClientId=self.client)
        p.setTimeStep(TIME_STEP, physicsClientId=self.client)
        return self

    def __exit__(self, *exc: object) -> None:
        p.disconnect(self.client)

    def _box(self, half: list[float], pos: list[float], rgba: list[float], texture: int | None) -> int:
        c = self.client
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=c)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=rgba, physicsClientId=c)
        body = p.createMultiBody(0, col, vis, basePosition=pos, physicsClientId=c)
        if texture is not None:
            p.changeVisualShape(body, -1, textureUniqueId=texture, rgbaColor=[1, 1, 1, 1], physicsClientId=c)
        return int(body)

    def load_texture(self, path: str) -> int:
        """Load a PNG as a texture of this client."""
        return int(p.loadTexture(path, physicsClientId=self.client))

    def build(
        self,
        table_rgb: tuple[float, float, float],
        floor_tex: int,
        wall_tex: int,
        friction: float,
        restitution: float,
    ) -> None:
        """Create the table (plain colour, textured later in post) and the tray."""
        t = self.tray
        self.table = self._box([400, 400, 1], [0, 0, -1], [*table_rgb, 1], None)
        hw, hd = t.width / 2 + t.wall_t, t.depth / 2 + t.wall_t
        floor = self._box([hw, hd, t.floor_t / 2], [0, 0, t.floor_t / 2], [1, 1, 1, 1], floor_tex)
        h = (t.floor_t + t.wall_h) / 2
        walls = [
            self._box([t.wall_t / 2, hd, h], [s * (t.width / 2 + t.wall_t / 2), 0, h], [1, 1, 1, 1], wall_tex)
            for s in (-1, 1)
        ] + [
            self._box([t.width / 2, t.wall_t / 2, h], [0, s * (t.depth / 2 + t.wall_t / 2), h], [1, 1, 1, 1], wall_tex)
            for s in (-1, 1)
        ]
        self.tray_bodies = [floor, *walls]
        for b in [self.table, *self.tray_bodies]:
            p.changeDynamics(b, -1, lateralFriction=friction, restitution=restitution, physicsClientId=self.client)

    def add_die(
        self,
        size: float,
        chamfer: float,
        texture: int,
        position: np.ndarray,
        orientation: list[float],
        restitution: float,
    ) -> int:
        """Add one die (box collision, chamfered textured mesh) and return its body id."""
        c = self.client
        verts, idx, norms, uvs = die_mesh(size, chamfer)
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=[size / 2] * 3, physicsClientId=c)
        vis = p.createVisualShape(p.GEOM_MESH, vertices=verts, indices=idx, normals=norms, uvs=uvs, physicsClientId=c)
        body = p.createMultiBody(
            1.0,
            col,
            vis,
            basePosition=[float(v) for v in position],
            baseOrientation=orientation,
            physicsClientId=c,
        )
        p.changeVisualShape(body, -1, textureUniqueId=texture, rgbaColor=[1, 1, 1, 1], physicsClientId=c)
        p.changeDynamics(
            body,
            -1,
            lateralFriction=0.8,
            restitution=restitution,
            rollingFriction=0.002,
            spinningFriction=0.002,
            physicsClientId=c,
        )
        self.dice.append((body, size))
        return int(body)

    def set_velocity(self, body: int, linear: np.ndarray, angular: np.ndarray) -> None:
        """Give a die its throw."""
        p.resetBaseVelocity(body, [float(v) for v in linear], [float(v) for v in angular], physicsClientId=self.client)

    def step(self, n: int = 1) -> None:
        """Advance the simulation ``n`` steps of 1/240 s."""
        for _ in range(n):
            p.stepSimulation(physicsClientId=self.client)

    def moving(self, lin_tol: float = 1.0, ang_tol: float = 0.2) -> bool:
        """Whether any die still moves faster than ``lin_tol`` cm/s or ``ang_tol`` rad/s."""
        for body, _ in self.dice:
            lin, ang = p.getBaseVelocity(body, physicsClientId=self.client)
            if np.linalg.norm(lin) > lin_tol or np.linalg.norm(ang) > ang_tol:
                return True
        return False

    def settle(self, max_seconds: float = 5.0, check_every: int = 24) -> float:
        """Step until every die has rested for two checks in a row; returns simulated seconds."""
        steps, calm = 0, 0
        while steps < max_seconds / TIME_STEP and calm < 2:
            self.step(check_every)
            steps += check_every
            calm = 0 if self.moving() else calm + 1
        return steps * TIME_STEP

    def poses(self) -> list[DiePose]:
        """Current pose of every die, in the order they were added."""
        out = []
        for body, size in self.dice:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=self.client)
            rot = np.asarray(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
            out.append(DiePose(body, size, np.asarray(pos), rot))
        return out

    def remove_dice(self) -> None:
        """Take every die off the table (a player picking them up)."""
        for body, _ in self.dice:
            p.removeBody(body, physicsClientId=self.client)
        self.dice.clear()

    def touching(self, body: int, gap: float = 0.05) -> bool:
        """Whether a die touches (within ``gap`` cm) any other die."""
        for other, _ in self.dice:
            if other != body and p.getClosestPoints(body, other, gap, physicsClientId=self.client):
                return True
        return False
