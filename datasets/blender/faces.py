"""The Blender dice's faces and pip layout, in the die's own frame (pure numpy, no bpy).

Faces are :data:`farklecam.datasets.raytraced.dice.FACE_NORMALS` (value ``v`` points along
``FACES[v]``, opposite faces sum to 7), so a pose means the same top face in both
generators. Pips sit on a 3x3 grid ``PIP_SPACING`` of the edge from the face's centre;
each is cut as a sphere sunk into its face (:func:`pip_spheres`), which
:mod:`farklecam.datasets.blender.meshes` subtracts from the bevelled cube.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from farklecam.datasets.raytraced.dice import FACE_NORMALS

__all__ = ["FACES", "PIPS", "PIP_SPACING", "face_axes", "pip_spheres"]

F64 = npt.NDArray[np.float64]

#: Face value -> outward normal in the die's frame (shared with the raytraced generator).
FACES = FACE_NORMALS
#: Face value -> pip positions on the face's 3x3 grid, ``(u, v)`` in -1..1 along the face's two axes.
PIPS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (-1, 1), (1, -1), (1, 1)),
    5: ((-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}
#: Distance of an off-centre pip from its face's centre along each axis, as a share of the edge.
PIP_SPACING = 0.26


def face_axes(value: int) -> tuple[F64, F64, F64]:
    """Face ``value``'s outward normal and the two in-face axes its pip grid runs along."""
    n = np.array(FACES[value], float)
    a = np.roll(n, 1) if n[2] == 0 else np.array([1.0, 0, 0])
    return n, a, np.cross(n, a)


def pip_spheres(size: float, radius: float, depth: float) -> tuple[F64, F64]:
    """Centres (21, 3) of the pip-cutting spheres of a die of edge ``size``, and each one's face normal.

    A sphere of ``radius`` is sunk ``depth`` into its face: its centre lies ``radius - depth``
    outside the face's plane, so the dimple it leaves is ``depth`` deep.
    """
    h, g = size / 2, PIP_SPACING * size
    centres: list[F64] = []
    normals: list[F64] = []
    for value in FACES:
        n, a, b = face_axes(value)
        for u, v in PIPS[value]:
            centres.append(n * (h + radius - depth) + g * (u * a + v * b))
            normals.append(n)
    return np.array(centres), np.array(normals)
