"""The tray outline and the off-tray test: a die is off when its footprint lies mostly outside the outline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.pose.upright import UprightView

__all__ = ["TrayOutline", "footprint_inside", "points_in_polygon"]


def points_in_polygon(points: npt.ArrayLike, polygon: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether each point (m, 2) lies inside a simple polygon (k, 2) (even-odd ray casting, vectorised)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    poly = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    x, y = pts[:, 0:1], pts[:, 1:2]  # (m, 1) against (k,) edges
    x1, y1 = poly[:, 0], poly[:, 1]
    x2, y2 = np.roll(x1, -1), np.roll(y1, -1)
    crosses = (y1 > y) != (y2 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_at = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
    hits = crosses & (x < x_at)
    return np.asarray(hits.sum(axis=1) % 2 == 1)


#: How far an outline's corners may be from the true ones, in pixels (one standard error), by source:
#: clicks, ArUco markers' inner corners, found in the picture, or exact labels. Unknown sources count as clicks.
CORNER_SIGMA_PX = {"corners": 2.0, "aruco": 0.5, "auto": 1.0, "labelled": 0.0}
#: The same for sides fitted at full resolution (:mod:`farklecam.vision.tray.sides`), whatever the outline's source.
SIDES_SIGMA_PX = 1.0


@dataclass(frozen=True, eq=False)
class TrayOutline:
    """The tray's floor as a polygon in frame pixels.

    The fitted ``sides`` (:mod:`farklecam.vision.tray.sides`) run parallel to the floor's, so the
    camera's vertical drawn from them is the floor's.
    """

    polygon: npt.NDArray[np.float32]  #: vertices (k >= 3, 2), in order around the tray
    source: str = "corners"  #: ``"corners"`` (clicked), ``"aruco"``, ``"auto"`` (found) or ``"labelled"``
    sides: npt.NDArray[np.float32] | None = None  #: the quadrilateral (4, 2) fitted along the tray's edges, or None

    def __post_init__(self) -> None:
        poly = np.array(self.polygon, dtype=np.float32)
        if poly.ndim != 2 or poly.shape[1] != 2 or poly.shape[0] < 3:
            raise ValueError(f"polygon must be a 2D np.ndarray with shape (k>=3, 2), but got shape {poly.shape}")
        if not np.isfinite(poly).all():
            raise ValueError("polygon must hold finite coordinates")
        poly.setflags(write=False)
        object.__setattr__(self, "polygon", poly)
        if self.sides is not None:
            sides = np.array(self.sides, dtype=np.float32)
            if sides.shape != (4, 2) or not np.isfinite(sides).all():
                raise ValueError(f"sides must be 4 finite corners of shape (4, 2), but got shape {sides.shape}")
            sides.setflags(write=False)
            object.__setattr__(self, "sides", sides)
        if self.area <= 1.0:
            raise ValueError(f"polygon must enclose an area, but its area is {self.area:.1f} px²")

    @property
    def has_true_corners(self) -> bool:
        """Whether the vertices are the floor's own corners (not found by colour): a vertical may be drawn from them."""
        return self.source != "auto"

    @property
    def corner_sigma_px(self) -> float:
        """How far :attr:`vertical_corners` may be off, in pixels: what the camera's vertical may read into them."""
        if self.sides is not None:
            return SIDES_SIGMA_PX
        return CORNER_SIGMA_PX.get(self.source, CORNER_SIGMA_PX["corners"])

    @property
    def vertical_corners(self) -> npt.NDArray[np.float32] | None:
        """Corners the camera's vertical may be drawn from: fitted sides, else the floor's own corners, else None."""
        if self.sides is not None:
            return self.sides
        return self.polygon if self.has_true_corners else None

    @property
    def base_bound(self) -> TrayOutline:
        """The outline a die's base is judged against: a found floor grown to its fitted sides.

        A base rests on the floor or beyond the rim, never on a wall; a floor found by colour
        stops short where a wall's shadow darkens it, and the hull of it and its sides lies between.
        """
        if self.has_true_corners or self.sides is None:
            return self
        hull = cv2.convexHull(np.vstack([self.polygon, self.sides]).astype(np.float32))
        return TrayOutline(np.asarray(hull, np.float32).reshape(-1, 2), self.source, self.sides)

    @classmethod
    def from_corners(cls, corners: Sequence[Sequence[float]] | npt.ArrayLike, source: str = "corners") -> TrayOutline:
        """The outline through three or more corners given in any order (sorted by angle around their centroid).

        Raises:
            ValueError: fewer than 3 corners, or corners that enclose no area.
        """
        pts = np.asarray(corners, dtype=np.float32).reshape(-1, 2)
        if len(pts) < 3:
            raise ValueError(f"corners must hold at least 3 points (x, y), but got shape {pts.shape}")
        centre = pts.mean(axis=0)
        order = np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))
        return cls(pts[order], source)

    @property
    def area(self) -> float:
        """Area enclosed, in square pixels (shoelace formula)."""
        x, y = self.polygon[:, 0].astype(np.float64), self.polygon[:, 1].astype(np.float64)
        return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)

    def contains(self, points: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether each point (m, 2) lies inside the outline."""
        return points_in_polygon(points, self.polygon)

    def scaled(self, sx: float, sy: float) -> TrayOutline:
        """The outline for the same view at another resolution (``x * sx``, ``y * sy``)."""
        scale = np.array([sx, sy], np.float32)
        return TrayOutline(self.polygon * scale, self.source, None if self.sides is None else self.sides * scale)

    def to_list(self) -> list[list[float]]:
        """JSON form: ``[[x, y], ...]`` rounded to 0.1 px."""
        return [[round(float(x), 1), round(float(y), 1)] for x, y in self.polygon]


def footprint_inside(
    xyxy: npt.ArrayLike,
    outline: TrayOutline,
    footprint: float = 0.5,
    grid: int = 5,
    view: UprightView | None = None,
) -> npt.NDArray[np.float32]:
    """Fraction of each die's footprint inside the outline, shape (n,), sampled on a ``grid`` x ``grid`` grid.

    Without the camera's vertical the footprint is the lower ``footprint`` part of the box (a
    camera in front sees a die's sides above its base); with ``view`` it is the base itself: a
    square of the box's shorter side moved towards the nadir by half a vertical edge's length.
    """
    boxes = np.asarray(xyxy, dtype=np.float32).reshape(-1, 4)
    if len(boxes) == 0:
        return np.empty(0, np.float32)
    t = (np.arange(grid, dtype=np.float32) + 0.5) / grid
    x1, y1, x2, y2 = boxes.T
    if view is None:
        left, right, top, bottom = x1, x2, y2 - footprint * (y2 - y1), y2
    else:
        centre = np.column_stack([(x1 + x2) / 2, (y1 + y2) / 2]).astype(np.float64)
        side = np.minimum(x2 - x1, y2 - y1).astype(np.float64)
        towards = view.nadir[None, :] - centre
        towards /= np.maximum(np.linalg.norm(towards, axis=1, keepdims=True), 1e-9)
        edge = side * np.tan(np.minimum(view.view_tilt(centre).astype(np.float64), np.radians(80.0)))
        base = centre + (np.minimum(edge, 2 * side) / 2)[:, None] * towards
        left, top = (base - side[:, None] / 2).T.astype(np.float32)
        right, bottom = (base + side[:, None] / 2).T.astype(np.float32)
    xs = left[:, None] + t[None, :] * (right - left)[:, None]  # (n, g)
    ys = top[:, None] + t[None, :] * (bottom - top)[:, None]
    grid_x = np.repeat(xs[:, None, :], grid, axis=1)  # (n, g, g)
    grid_y = np.repeat(ys[:, :, None], grid, axis=2)
    pts = np.stack([grid_x, grid_y], axis=-1).reshape(-1, 2)
    inside = outline.contains(pts).reshape(len(boxes), grid * grid)
    return np.asarray(inside.mean(axis=1), dtype=np.float32)
