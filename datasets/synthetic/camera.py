"""Camera placement, projection of 3D points to pixels, and the TinyRenderer call.

pybullet hands back OpenGL matrices as flat column-major lists; :class:`Camera` keeps
them and projects points with the same maths the renderer uses, so labels (die
corners, tray outline) land exactly on the rendered pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pybullet as p

__all__ = ["Camera", "Light", "look_from", "render"]


@dataclass(frozen=True, slots=True)
class Light:
    """TinyRenderer's one directional light plus ambient; ``direction`` points towards the light."""

    direction: tuple[float, float, float]
    color: tuple[float, float, float]
    ambient: float
    diffuse: float
    specular: float
    shadow: bool = True


@dataclass(frozen=True, slots=True)
class Camera:
    """A pinhole camera: eye and target in world cm, up vector, vertical field of view."""

    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    up: tuple[float, float, float]
    fov_deg: float
    width: int
    height: int
    near: float = 1.0
    far: float = 2000.0

    def view(self) -> list[float]:
        """The view matrix as pybullet wants it."""
        return list(p.computeViewMatrix(self.eye, self.target, self.up))

    def projection(self) -> list[float]:
        """The projection matrix as pybullet wants it."""
        return list(p.computeProjectionMatrixFOV(self.fov_deg, self.width / self.height, self.near, self.far))

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixels (n, 2) of world points (n, 3), and whether each is in front of the camera."""
        view = np.asarray(self.view()).reshape(4, 4).T
        proj = np.asarray(self.projection()).reshape(4, 4).T
        homo = np.hstack([points, np.ones((len(points), 1))]) @ (proj @ view).T
        w = homo[:, 3]
        ndc = homo[:, :3] / w[:, None]
        px = np.stack([(ndc[:, 0] + 1) / 2 * self.width, (1 - ndc[:, 1]) / 2 * self.height], axis=1)
        return px, w > 0

    @property
    def focal_px(self) -> float:
        """Focal length in pixels (vertical)."""
        return self.height / 2 / float(np.tan(np.radians(self.fov_deg) / 2))

    def intrinsics(self) -> tuple[float, float, float, float]:
        """``(fx, fy, cx, cy)`` in pixels: square pixels, principal point at the picture's centre.

        What :meth:`project` does, written as a pinhole matrix, so a pose measured in
        the camera's frame (:meth:`to_camera`) maps to pixels as ``x / z * fx + cx``.
        """
        f = self.focal_px
        return f, f, self.width / 2, self.height / 2

    def to_camera(self, directions: np.ndarray) -> np.ndarray:
        """World directions (n, 3) in the camera's frame as vision uses it: x right, y down, z forward.

        OpenGL's view frame has y up and looks along -z; the reader's
        (:meth:`farklecam.vision.pose.upright.UprightView.direction`) has y down and z along the lens axis.
        """
        view = np.asarray(self.view(), np.float64).reshape(4, 4).T[:3, :3]
        turn: np.ndarray = np.diag([1.0, -1.0, -1.0]) @ view
        out: np.ndarray = np.asarray(directions, np.float64) @ turn.T
        return out


def look_from(
    target: np.ndarray, distance: float, tilt_deg: float, yaw_deg: float, fov_deg: float, width: int, height: int
) -> Camera:
    """A camera ``distance`` cm from ``target``, ``tilt_deg`` off vertical, rotated ``yaw_deg``.

    The image's up direction follows the yaw, so straight-down shots also come in every
    rotation (a phone held any way round).
    """
    t, y = np.radians(tilt_deg), np.radians(yaw_deg)
    back = np.array([np.cos(y), np.sin(y), 0.0])
    eye = target + distance * (np.sin(t) * back + np.cos(t) * np.array([0.0, 0.0, 1.0]))
    up = -back * np.cos(t) + np.array([0.0, 0.0, 1.0]) * np.sin(t)
    return Camera(
        cast("tuple[float, float, float]", tuple(float(v) for v in eye)),
        cast("tuple[float, float, float]", tuple(float(v) for v in target)),
        cast("tuple[float, float, float]", tuple(float(v) for v in up)),
        fov_deg,
        width,
        height,
    )


def render(client: int, camera: Camera, light: Light) -> tuple[np.ndarray, np.ndarray]:
    """Render with TinyRenderer.

    Returns:
        ``(rgb, seg)``: RGB ``uint8`` (h, w, 3) and the body id under each pixel (h, w),
        -1 for empty space.
    """
    _, _, rgba, _, seg = p.getCameraImage(
        camera.width,
        camera.height,
        camera.view(),
        camera.projection(),
        lightDirection=list(light.direction),
        lightColor=list(light.color),
        lightDistance=100.0,
        shadow=int(light.shadow),
        lightAmbientCoeff=light.ambient,
        lightDiffuseCoeff=light.diffuse,
        lightSpecularCoeff=light.specular,
        renderer=p.ER_TINY_RENDERER,
        physicsClientId=client,
    )
    rgb = np.asarray(rgba, np.uint8).reshape(camera.height, camera.width, 4)[..., :3]
    return np.ascontiguousarray(rgb), np.asarray(seg).reshape(camera.height, camera.width)
