"""Which way is down? The floor's vertical, seen in the picture, from the tray's outline.

A die's crop alone cannot say whether it leans: a flat die near the edge of a
wide view, or under a tilted camera, shows a strip of its side just as a die
leaning on a wall does. What tells them apart is *where* that strip is. A flat
die shows the side that faces the camera, which in the picture lies towards the
nadir: the point straight below the camera, where every vertical line of the
scene meets (the vertical vanishing point). A leaning die shows its sides in
any direction. So the cocked test (:mod:`vision.cocked`) turns each crop until
the nadir is straight down and is told how steeply the camera looks at the die.

The tray's floor is a rectangle, so its outline gives the floor's two vanishing
points. With square pixels and the principal point at the picture's centre,
those fix the focal length (the two directions are at right angles) and the
nadir is the pole of the horizon (Hartley and Zisserman, *Multiple View
Geometry*, 2nd ed., sections 8.6 and 8.8). A camera looking straight down sees
the tray's sides parallel: the horizon is at infinity and the nadir is the
picture's centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["DEFAULT_FOCAL", "UprightView", "upright_view"]

#: Focal length, as a multiple of the picture's longer side, when the outline cannot fix it:
#: about a 58-degree horizontal field of view, a common webcam.
DEFAULT_FOCAL = 0.9
#: A focal length estimated from the outline is kept only in this range (multiples of the longer side).
_FOCAL_RANGE = (0.3, 6.0)


@dataclass(frozen=True)
class UprightView:
    """The camera's vertical, as seen in one picture.

    Attributes:
        nadir: the vertical vanishing point in pixels, shape (2,); may lie far outside
            the picture (a camera looking obliquely).
        focal: focal length in pixels (estimated from the outline, else the default).
        principal: the principal point in pixels (the picture's centre), shape (2,).
    """

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

    def view_tilt(self, points: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Angle (radians) between the camera's ray to each point and the vertical: 0 straight down."""
        p = np.asarray(points, np.float64).reshape(-1, 2)
        rays = np.column_stack([p - self.principal, np.full(len(p), self.focal)])
        down = np.append(self.nadir - self.principal, self.focal)
        cos = np.abs(rays @ down) / (np.linalg.norm(rays, axis=1) * np.linalg.norm(down))
        return np.arccos(np.clip(cos, 0.0, 1.0)).astype(np.float32)


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


def upright_view(corners: npt.ArrayLike, image_size: tuple[int, int]) -> UprightView | None:
    """The nadir and focal length from the tray floor's four corners, in order around it.

    Args:
        corners: shape (4, 2), pixels; they may lie outside the picture.
        image_size: ``(width, height)`` of the picture.

    Returns:
        The view, or None when the outline is not a usable quadrilateral (fewer or more
        than four corners, or three of them on a line).
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
    v1 = _vanishing_point(p[0], p[1], p[2], p[3])  # sides 0-1 and 3-2
    v2 = _vanishing_point(p[1], p[2], p[3], p[0])  # sides 1-2 and 0-3
    focal = DEFAULT_FOCAL
    finite = abs(v1[2]) > 1e-9 and abs(v2[2]) > 1e-9
    if finite:
        # Orthogonal directions: (v1 - c) . (v2 - c) + f^2 = 0, with c at the origin here.
        f2 = -float(np.dot(v1[:2] / v1[2], v2[:2] / v2[2]))
        if f2 > 0 and _FOCAL_RANGE[0] <= np.sqrt(f2) <= _FOCAL_RANGE[1]:
            focal = float(np.sqrt(f2))
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
