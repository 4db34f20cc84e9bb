"""The tray's sides at full resolution: straight edges fitted near a rough outline, for the camera's vertical.

The vertical comes from the tray's vanishing points, which a pixel off in a corner moves;
outlines found by colour and clicked corners are rougher. So each side is looked for again
in the full frame (the strongest Lab edge across it at regular steps, a RANSAC line through
them) and the lines' crossings are the corners. Whichever edge a line follows (floor, wall
foot or rim) runs parallel to the floor's side, so the vertical is the same. None where a
side is not found, runs along the picture's border, or the corners or camera are implausible.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.pose.upright import upright_view
from farklecam.vision.tray.outline import SIDES_SIGMA_PX, TrayOutline

__all__ = ["SideConfig", "fit_side", "snap", "tray_sides"]


@dataclass(frozen=True, slots=True)
class SideConfig:
    """How the tray's sides are looked for, and when they are believed."""

    band: float = 0.03  #: half-width of the band searched across each side, a fraction of the frame's width
    step: float = 3.0  #: pixels between two points along a side where an edge is looked for
    min_edge: float = 8.0  #: weakest edge counted, Lab units per pixel (above a felt floor's texture)
    inlier_px: float = 1.5  #: largest distance of a point from its side's line, pixels
    min_support: float = 0.6  #: share of a side's steps that must lie on its line
    max_move: float = 0.08  #: largest move of a corner from the rough outline's, a fraction of the diagonal
    max_focal: float = 2.5  #: largest focal length believed, a multiple of the picture's longer side
    retry_band: float | None = 0.06  #: a side not found is looked for again in a band this wide (None: once)
    retry_min_edge: float = 5.0  #: weakest edge counted in the retry (a shadowed wall's foot is dark on dark)
    seed: int = 0  #: seed of the RANSAC draws, so a frame always gives the same sides


Gradients = list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]


def _gradients(frame: npt.NDArray[np.uint8]) -> Gradients:
    """Horizontal and vertical derivatives of each Lab channel, lightly smoothed (per pixel)."""
    lab = cv2.cvtColor(cv2.GaussianBlur(frame, (5, 5), 1.2), cv2.COLOR_BGR2Lab).astype(np.float32)
    out: Gradients = []
    for c in range(3):
        gx = cv2.Sobel(lab[..., c], cv2.CV_32F, 1, 0, ksize=3) / 8.0
        gy = cv2.Sobel(lab[..., c], cv2.CV_32F, 0, 1, ksize=3) / 8.0
        out.append((np.asarray(gx, np.float32), np.asarray(gy, np.float32)))
    return out


def _edge_points(
    gradients: Gradients,
    p: npt.NDArray[np.float64],
    q: npt.NDArray[np.float64],
    band: int,
    config: SideConfig,
    size: tuple[int, int],
) -> tuple[npt.NDArray[np.float64], int]:
    """The strongest edge across segment pq at each step inside the picture, sub-pixel; and the number of steps."""
    d = q - p
    length = float(np.hypot(d[0], d[1]))
    along = d / length
    normal = np.array([-along[1], along[0]])
    steps = max(12, int(length / config.step))
    centres = p[None] + np.linspace(0.08, 0.92, steps)[:, None] * d[None]
    inside = (
        (centres[:, 0] >= 2) & (centres[:, 0] <= size[0] - 3) & (centres[:, 1] >= 2) & (centres[:, 1] <= size[1] - 3)
    )
    centres, steps = centres[inside], int(inside.sum())
    if steps < 12:
        return np.zeros((0, 2)), max(steps, 1)
    offsets = np.arange(-band, band + 1, dtype=np.float64)
    samples = centres[:, None, :] + offsets[None, :, None] * normal[None, None, :]
    map_x, map_y = samples[..., 0].astype(np.float32), samples[..., 1].astype(np.float32)
    strength = np.zeros(map_x.shape, np.float32)
    for gx, gy in gradients:
        across = cv2.remap(gx, map_x, map_y, cv2.INTER_LINEAR, borderValue=0) * normal[0]
        across += cv2.remap(gy, map_x, map_y, cv2.INTER_LINEAR, borderValue=0) * normal[1]
        strength = np.maximum(strength, np.abs(across))
    rows = np.arange(steps)
    peak = np.clip(strength.argmax(axis=1), 1, len(offsets) - 2)
    a, b, c = strength[rows, peak - 1], strength[rows, peak], strength[rows, peak + 1]
    curvature = a - 2 * b + c
    safe = np.where(np.abs(curvature) > 1e-6, curvature, 1.0)
    shift = np.where(np.abs(curvature) > 1e-6, 0.5 * (a - c) / safe, 0.0).clip(-1, 1)
    points = centres + (offsets[peak] + shift)[:, None] * normal[None]
    return points[b > config.min_edge], steps


def fit_side(
    points: npt.NDArray[np.float64], steps: int, config: SideConfig, rng: np.random.Generator
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """The line (a point, a unit direction) through ``min_support`` of the ``steps``' points (RANSAC), else None."""
    need = config.min_support * steps
    if len(points) < max(2, need):
        return None
    best: npt.NDArray[np.bool_] | None = None
    for _ in range(60):
        i, k = rng.choice(len(points), 2, replace=False)
        v = points[k] - points[i]
        norm = float(np.hypot(v[0], v[1]))
        if norm < 5.0:
            continue
        normal = np.array([-v[1], v[0]]) / norm
        inliers = np.abs((points - points[i]) @ normal) < config.inlier_px
        if best is None or inliers.sum() > best.sum():
            best = inliers
    if best is None or best.sum() < need:
        return None
    vx, vy, x0, y0 = cv2.fitLine(points[best].astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
    return np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)


def _on_border(p: npt.NDArray[np.float64], q: npt.NDArray[np.float64], width: int, height: int) -> bool:
    """Whether segment pq runs along the picture's border (within 3 px of one edge at both ends)."""
    xs, ys = (p[0], q[0]), (p[1], q[1])
    return bool(max(xs) < 3 or min(xs) > width - 4 or max(ys) < 3 or min(ys) > height - 4)


def _meet(
    first: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    second: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
) -> npt.NDArray[np.float64] | None:
    """Where two lines (point, direction) cross; None if they are (nearly) parallel."""
    (p1, d1), (p2, d2) = first, second
    system = np.array([d1, -d2]).T
    if abs(float(np.linalg.det(system))) < 1e-6:
        return None
    t = np.linalg.solve(system, p2 - p1)
    crossing: npt.NDArray[np.float64] = p1 + t[0] * d1
    return crossing


def tray_sides(
    frame: npt.NDArray[np.uint8], outline: npt.ArrayLike, config: SideConfig | None = None
) -> npt.NDArray[np.float32] | None:
    """Four corners (4, 2) along the tray's edges near a rough ``outline`` (4, 2), in its order; None if untrusted."""
    cfg = config or SideConfig()
    quad = np.asarray(outline, np.float64)
    if quad.shape != (4, 2):
        return None
    height, width = frame.shape[:2]
    band = max(6, round(cfg.band * width))
    rng = np.random.default_rng(cfg.seed)
    gradients = _gradients(frame)
    lines = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        if _on_border(p, q, width, height) or np.hypot(*(q - p)) < 20:
            return None
        points, steps = _edge_points(gradients, p, q, band, cfg, (width, height))
        line = fit_side(points, steps, cfg, rng)
        if line is None and cfg.retry_band is not None:
            wide = dataclasses.replace(cfg, min_edge=cfg.retry_min_edge)
            points, steps = _edge_points(
                gradients, p, q, max(band, round(cfg.retry_band * width)), wide, (width, height)
            )
            line = fit_side(points, steps, wide, rng)
        if line is None:
            return None
        lines.append(line)
    corners = [_meet(lines[i - 1], lines[i]) for i in range(4)]
    if any(c is None for c in corners):
        return None
    found = np.array(corners, np.float64)
    if np.abs(found - quad).max() > cfg.max_move * float(np.hypot(width, height)):
        return None
    view = upright_view(found, (width, height))
    if view is None or view.focal > cfg.max_focal * max(width, height):
        return None
    return found.astype(np.float32)


#: Clicked corners are a few pixels off: their sides' corners may move this far (fraction of the diagonal).
SNAP_MAX_MOVE = 0.03
#: Largest angle between the verticals of the clicked corners and of the sides snapped to them, in degrees.
SNAP_MAX_TURN = 10.0


def snap(outline: TrayOutline, frame: npt.NDArray[np.uint8]) -> TrayOutline:
    """Clicked corners snapped to the tray's edges in ``frame``: the outline with :attr:`TrayOutline.sides` set.

    The sides are kept only where each is found near the clicks (:data:`SNAP_MAX_MOVE`) and
    their vertical agrees with the clicks' (:data:`SNAP_MAX_TURN`).
    """
    if outline.sides is not None or len(outline.polygon) != 4:
        return outline
    size = (frame.shape[1], frame.shape[0])
    sides = tray_sides(frame, outline.polygon, SideConfig(max_move=SNAP_MAX_MOVE, retry_band=None))
    if sides is None:
        return outline
    clicked = upright_view(outline.polygon, size, outline.corner_sigma_px)
    fitted = upright_view(sides, size, SIDES_SIGMA_PX)
    if clicked is None or fitted is None or clicked.angle_to(fitted) > SNAP_MAX_TURN:
        return outline
    return TrayOutline(outline.polygon, outline.source, sides)
