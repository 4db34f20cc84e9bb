"""Each die's tilt, measured: its up-axis in the camera's frame, the table's normal, and the angle between.

A crop network (:mod:`farklecam.vision.pose.net`) reads a die's *up-axis* (the outward normal of
its most upward face) in the frame of the die's viewing ray: the rotation that takes
the ray to the lens axis by the shortest turn (:func:`ray_rotations`). In that frame a
die looks the same wherever it sits in the picture, so the network needs no idea of
where the crop came from; the reader turns its answer back into the camera's frame
(x right, y down, z forward, as :meth:`farklecam.vision.pose.upright.UprightView.direction`) with the
same rotation. A die's tilt is then the angle between its up-axis and the table's
normal. The normal comes from the tray's marked corners where given
(:func:`normal_from_view`), else from the dice themselves (:func:`table_normal`):
most dice lie flat, so the up-axis most of them agree on is the table's.

``cocked`` is a tilt past :data:`COCKED_TILT_DEG`, with a band around it read
``uncertain`` (:class:`TiltCall`). numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from farklecam.vision.pose.upright import DEFAULT_FOCAL, UprightView

__all__ = [
    "AGREE_DEG",
    "COCKED_TILT_DEG",
    "FOCAL_CANDIDATES",
    "TILT_BAND_DEG",
    "Consensus",
    "TiltCall",
    "consensus",
    "default_intrinsics",
    "from_ray_frame",
    "normal_from_view",
    "ray_rotations",
    "table_normal",
    "tilt_degrees",
    "to_ray_frame",
    "turn_in_ray_frame",
    "view_from_normal",
]

#: A die is cocked past this tilt. A die on a flat floor rests within a few degrees of it; one
#: leaning on a wall or on another die rests at 20 degrees or more (the generator's leaning dice start
#: at 30-43 and settle at 25 and more; the issue's other renderer's at 15-50), so 12 leaves the
#: flat side the network's error and the leaning side a margin.
COCKED_TILT_DEG = 12.0
#: Half-width of the band around :data:`COCKED_TILT_DEG` read ``uncertain`` rather than flat or cocked.
TILT_BAND_DEG = 4.0
#: Dice whose up-axes lie within this angle of one another agree on the table's normal.
AGREE_DEG = 8.0
#: Focal lengths tried where no tray is marked (multiples of the picture's longer side): about 37 to 85
#: degrees of horizontal field of view, phones and webcams.
FOCAL_CANDIDATES = (0.55, 0.65, 0.75, 0.9, 1.05, 1.25, 1.5)


def default_intrinsics(
    image_size: tuple[int, int], view: UprightView | None = None
) -> tuple[float, npt.NDArray[np.float64]]:
    """``(focal_px, principal)``: the marked tray's where known, else the default field of view at the centre."""
    if view is not None:
        return float(view.focal), np.asarray(view.principal, np.float64)
    w, h = image_size
    return DEFAULT_FOCAL * float(max(w, h)), np.array([w / 2.0, h / 2.0])


def ray_rotations(points: npt.ArrayLike, focal: float, principal: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Per pixel, the shortest rotation (3, 3) that takes its viewing ray to the lens axis (0, 0, 1).

    Args:
        points: pixels (n, 2), usually the dice boxes' centres.
        focal: focal length in pixels (square pixels).
        principal: the principal point (2,).

    Returns:
        Rotations (n, 3, 3); ``R @ ray = (0, 0, 1)``, and at the principal point the identity.
    """
    p = np.asarray(points, np.float64).reshape(-1, 2) - np.asarray(principal, np.float64)
    rays = np.column_stack([p, np.full(len(p), float(focal))])
    rays /= np.linalg.norm(rays, axis=1, keepdims=True)
    z = np.array([0.0, 0.0, 1.0])
    k = np.cross(rays, z)  # axis times sine
    c = rays @ z  # cosine, > 0 for any ray in front of the camera
    kx = np.zeros((len(p), 3, 3))
    kx[:, 0, 1], kx[:, 0, 2], kx[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    kx[:, 1, 0], kx[:, 2, 0], kx[:, 2, 1] = k[:, 2], -k[:, 1], k[:, 0]
    out: npt.NDArray[np.float64] = np.eye(3)[None] + kx + (kx @ kx) / (1.0 + c)[:, None, None]
    return out


def to_ray_frame(vectors: npt.ArrayLike, rotations: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Camera-frame vectors (n, 3) in each one's ray frame (:func:`ray_rotations`)."""
    v = np.asarray(vectors, np.float64).reshape(-1, 3)
    out: npt.NDArray[np.float64] = np.einsum("nij,nj->ni", rotations, v)
    return out


def from_ray_frame(vectors: npt.ArrayLike, rotations: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Ray-frame vectors (n, 3) back in the camera's frame, unit length."""
    v = np.asarray(vectors, np.float64).reshape(-1, 3)
    out = np.einsum("nji,nj->ni", rotations, v)
    norm: npt.NDArray[np.float64] = out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return norm


def turn_in_ray_frame(
    vectors: npt.ArrayLike, angles_deg: npt.ArrayLike, mirror: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Ray-frame vectors (n, 3) as seen in crops turned counter-clockwise on screen by ``angles_deg``, then mirrored.

    In the ray's frame a turn of the crop about its centre is a turn about the ray (z), so
    the training turns each crop's target with it and the reader turns a turned crop's
    answer back. The turn is ``cv2.getRotationMatrix2D``'s sign (image y down); ``mirror``
    (n,) flips a turned crop left to right, which negates x.
    """
    t = np.asarray(vectors, np.float64).reshape(-1, 3)
    a = np.radians(np.asarray(angles_deg, np.float64).reshape(-1))
    c, s = np.cos(a), np.sin(a)
    x = c * t[:, 0] + s * t[:, 1]
    y = -s * t[:, 0] + c * t[:, 1]
    x = np.where(np.asarray(mirror, bool).reshape(-1), -x, x)
    return np.stack([x, y, t[:, 2]], axis=1)


def normal_from_view(view: UprightView) -> npt.NDArray[np.float64]:
    """The table's normal in the camera's frame from a vertical (a marked tray's): up, away from the nadir."""
    return -view.direction()


def view_from_normal(normal: npt.ArrayLike, focal: float, principal: npt.ArrayLike) -> UprightView:
    """The vertical a table's normal gives (the inverse of :func:`normal_from_view`).

    The off-tray test places each die's base along the vertical
    (:func:`farklecam.vision.tray.outline.footprint_inside`); the dice's own consensus gives one where no
    tray is marked. A normal lying in the picture's plane (a camera looking level) puts the
    nadir far off, never at infinity.
    """
    down = -np.asarray(normal, np.float64).reshape(3)
    depth = max(float(down[2]), 1e-6)
    p = np.asarray(principal, np.float64)
    return UprightView(p + float(focal) * down[:2] / depth, float(focal), p)


def tilt_degrees(up_axes: npt.ArrayLike, normal: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Degrees between each unit up-axis (n, 3) and the table's unit normal (3,)."""
    up = np.asarray(up_axes, np.float64).reshape(-1, 3)
    cos = np.clip(up @ np.asarray(normal, np.float64), -1.0, 1.0)
    out: npt.NDArray[np.float64] = np.degrees(np.arccos(cos))
    return out


def table_normal(
    up_axes: npt.ArrayLike, agree_deg: float = AGREE_DEG
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]] | None:
    """The table's normal as the dice agree on it: the up-axis the most others lie near, averaged with them.

    Most dice of a throw lie flat, so their up-axes all point along the table's normal,
    while each leaning die's points its own way. Each die's up-axis is a candidate; the
    one with the most dice within ``agree_deg`` wins (ties: the tighter group), and the
    normal is the mean of that group. It is no consensus unless more than half the dice
    are in it, and at least two are: one die alone, or two that disagree, cannot tell
    which of them is flat (None).

    Returns:
        ``(normal (3,), which dice agreed (n,))``, or None.
    """
    up = np.asarray(up_axes, np.float64).reshape(-1, 3)
    n = len(up)
    if n < 2:
        return None
    cos = np.clip(up @ up.T, -1.0, 1.0)
    near = cos >= np.cos(np.radians(agree_deg))
    counts = near.sum(axis=1)
    spread = np.where(near, np.arccos(cos), 0.0).sum(axis=1)
    best = int(np.lexsort((spread, -counts))[0])
    members = near[best]
    if counts[best] < 2 or 2 * counts[best] <= n:
        return None
    mean = up[members].mean(axis=0)
    return mean / np.linalg.norm(mean), members


@dataclass(frozen=True)
class Consensus:
    """What the dice agreed on, the focal length unknown (:func:`consensus`).

    Attributes:
        normal: the table's normal in the camera's frame (3,).
        up_axes: each die's up-axis in the camera's frame (n, 3), under the focal length kept.
        agreed: which dice the normal was found from (n,).
        focal: the focal length kept, in pixels.
    """

    normal: npt.NDArray[np.float64]
    up_axes: npt.NDArray[np.float64]
    agreed: npt.NDArray[np.bool_]
    focal: float


def consensus(
    ray_up: npt.ArrayLike,
    centres: npt.ArrayLike,
    image_size: tuple[int, int],
    focals: tuple[float, ...] = FOCAL_CANDIDATES,
    agree_deg: float = AGREE_DEG,
) -> Consensus | None:
    """The table's normal and the dice's up-axes in the camera's frame, the focal length unknown.

    A wrong focal length turns each die's ray frame by a different amount, so flat dice in
    different parts of the picture stop agreeing. Each candidate focal length (multiples of
    the longer side) is tried on the same network outputs, and the one under which most dice
    agree, most tightly, is kept (:func:`table_normal`): no crop is read again.

    Args:
        ray_up: each die's up-axis in its ray's frame (n, 3), as the network reads it.
        centres: the dice boxes' centres (n, 2), pixels.
        image_size: ``(width, height)``.
        focals: candidate focal lengths, multiples of the picture's longer side.
        agree_deg: as :func:`table_normal`.

    Returns:
        The normal, the up-axes, which dice agreed and the focal length kept; None where no
        candidate gives a consensus.
    """
    w, h = image_size
    principal = np.array([w / 2.0, h / 2.0])
    best: tuple[int, float, Consensus] | None = None
    for f in focals:
        focal = f * float(max(w, h))
        up = from_ray_frame(ray_up, ray_rotations(centres, focal, principal))
        found = table_normal(up, agree_deg)
        if found is None:
            continue
        normal, members = found
        spread = float(tilt_degrees(up[members], normal).mean())
        if best is None or (int(members.sum()), -spread) > (best[0], -best[1]):
            best = (int(members.sum()), spread, Consensus(normal, up, members, focal))
    return None if best is None else best[2]


@dataclass(frozen=True)
class TiltCall:
    """From a tilt to a call: flat, cocked, or uncertain in a band around the threshold.

    Attributes:
        threshold_deg: tilt past which a die is cocked (:data:`COCKED_TILT_DEG`).
        band_deg: half-width of the band read uncertain (:data:`TILT_BAND_DEG`).
    """

    threshold_deg: float = COCKED_TILT_DEG
    band_deg: float = TILT_BAND_DEG

    def __post_init__(self) -> None:
        if not 0.0 <= self.band_deg < self.threshold_deg:
            raise ValueError(
                f"the tilt band must lie within 0..threshold, not {self.band_deg} around {self.threshold_deg}"
            )

    def cocked(self, tilt_deg: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Which tilts are past the band: called cocked."""
        return np.asarray(tilt_deg, np.float64) > self.threshold_deg + self.band_deg

    def uncertain(self, tilt_deg: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Which tilts lie in the band, or are unknown (NaN): neither flat nor cocked."""
        t = np.asarray(tilt_deg, np.float64)
        return np.isnan(t) | (np.abs(t - self.threshold_deg) <= self.band_deg)
