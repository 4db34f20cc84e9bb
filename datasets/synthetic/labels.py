"""From rested dice to labels: boxes, faces, status, visibility and the tray outline.

The box of a die is the bounding box of its 8 projected corners (the whole die, as
the detector should learn it), clipped to the image. Its pose is recorded as
``up_cam``: the outward normal of its most upward face in the camera's frame (x
right, y down, z forward; :meth:`~farklecam.datasets.synthetic.camera.Camera.to_camera`), so
``tilt_deg`` is the angle between it and the table's normal in the same frame. Visibility is measured on the
renderer's segmentation mask: the die's own pixels over the area of its projected
silhouette, so dice hidden behind a wall, another die or a hand are known.
"""

from __future__ import annotations

import cv2
import numpy as np

from farklecam.datasets.synthetic.camera import Camera
from farklecam.datasets.synthetic.mesh import COCKED_TILT_DEG, FACE_NORMALS, top_face
from farklecam.datasets.synthetic.world import DiePose, Tray
from farklecam.datasets.yolo import COCKED_CLASS, HIDDEN_BELOW, OCCLUDED_BELOW, DieLabel, YoloBox

__all__ = ["label_dice", "tray_outline"]


def tray_outline(camera: Camera, tray: Tray) -> list[list[float]]:
    """The inner floor's 4 corners in pixels (may lie outside the image when the tray is cropped)."""
    px, _ = camera.project(tray.floor_corners())
    return [[round(float(x), 1), round(float(y), 1)] for x, y in px]


def label_dice(
    poses: list[DiePose], camera: Camera, seg: np.ndarray, tray: Tray, touching: list[bool]
) -> tuple[list[DieLabel], int]:
    """Label every die that can be seen.

    Status: ``off_tray`` when the die's centre is not over the tray's inner floor (on
    the table, or on a wall's rim), else ``cocked`` when its tilt exceeds
    :data:`~farklecam.datasets.synthetic.mesh.COCKED_TILT_DEG`, else ``ok``. The class is
    :data:`~farklecam.datasets.yolo.COCKED_CLASS` for any die over the threshold, else face - 1.

    Returns:
        ``(labels, hidden)``: labels sorted left to right, and how many dice were in the
        scene but left out (out of frame, or less than :data:`HIDDEN_BELOW` visible).
    """
    w, h = camera.width, camera.height
    labels: list[DieLabel] = []
    hidden = 0
    for pose, touch in zip(poses, touching, strict=True):
        px, in_front = camera.project(pose.corners())
        if not in_front.all():
            hidden += 1
            continue
        x1, y1 = px.min(axis=0)
        x2, y2 = px.max(axis=0)
        cx1, cy1, cx2, cy2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(w)), min(y2, float(h))
        if cx2 - cx1 < 1 or cy2 - cy1 < 1:
            hidden += 1
            continue
        hull = cv2.convexHull(px.astype(np.float32))
        area = max(float(cv2.contourArea(hull)), 1.0)
        ix1, iy1, ix2, iy2 = int(cx1), int(cy1), int(np.ceil(cx2)), int(np.ceil(cy2))
        visible = float((seg[iy1:iy2, ix1:ix2] == pose.body).sum()) / area
        if visible < HIDDEN_BELOW:
            hidden += 1
            continue
        in_box = (cx2 - cx1) * (cy2 - cy1) / max((x2 - x1) * (y2 - y1), 1e-6)
        face, tilt = top_face(pose.rotation)
        up_cam = camera.to_camera((pose.rotation @ np.asarray(FACE_NORMALS[face]))[None])[0]
        cocked = tilt > COCKED_TILT_DEG
        status = "off_tray" if not tray.inside(pose.position) else ("cocked" if cocked else "ok")
        cls = COCKED_CLASS if cocked else face - 1
        xyxy = [round(float(v), 1) for v in (cx1, cy1, cx2, cy2)]
        entry = {
            "box": xyxy,
            "face": None if cocked else face,
            "status": status,
            "tilt_deg": round(tilt, 2),
            "touching": bool(touch),
            "visible": round(min(visible, 1.0), 3),
            "occluded": bool(visible < OCCLUDED_BELOW or in_box < OCCLUDED_BELOW),
            "size_cm": round(pose.size, 3),
            "up_cam": [round(float(v), 5) for v in up_cam],
        }
        labels.append(DieLabel(YoloBox.from_xyxy(cls, xyxy, w, h), entry))
    labels.sort(key=lambda d: (d.entry["box"][0], d.entry["box"][1]))
    return labels, hidden
