"""Rotation matrices computed exactly as Blender's ``mathutils`` computes them, in numpy (no bpy).

Why not :mod:`farklecam.datasets.raytraced.placement`'s rotations: ``mathutils`` works in single
precision (``Matrix.Rotation`` wraps the angle and multiplies in C ``float`` with the C
library's ``sinf``/``cosf``), and the held-out set ``data/eval/blender`` was drawn with it.
A float64 Rodrigues rotation differs from it by up to 6e-7, enough to change where a
tossed die comes to rest after a drop of many bounces, so a seed would no longer give
its scene. These functions repeat that arithmetic step by step (numpy ``float32`` and
``sinf``/``cosf`` through ctypes); the Blender-venv test checks them against
``mathutils`` bit for bit. Keeping them free of bpy lets the main venv test the poses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np
import numpy.typing as npt

__all__ = ["UPRIGHT", "quaternion_matrix", "random_rotation", "rotation_about"]

F64 = npt.NDArray[np.float64]
_F32 = np.float32


def _libm() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for name in ("sinf", "cosf"):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return lib


_LIBM = _libm()


def _wrap(angle: float) -> np.float32:
    """``angle_wrap_rad`` in single precision: the angle moved into [-pi, pi)."""
    a, pi = _F32(angle), _F32(math.pi)
    period = _F32(2) * pi
    r = _F32(math.fmod(float(a + pi), float(period)))  # fmodf is exact, so the double one gives the same
    if r < 0:
        r = r + period
    return _F32(r - pi)


def _sin_cos(angle: float) -> tuple[np.float32, np.float32]:
    a = _wrap(angle)
    return _F32(_LIBM.sinf(float(a))), _F32(_LIBM.cosf(float(a)))


def rotation_about(axis: npt.ArrayLike, angle: float) -> F64:
    """``mathutils.Matrix.Rotation(angle, 3, Vector(axis))`` (right-handed, radians), as float64.

    Bit for bit for ``|angle| <= 4 pi`` (beyond it ``mathutils`` wraps the angle in a way
    not repeated here; the generator's angles stay under 8 radians).
    """
    s, c = _sin_cos(angle)
    v = np.asarray(axis, np.float64).astype(_F32)
    length = _F32(np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
    n = v * (_F32(1) / length)
    ico = _F32(1) - c
    nsi = n * s
    n01, n02, n12 = (n[0] * n[1]) * ico, (n[0] * n[2]) * ico, (n[1] * n[2]) * ico
    rows = [
        [(n[0] * n[0]) * ico + c, n01 - nsi[2], n02 + nsi[1]],
        [n01 + nsi[2], (n[1] * n[1]) * ico + c, n12 - nsi[0]],
        [n02 - nsi[1], n12 + nsi[0], (n[2] * n[2]) * ico + c],
    ]
    return np.array(rows, np.float32).astype(np.float64)


def quaternion_matrix(q: npt.ArrayLike) -> F64:
    """``mathutils.Quaternion(q).to_matrix()`` for a unit quaternion ``(w, x, y, z)``, as float64."""
    w, x, y, z = (math.sqrt(2) * float(v) for v in np.asarray(q, np.float64).astype(_F32))
    xw, yw, zw = w * x, w * y, w * z
    xx, xy, xz, yy, yz, zz = x * x, x * y, x * z, y * y, y * z, z * z
    rows = [
        [1.0 - yy - zz, -zw + xy, yw + xz],
        [zw + xy, 1.0 - xx - zz, -xw + yz],
        [-yw + xz, xw + yz, 1.0 - xx - yy],
    ]
    return np.array(rows, np.float64).astype(np.float32).astype(np.float64)


def random_rotation(rng: np.random.Generator) -> F64:
    """A uniformly random rotation (a normalised Gaussian quaternion: four draws)."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return quaternion_matrix(q)


def _about_x(angle: float) -> F64:
    """``mathutils.Matrix.Rotation(angle, 3, "X")`` (no normalising: its rounding differs from the general form)."""
    s, c = _sin_cos(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]], np.float32).astype(np.float64)


def _about_y(angle: float) -> F64:
    """``mathutils.Matrix.Rotation(angle, 3, "Y")``."""
    s, c = _sin_cos(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], np.float32).astype(np.float64)


#: Face value -> a rotation taking that face to +z (quarter or half turns, with mathutils' rounding).
UPRIGHT: dict[int, F64] = {
    1: np.eye(3),
    6: _about_x(math.pi),
    2: _about_y(-math.pi / 2),
    5: _about_y(math.pi / 2),
    3: _about_x(math.pi / 2),
    4: _about_x(-math.pi / 2),
}
