"""The die as a mesh, and what its pose says: which face is up and how far it leans.

A die is a unit cube with chamfered edges and corners (the rounded-edge silhouette
real dice have). Face ``v`` points along :data:`FACE_NORMALS` ``[v]`` in the die's own
frame; opposite faces sum to 7.

Cocked threshold: a die is *cocked* when the face closest to straight up is more than
:data:`COCKED_TILT_DEG` (15 degrees) off vertical. A die lying on a flat floor (felt,
wood, another die's flat top) settles within about 2 degrees, and one leaning on a wall
or on another die's edge rests at 20 degrees or more because its other edge sits on the
floor; 15 splits that gap with room on both sides and matches what a player calls
"not flat".
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from farklecam.datasets.synthetic.textures import ATLAS_GRID

__all__ = [
    "COCKED_TILT_DEG",
    "FACE_NORMALS",
    "DieMesh",
    "cube_corners",
    "die_mesh",
    "top_face",
]

#: Tilt (degrees of the most-upward face normal from world up) above which a die is cocked.
COCKED_TILT_DEG = 15.0

#: Outward normal of each face in the die's frame (1 up, 6 down, 2/5 and 3/4 opposite).
FACE_NORMALS: dict[int, tuple[float, float, float]] = {
    1: (0.0, 0.0, 1.0),
    6: (0.0, 0.0, -1.0),
    2: (0.0, 1.0, 0.0),
    5: (0.0, -1.0, 0.0),
    3: (1.0, 0.0, 0.0),
    4: (-1.0, 0.0, 0.0),
}

DieMesh = tuple[list[list[float]], list[int], list[list[float]], list[list[float]]]


def _cell_uv(value: int, u: float, v: float) -> list[float]:
    """Texture coordinate of point (u, v) in 0..1 of atlas cell ``value`` (1-based; 7 = plain)."""
    gw, gh = ATLAS_GRID
    col, row = (value - 1) % gw, (value - 1) // gw
    # OBJ-style UVs: v grows upwards, the image's row 0 is at the top.
    return [(col + u) / gw, 1.0 - (row + v) / gh]


def _tangents(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two axes spanning a face, with ``t1 x t2 = n`` so quads wind counter-clockwise."""
    helper = np.array([0.0, 0.0, 1.0]) if abs(n[2]) < 0.5 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(helper, n)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def die_mesh(size: float, chamfer: float) -> DieMesh:
    """Vertices, triangle indices, normals and UVs of a chamfered cube for ``createVisualShape``.

    Args:
        size: edge length in world units.
        chamfer: fraction of the edge length cut off at each edge (0.05-0.15 looks like a
            real die's rounding); rounded to 0.01 so the unit mesh can be cached.
    """
    verts, idx, norms, uvs = _unit_mesh(round(chamfer, 2))
    return [[c * size for c in v] for v in verts], list(idx), [list(n) for n in norms], [list(t) for t in uvs]


@lru_cache(maxsize=32)
def _unit_mesh(chamfer: float) -> DieMesh:
    """The chamfered cube with edge 1 (see :func:`die_mesh`)."""
    a = 0.5 - chamfer
    verts: list[list[float]] = []
    idx: list[int] = []
    norms: list[list[float]] = []
    uvs: list[list[float]] = []

    def poly(points: list[np.ndarray], normal: np.ndarray, uv: list[list[float]]) -> None:
        centre = np.mean(points, axis=0)
        winding = np.cross(points[1] - points[0], points[2] - points[0])
        if np.dot(winding, centre) < 0:
            points, uv = points[::-1], uv[::-1]
        base = len(verts)
        for p_, t in zip(points, uv, strict=True):
            verts.append([float(c) for c in p_])
            norms.append([float(c) for c in normal])
            uvs.append(t)
        for k in range(1, len(points) - 1):
            idx.extend([base, base + k, base + k + 1])

    for value, n_t in FACE_NORMALS.items():
        n = np.asarray(n_t)
        t1, t2 = _tangents(n)
        quad = [n * 0.5 + su * a * t1 + sv * a * t2 for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        uv = [_cell_uv(value, (su + 1) / 2, (sv + 1) / 2) for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        poly(quad, n, uv)
    plain = _cell_uv(7, 0.5, 0.5)
    axes = [np.asarray(v) for v in ((1.0, 0, 0), (0, 1.0, 0), (0, 0, 1.0))]
    for i, j in itertools.combinations(range(3), 2):
        for si, sj in itertools.product((-1, 1), repeat=2):
            n1, n2 = axes[i] * si, axes[j] * sj
            w = np.cross(n1, n2)
            quad = [
                n1 * 0.5 + n2 * a - a * w,
                n1 * 0.5 + n2 * a + a * w,
                n2 * 0.5 + n1 * a + a * w,
                n2 * 0.5 + n1 * a - a * w,
            ]
            poly(quad, (n1 + n2) / np.sqrt(2), [plain] * 4)
    for s in itertools.product((-1, 1), repeat=3):
        sv = np.asarray(s, float)
        tri = [sv * np.array([0.5 if k == m else a for k in range(3)]) for m in range(3)]
        poly(tri, sv / np.sqrt(3), [plain] * 3)
    return verts, idx, norms, uvs


def cube_corners(size: float) -> np.ndarray:
    """The 8 corners of a die of edge ``size`` in its own frame, shape (8, 3)."""
    return np.array(list(itertools.product((-0.5, 0.5), repeat=3))) * size


def top_face(rotation: np.ndarray) -> tuple[int, float]:
    """The face most nearly pointing up and its angle from vertical.

    Args:
        rotation: 3x3 matrix taking die-frame vectors to world vectors (world z is up).

    Returns:
        ``(face, tilt_deg)``: the face value 1..6 whose normal is closest to world up, and
        the angle in degrees between that normal and world up.
    """
    best, best_z = 1, -2.0
    for value, n in FACE_NORMALS.items():
        z = float((rotation @ np.asarray(n))[2])
        if z > best_z:
            best, best_z = value, z
    return best, float(np.degrees(np.arccos(np.clip(best_z, -1.0, 1.0))))
