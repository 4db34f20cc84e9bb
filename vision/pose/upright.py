"""Which way is down? The camera's vertical in the picture, from the tray's outline.

A flat die shows the side that faces the camera, which in the picture lies towards the
nadir (the point straight below the camera); a leaning die shows its sides in any
direction. The tray's floor is a rectangle, so its outline gives two vanishing points;
with square pixels and the principal point at the centre they fix the focal length, and
the nadir is the pole of the horizon (Hartley and Zisserman, *Multiple View Geometry*,
2nd ed., sections 8.6 and 8.8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_FOCAL",
    "FOCAL_SPREAD",
    "UprightView",
    "focal_from_corners",
    "straight_down_view",
    "upright_angles",
    "upright_view",
]

#: Focal length, as a multiple of the picture's longer side, when the outline cannot fix it:
#: about a 58-degree horizontal field of view, a common webcam.
DEFAULT_FOCAL = 0.9
#: A focal length estimated from the outline is kept only in this range (multiples of the longer side).
_FOCAL_RANGE = (0.3, 6.0)
#: The largest standard error of a focal length estimated from the corners that is believed (multiples of
#: the longer side); a vaguer estimate gives way to :data:`DEFAULT_FOCAL`.
FOCAL_SPREAD = 0.3


@dataclass(frozen=True)
class UprightView:
    """The camera's vertical in one picture: the nadir (2,), the focal length and the principal point, in pixels."""

    nadir: npt.NDArray[np.float64]
    focal: float
    principal: npt.NDArray[np.float64]

    def down_angles(self, points: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Angle (radians) of the direction from each point towards the nadir, image axes (x right, y down).

        A crop turned by ``angle - pi/2`` (counter-clockwise on screen) puts the nadir straight below.
        """
        p = np.asarray(points, np.float64).reshape(-1, 2)
        d = self.nadir[None, :] - p
        return np.arctan2(d[:, 1], d[:, 0]).astype(np.float32)

    def direction(self) -> npt.NDArray[np.float64]:
        """The vertical as a unit vector in the camera's frame (x right, y down, z along the lens axis)."""
        d = np.append(self.nadir - self.principal, self.focal)
        return np.asarray(d / np.linalg.norm(d), np.float64)

    def angle_to(self, other: UprightView | npt.ArrayLike) -> float:
        """Degrees between this vertical and another view's, or a unit direction in the camera's frame."""
        theirs = other.direction() if isinstance(other, UprightView) else np.asarray(other, np.float64)
        return float(np.degrees(np.arccos(min(1.0, abs(float(self.direction() @ theirs))))))

    def view_tilt(self, points: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Angle (radians) between the camera's ray to each point and the vertical: 0 straight down."""
        p = np.asarray(points, np.float64).reshape(-1, 2)
        rays = np.column_stack([p - self.principal, np.full(len(p), self.focal)])
        down = np.append(self.nadir - self.principal, self.focal)
        cos = np.abs(rays @ down) / (np.linalg.norm(rays, axis=1) * np.linalg.norm(down))
        tilt: npt.NDArray[np.float32] = np.arccos(np.clip(cos, 0.0, 1.0)).astype(np.float32)
        return tilt


def upright_angles(view: UprightView, centres: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Degrees to turn each crop (counter-clockwise on screen) so that the nadir lies straight below it."""
    return (np.degrees(view.down_angles(centres)) - 90.0).astype(np.float32)


def _cross2(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    """The cross product of two 2D vectors: twice the signed area of their triangle."""
    return float(a[0] * b[1] - a[1] * b[0])


def _vanishing_point(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], c: npt.NDArray[np.float64], d: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Homogeneous meeting point of lines ab and dc (scaled to unit length)."""
    v = np.cross(np.cross(a, b), np.cross(d, c))
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def _vanishing_points(p: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The two vanishing points of a quadrilateral (homogeneous rows of ``p``): sides 0-1 / 3-2 and 1-2 / 0-3."""
    return _vanishing_point(p[0], p[1], p[2], p[3]), _vanishing_point(p[1], p[2], p[3], p[0])


def _orthogonal_focal(p: npt.NDArray[np.float64]) -> float | None:
    """The focal length that makes the two vanishing directions orthogonal; None if none does, or one is at infinity."""
    v1, v2 = _vanishing_points(p)
    if abs(v1[2]) <= 1e-9 or abs(v2[2]) <= 1e-9:
        return None
    # Orthogonal directions: (v1 - c) . (v2 - c) + f^2 = 0, with c at the origin here.
    f2 = -float(np.dot(v1[:2] / v1[2], v2[:2] / v2[2]))
    return float(np.sqrt(f2)) if f2 > 0 else None


def focal_from_corners(p: npt.NDArray[np.float64], sigma: float) -> float:
    """The focal length (units of the picture's longer side) from the corners ``p`` (4, 3), where they fix it.

    ``p`` holds homogeneous rows centred on the principal point. A tray seen square-on has two
    sides nearly parallel, and a pixel off in a corner sends the estimate anywhere; so the
    standard error from a corner error of ``sigma`` is propagated, and where it exceeds
    :data:`FOCAL_SPREAD` (or admits no estimate) :data:`DEFAULT_FOCAL` stands instead.
    """
    estimate = _orthogonal_focal(p)
    if estimate is None or not _FOCAL_RANGE[0] <= estimate <= _FOCAL_RANGE[1]:
        return DEFAULT_FOCAL
    variance = 0.0
    for i in range(4):
        for axis in range(2):
            moved = p.copy()
            moved[i, axis] += sigma
            other = _orthogonal_focal(moved)
            if other is None:
                return DEFAULT_FOCAL
            variance += (other - estimate) ** 2
    return DEFAULT_FOCAL if np.sqrt(variance) > FOCAL_SPREAD else estimate


def straight_down_view(image_size: tuple[int, int], focal: float = DEFAULT_FOCAL) -> UprightView:
    """The vertical of a camera looking straight down: the nadir is the picture's centre."""
    w, h = image_size
    centre = np.array([w / 2.0, h / 2.0])
    return UprightView(nadir=centre.copy(), focal=focal * float(max(w, h)), principal=centre)


def upright_view(
    corners: npt.ArrayLike, image_size: tuple[int, int], corner_sigma_px: float = 0.0, focal_px: float | None = None
) -> UprightView | None:
    """The nadir and focal length from the tray floor's four corners (4, 2), in order around it.

    ``corner_sigma_px`` is how far they may be off (:func:`focal_from_corners`; 0 trusts the
    vanishing points); a known ``focal_px`` is used as it is. None for no usable quadrilateral.
    """
    quad = np.asarray(corners, np.float64)
    if quad.shape != (4, 2) or not np.isfinite(quad).all():
        return None
    w, h = image_size
    longer = float(max(w, h))
    principal = np.array([w / 2.0, h / 2.0])
    # Work in units of the longer side, centred on the principal point: better conditioned.
    p = np.column_stack([(quad - principal) / longer, np.ones(4)])
    twice_area = _cross2(p[1, :2] - p[0, :2], p[2, :2] - p[0, :2]) + _cross2(p[2, :2] - p[0, :2], p[3, :2] - p[0, :2])
    if abs(twice_area) < 1e-6:
        return None
    v1, v2 = _vanishing_points(p)
    if focal_px is not None:
        focal = focal_px / longer
    elif corner_sigma_px > 0:
        focal = focal_from_corners(p, corner_sigma_px / longer)
    else:
        exact = _orthogonal_focal(p)
        focal = exact if exact is not None and _FOCAL_RANGE[0] <= exact <= _FOCAL_RANGE[1] else DEFAULT_FOCAL
    horizon = np.cross(v1, v2)
    # The nadir is the pole of the horizon: omega* l with omega* = K K^T = diag(f^2, f^2, 1).
    nadir_h = np.array([focal**2 * horizon[0], focal**2 * horizon[1], horizon[2]])
    if abs(nadir_h[2]) < 1e-12 * max(1.0, float(np.linalg.norm(nadir_h[:2]))):
        nadir = np.zeros(2)  # the horizon at infinity: a camera looking straight down
    else:
        nadir = nadir_h[:2] / nadir_h[2]
    if not np.isfinite(nadir).all() or np.linalg.norm(nadir) > 1e4:
        return None  # a camera looking nearly level: no usable nadir
    return UprightView(nadir=nadir * longer + principal, focal=focal * longer, principal=principal)
