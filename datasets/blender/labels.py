"""From the dice's final poses to farklecam labels: YOLO boxes and sidecar entries (no bpy).

The fields and rules of :mod:`farklecam.datasets.raytraced.labels`: the top face is the one whose
normal is closest to the table's (+z), ``tilt_deg`` its angle from it
(:func:`farklecam.datasets.raytraced.dice.top_face`); ``cocked`` past
:data:`~farklecam.datasets.raytraced.dice.COCKED_TILT_DEG`; ``off_tray`` when the die's centre is not
over the inner floor; the box bounds the real (bevelled, dimpled) mesh's projected
vertices, clipped to the frame. Two fields are this generator's own: ``placed`` (how the
final pose rests: off, wall, die or flat) and ``dropped_as`` (how it started, see
:mod:`farklecam.datasets.blender.drops`). Visibility needs the renderer's rays, so it comes in as a
callable and the rest stays testable without Blender.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from farklecam.datasets.raytraced.camera import PinholeCamera
from farklecam.datasets.raytraced.dice import COCKED_TILT_DEG, top_face
from farklecam.datasets.raytraced.placement import Tray
from farklecam.datasets.yolo import COCKED_CLASS, HIDDEN_BELOW, OCCLUDED_BELOW, DieLabel, YoloBox

__all__ = ["TOUCH_CM", "DiePose", "SeenShare", "die_gap", "label_dice", "near_wall"]

F64 = npt.NDArray[np.float64]
#: Dice (or a die and a wall) closer than this (cm) are ``touching``.
TOUCH_CM = 0.06

#: ``seen(k, box, stride)``: the share of die ``k``'s silhouette that the camera sees, sampled
#: every ``stride`` pixels over its unclipped box ``(x1, y1, x2, y2)``.
SeenShare = Callable[[int, tuple[float, float, float, float], float], float]


@dataclass(frozen=True, slots=True)
class DiePose:
    """A die at rest: world rotation (3, 3) and centre (3,), its mesh in its own frame (n, 3), edge, start kind."""

    rotation: F64
    position: F64
    vertices: F64
    size: float
    dropped_as: str

    def world_vertices(self) -> F64:
        """The mesh's vertices in world cm (n, 3)."""
        out: F64 = (self.rotation @ self.vertices.T).T + self.position
        return out


def near_wall(verts_w: F64, tray: Tray) -> bool:
    """Whether a die's world vertices come within :data:`TOUCH_CM` of a wall's inner face."""
    return bool(
        np.abs(verts_w[:, 0]).max() > tray.width / 2 - TOUCH_CM
        or np.abs(verts_w[:, 1]).max() > tray.depth / 2 - TOUCH_CM
    )


def die_gap(a: DiePose, b: DiePose) -> float:
    """The smallest gap from ``a``'s vertices to ``b``'s unbevelled cube (cm; about 0 when they touch)."""
    local = (b.rotation.T @ (a.world_vertices() - b.position).T).T
    q = np.abs(local) - b.size / 2
    outside = np.linalg.norm(np.maximum(q, 0), axis=1) + np.minimum(q.max(axis=1), 0)
    return float(outside.min())


def _placed(inside: bool, cocked: bool, wall: bool, on_die: bool) -> str:
    if not inside:
        return "off"
    if cocked:
        return "wall" if wall else ("die" if on_die else "flat")
    return "flat"


def label_dice(
    dice: Sequence[DiePose], camera: PinholeCamera, tray: Tray, seen: SeenShare
) -> tuple[list[DieLabel], int]:
    """Label every die the camera sees, sorted left to right.

    Returns:
        ``(labels, hidden)``: the labels and how many dice were left out (behind the camera,
        out of frame, fallen under the table, or under :data:`~farklecam.datasets.yolo.HIDDEN_BELOW` seen).
    """
    w, h = camera.width, camera.height
    labels: list[DieLabel] = []
    hidden = 0
    for k, die in enumerate(dice):
        verts_w = die.world_vertices()
        px, front = camera.project(verts_w)
        x1, y1 = px.min(axis=0)
        x2, y2 = px.max(axis=0)
        cx1, cy1, cx2, cy2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(w)), min(y2, float(h))
        if not front.all() or cx2 - cx1 < 1 or cy2 - cy1 < 1 or die.position[2] < -1:
            hidden += 1
            continue
        share = seen(k, (float(x1), float(y1), float(x2), float(y2)), max(1.0, (x2 - x1) / 24))
        if share < HIDDEN_BELOW:
            hidden += 1
            continue
        in_box = (cx2 - cx1) * (cy2 - cy1) / max((x2 - x1) * (y2 - y1), 1e-6)
        face, tilt, normal = top_face(die.rotation)
        cocked = tilt > COCKED_TILT_DEG
        inside = tray.inside(die.position)
        gaps = [min(die_gap(die, o), die_gap(o, die)) for j, o in enumerate(dice) if j != k]
        on_die = bool(gaps) and min(gaps) < TOUCH_CM
        wall = inside and near_wall(verts_w, tray)
        xyxy = [round(float(v), 1) for v in (cx1, cy1, cx2, cy2)]
        entry = {
            "box": xyxy,
            "face": None if cocked else face,
            "status": "off_tray" if not inside else ("cocked" if cocked else "ok"),
            "tilt_deg": round(tilt, 2),
            "touching": bool(on_die or wall),
            "visible": round(min(share, 1.0), 3),
            "occluded": bool(share < OCCLUDED_BELOW or in_box < OCCLUDED_BELOW),
            "size_cm": round(die.size, 3),
            "up_cam": [round(float(v), 5) for v in camera.to_camera(normal[None])[0]],
            "placed": _placed(inside, cocked, wall, on_die),
            "dropped_as": die.dropped_as,
        }
        labels.append(DieLabel(YoloBox.from_xyxy(COCKED_CLASS if cocked else face - 1, xyxy, w, h), entry))
    labels.sort(key=lambda d: (d.entry["box"][0], d.entry["box"][1]))
    return labels, hidden
