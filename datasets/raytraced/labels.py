"""From placed dice to the farklecam label format: YOLO boxes and the generated-scene sidecar.

The format is the only thing this generator shares with :mod:`farklecam.datasets.synthetic`: the
class ids and writers of :mod:`farklecam.datasets.yolo`, and the sidecar's fields (``tray``
corners; per die ``box``, ``face``, ``status``, ``tilt_deg``, ``up_cam``, ``occluded``...;
the camera's ``intrinsics`` and ``table_normal``) with the same meanings. A die's box is
the bounding box of its projected mesh (the whole die), clipped to the picture.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from farklecam.datasets.raytraced.camera import PinholeCamera
from farklecam.datasets.raytraced.dice import COCKED_TILT_DEG
from farklecam.datasets.raytraced.placement import TOUCH_CM, Placed, Tray
from farklecam.datasets.yolo import COCKED_CLASS, HIDDEN_BELOW, OCCLUDED_BELOW, DieLabel, YoloBox

__all__ = ["camera_fields", "label_dice", "scene_fields", "tray_corners_px"]


def tray_corners_px(camera: PinholeCamera, tray: Tray) -> list[list[float]]:
    """The inner floor's 4 corners in pixels, counter-clockwise in the world from (-x, -y)."""
    px, _ = camera.project(tray.floor_corners())
    return [[round(float(x), 1), round(float(y), 1)] for x, y in px]


def scene_fields(
    camera: PinholeCamera, tray: Tray, tilt_deg: float, labels: list[DieLabel], hidden: int, surfaces: dict[str, str]
) -> dict[str, Any]:
    """The sidecar entries every path-traced generator writes alike: tray, dice, size, camera, tray_spec.

    ``surfaces`` names the tray's materials (``floor``, ``wall``, ...) in ``tray_spec``.
    """
    return {
        "tray": tray_corners_px(camera, tray),
        "dice": [d.entry for d in labels],
        "hidden_dice": hidden,
        "size": [camera.width, camera.height],
        "camera": {**camera_fields(camera), "tilt_deg": round(tilt_deg, 2)},
        "tray_spec": {
            "width_cm": round(tray.width, 2),
            "depth_cm": round(tray.depth, 2),
            "wall_h_cm": round(tray.wall_h, 2),
            "wall_t_cm": round(tray.wall_t, 2),
            **surfaces,
        },
    }


def camera_fields(camera: PinholeCamera) -> dict[str, Any]:
    """The sidecar's ``camera`` entry: eye, target, field of view, intrinsics and the table's normal."""
    return {
        "eye": [round(v, 2) for v in camera.eye],
        "target": [round(v, 2) for v in camera.target],
        "fov_deg": round(camera.fov_y_deg, 2),
        "intrinsics": [round(v, 3) for v in camera.intrinsics()],
        "table_normal": [round(float(v), 5) for v in camera.to_camera(np.array([[0.0, 0.0, 1.0]]))[0]],
    }


def _touching(k: int, placed: list[Placed], tray: Tray) -> bool:
    die = placed[k].die
    if placed[k].kind in ("wall", "die"):
        return True
    if tray.inside(die.position) and tray.wall_gap(die) < TOUCH_CM:
        return True
    return any(
        j != k
        and np.linalg.norm(die.position - p.die.position) < 0.9 * (die.size + p.die.size)
        and die.clearance(p.die) < TOUCH_CM
        for j, p in enumerate(placed)
    )


def label_dice(
    placed: list[Placed], visible: list[float], camera: PinholeCamera, tray: Tray
) -> tuple[list[DieLabel], int]:
    """Label every die that can be seen, sorted left to right.

    Status: ``off_tray`` when the die's centre is not over the tray's inner floor, else
    ``cocked`` past :data:`~farklecam.datasets.raytraced.dice.COCKED_TILT_DEG`, else ``ok``; the
    class is :data:`~farklecam.datasets.yolo.COCKED_CLASS` for any die past the threshold, else face - 1.

    Returns:
        ``(labels, hidden)``: the labels and how many dice were left out (out of frame,
        or under :data:`HIDDEN_BELOW` of them seen).
    """
    w, h = camera.width, camera.height
    labels: list[DieLabel] = []
    hidden = 0
    for k, (item, seen) in enumerate(zip(placed, visible, strict=True)):
        die = item.die
        px, front = camera.project(die.world_vertices())
        x1, y1 = px.min(axis=0)
        x2, y2 = px.max(axis=0)
        cx1, cy1, cx2, cy2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(w)), min(y2, float(h))
        if not front.all() or cx2 - cx1 < 1 or cy2 - cy1 < 1 or seen < HIDDEN_BELOW:
            hidden += 1
            continue
        in_box = (cx2 - cx1) * (cy2 - cy1) / max((x2 - x1) * (y2 - y1), 1e-6)
        face, tilt, normal = die.up()
        cocked = tilt > COCKED_TILT_DEG
        status = "off_tray" if not tray.inside(die.position) else ("cocked" if cocked else "ok")
        xyxy = [round(float(v), 1) for v in (cx1, cy1, cx2, cy2)]
        entry = {
            "box": xyxy,
            "face": None if cocked else face,
            "status": status,
            "tilt_deg": round(tilt, 2),
            "touching": _touching(k, placed, tray),
            "visible": round(min(seen, 1.0), 3),
            "occluded": bool(seen < OCCLUDED_BELOW or in_box < OCCLUDED_BELOW),
            "size_cm": round(die.size, 3),
            "up_cam": [round(float(v), 5) for v in camera.to_camera(normal[None])[0]],
            "placed": item.kind,
        }
        labels.append(DieLabel(YoloBox.from_xyxy(COCKED_CLASS if cocked else face - 1, xyxy, w, h), entry))
    labels.sort(key=lambda d: (d.entry["box"][0], d.entry["box"][1]))
    return labels, hidden
