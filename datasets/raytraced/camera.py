"""The raytraced scenes' pinhole camera: placement, projection and the camera frame.

One definition serves the renderer and the labels: the renderer is handed the same eye,
target, up and vertical field of view, and :meth:`PinholeCamera.project` is the plain
pinhole ``x / z * f + c`` with square pixels and the principal point at the picture's
centre, so boxes and tray corners land on the rendered pixels (checked by the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["PinholeCamera", "aim_camera"]

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PinholeCamera:
    """Eye and target in world cm, the image's up direction, vertical field of view, size in pixels."""

    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    up: tuple[float, float, float]
    fov_y_deg: float
    width: int
    height: int

    def axes(self) -> F64:
        """Rows: the camera's x (right), y (down) and z (forward) axes in world coordinates."""
        forward = np.subtract(self.target, self.eye)
        forward = forward / np.linalg.norm(forward)
        up = np.asarray(self.up, np.float64)
        up = up - forward * float(up @ forward)
        up /= np.linalg.norm(up)
        right = np.cross(forward, up)
        return np.stack([right, -up, forward])

    @property
    def focal_px(self) -> float:
        """Focal length in pixels."""
        return self.height / 2 / float(np.tan(np.radians(self.fov_y_deg) / 2))

    def intrinsics(self) -> tuple[float, float, float, float]:
        """``(fx, fy, cx, cy)`` in pixels."""
        f = self.focal_px
        return f, f, self.width / 2, self.height / 2

    def to_camera(self, directions: npt.ArrayLike) -> F64:
        """World directions (n, 3) in the camera's frame: x right, y down, z forward."""
        out: F64 = np.asarray(directions, np.float64) @ self.axes().T
        return out

    def project(self, points: npt.ArrayLike) -> tuple[F64, npt.NDArray[np.bool_]]:
        """Pixels (n, 2) of world points (n, 3), and whether each lies in front of the camera."""
        cam = self.to_camera(np.asarray(points, np.float64) - np.asarray(self.eye))
        z = cam[:, 2]
        safe = np.where(np.abs(z) < 1e-9, 1e-9, z)
        fx, fy, cx, cy = self.intrinsics()
        px = np.stack([cam[:, 0] / safe * fx + cx, cam[:, 1] / safe * fy + cy], axis=1)
        return px, z > 0


def aim_camera(
    target: F64, distance: float, fov_y_deg: float, size: tuple[int, int], tilt_deg: float, yaw_deg: float
) -> PinholeCamera:
    """A camera ``distance`` cm from ``target``, ``tilt_deg`` off straight down.

    ``yaw_deg`` is the world direction (about the vertical) that the picture's top
    points to; a tilted camera stands back from the target on the opposite side, as a
    person holding a phone over a table does.
    """
    t, y = np.radians(tilt_deg), np.radians(yaw_deg)
    ahead = np.array([np.cos(y), np.sin(y), 0.0])
    eye = np.asarray(target, np.float64) + distance * (np.cos(t) * np.array([0.0, 0.0, 1.0]) - np.sin(t) * ahead)
    return PinholeCamera(
        (float(eye[0]), float(eye[1]), float(eye[2])),
        (float(target[0]), float(target[1]), float(target[2])),
        (float(ahead[0]), float(ahead[1]), float(ahead[2])),
        fov_y_deg,
        size[0],
        size[1],
    )
