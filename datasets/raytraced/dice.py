"""The raytraced generator's die: a rounded cube built in numpy, and what its pose says.

A die of edge ``s`` and rounding radius ``r`` is the set of points within ``r`` of a core
box of half-size ``a = s/2 - r`` (the "rounded box"). That one definition gives all three
things the generator needs exactly, with no physics engine: the mesh the renderer draws
(cube-surface grid points pushed onto the rounded surface), the *support* (how far the die
reaches in a direction, to rest it on a floor or against a wall) and the *signed distance*
(to slide one die against another until they touch, and to check that none overlap).

Faces: value ``v`` points along :data:`FACE_NORMALS` ``[v]`` in the die's frame, opposite
faces sum to 7. Each face's grid carries texture coordinates into cell ``v - 1`` of a
six-cell atlas (:func:`farklecam.datasets.raytraced.looks.die_atlas`), row = v, column = u.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "COCKED_TILT_DEG",
    "FACE_NORMALS",
    "DieMesh",
    "RoundedDie",
    "rounded_die_mesh",
    "top_face",
]

F64 = npt.NDArray[np.float64]

#: Tilt past which a die is cocked (the sidecar schema's threshold): a die on a floor rests
#: within a few degrees, one leaning on a wall or a die at 15 or more.
COCKED_TILT_DEG = 15.0

#: Outward normal of each face in the die's frame.
FACE_NORMALS: dict[int, tuple[float, float, float]] = {
    1: (0.0, 0.0, 1.0),
    6: (0.0, 0.0, -1.0),
    2: (1.0, 0.0, 0.0),
    5: (-1.0, 0.0, 0.0),
    3: (0.0, 1.0, 0.0),
    4: (0.0, -1.0, 0.0),
}

#: Grid steps across each rounded band of a face (the flat middle needs none: it is planar).
_BAND_STEPS = 5


@dataclass(frozen=True, slots=True)
class DieMesh:
    """A triangle mesh in the die's frame: vertices (n, 3), normals (n, 3), uvs (n, 2), faces (m, 3)."""

    vertices: F64
    normals: F64
    uvs: F64
    faces: npt.NDArray[np.uint32]


@dataclass(frozen=True, slots=True)
class RoundedDie:
    """A die in the world: edge ``size`` (cm), ``rounding`` (fraction of the edge), pose.

    Attributes:
        size: edge length in cm.
        rounding: rounding radius as a fraction of the edge (0.06-0.18 looks like real dice).
        rotation: 3x3 matrix taking die-frame vectors to world vectors (world z is up).
        position: the centre in world cm (3,).
    """

    size: float
    rounding: float
    rotation: F64
    position: F64

    @property
    def radius(self) -> float:
        """Rounding radius in cm."""
        return self.rounding * self.size

    @property
    def core(self) -> float:
        """Half-size of the core box in cm."""
        return self.size / 2 - self.radius

    def support(self, direction: npt.ArrayLike) -> float:
        """How far the die reaches from its centre along a world unit ``direction``."""
        local = self.rotation.T @ np.asarray(direction, np.float64)
        return float(self.core * np.abs(local).sum() + self.radius)

    def sdf(self, points: npt.ArrayLike) -> F64:
        """Signed distance of world points (n, 3) to the die's surface (negative inside)."""
        local = (np.asarray(points, np.float64) - self.position) @ self.rotation
        q = np.abs(local) - self.core
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
        inside = np.minimum(q.max(axis=1), 0.0)
        out: F64 = outside + inside - self.radius
        return out

    def world_vertices(self) -> F64:
        """The mesh's vertices in world cm (n, 3)."""
        mesh = rounded_die_mesh(round(self.rounding, 3))
        out: F64 = self.position + (mesh.vertices * self.size) @ self.rotation.T
        return out

    def world_normals(self) -> F64:
        """The mesh's vertex normals in the world (n, 3)."""
        out: F64 = rounded_die_mesh(round(self.rounding, 3)).normals @ self.rotation.T
        return out

    def clearance(self, other: RoundedDie) -> float:
        """The smallest signed distance between the two surfaces, from both meshes' vertices (cm)."""
        return float(min(other.sdf(self.world_vertices()).min(), self.sdf(other.world_vertices()).min()))

    def up(self) -> tuple[int, float, F64]:
        """``(face, tilt_deg, normal)``: the face most nearly up, its angle from world up, its world normal."""
        return top_face(self.rotation)


def top_face(rotation: F64) -> tuple[int, float, F64]:
    """The face whose normal is closest to world up, its tilt in degrees and its world normal."""
    normals = {v: rotation @ np.asarray(n) for v, n in FACE_NORMALS.items()}
    face = max(normals, key=lambda v: float(normals[v][2]))
    z = float(np.clip(normals[face][2], -1.0, 1.0))
    return face, float(np.degrees(np.arccos(z))), normals[face]


def _tangents(normal: F64) -> tuple[F64, F64]:
    """Two unit axes spanning a face with ``t1 x t2 = normal`` (so triangles face outwards)."""
    helper = np.array([0.0, 0.0, 1.0]) if abs(normal[2]) < 0.5 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(helper, normal)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(normal, t1)


@lru_cache(maxsize=16)
def rounded_die_mesh(rounding: float) -> DieMesh:
    """The rounded cube of edge 1 and rounding radius ``rounding`` (see the module docstring)."""
    a = 0.5 - rounding
    ticks = np.concatenate([np.linspace(-0.5, -a, _BAND_STEPS + 1), np.linspace(a, 0.5, _BAND_STEPS + 1)])
    n = len(ticks)
    verts: list[F64] = []
    norms: list[F64] = []
    uvs: list[F64] = []
    faces: list[npt.NDArray[np.int64]] = []
    for value, normal_t in FACE_NORMALS.items():
        normal = np.asarray(normal_t)
        t1, t2 = _tangents(normal)
        uu, vv = np.meshgrid(ticks, ticks, indexing="xy")
        cube = normal * 0.5 + uu[..., None] * t1 + vv[..., None] * t2
        core = np.clip(cube, -a, a)
        out = cube - core
        lengths = np.linalg.norm(out, axis=-1, keepdims=True)
        unit = out / np.maximum(lengths, 1e-12)
        base = len(verts) * n * n
        verts.append((core + rounding * unit).reshape(-1, 3))
        norms.append(unit.reshape(-1, 3))
        cell_u = (value - 1 + (uu + 0.5)) / 6.0
        uvs.append(np.stack([cell_u, vv + 0.5], axis=-1).reshape(-1, 2))
        idx = np.arange(n * n).reshape(n, n) + base
        a_, b_, c_, d_ = idx[:-1, :-1], idx[:-1, 1:], idx[1:, 1:], idx[1:, :-1]
        faces.append(np.stack([a_, b_, c_], -1).reshape(-1, 3))
        faces.append(np.stack([a_, c_, d_], -1).reshape(-1, 3))
    return DieMesh(
        np.concatenate(verts),
        np.concatenate(norms),
        np.concatenate(uvs),
        np.concatenate(faces).astype(np.uint32),
    )
