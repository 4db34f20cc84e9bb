"""Camera realism applied after rendering: table backgrounds, blur, noise, colour and JPEG.

TinyRenderer draws clean, aliased, perfectly exposed frames; real webcams and phones
do not. Everything here is numpy/OpenCV on the RGB frame and is driven by one
``Generator``, so it is part of the scene's seeded, reproducible look.
"""

from __future__ import annotations

from typing import Any, cast

import cv2
import numpy as np

from farklecam.datasets.synthetic.camera import Camera
from farklecam.datasets.synthetic.textures import Rgb, surface_texture
from farklecam.datasets.synthetic.world import DiePose

__all__ = ["TABLE_GREY", "degrade", "soft_shadows", "table_background", "table_texture", "webcam"]

#: Plain colour the table is rendered in; its rendered brightness becomes the shading of the
#: background texture laid over it (so shadows of the tray and dice survive).
TABLE_GREY = 0.7

_TABLE_KINDS = ("wood", "wood", "wood", "noise", "noise", "paper", "felt", "plastic")
_TABLE_COLOURS: tuple[tuple[int, int, int], ...] = (
    (205, 170, 125),
    (225, 200, 160),
    (150, 100, 60),
    (110, 70, 40),
    (235, 235, 230),
    (60, 60, 65),
    (180, 180, 185),
    (200, 200, 190),
    (120, 130, 150),
    (90, 110, 80),
)


def _ground_hit(camera: Camera, pixels: np.ndarray) -> np.ndarray:
    """Where the rays through ``pixels`` (n, 2) meet the table plane z = 0, as (n, 2) x, y."""
    view = np.asarray(camera.view()).reshape(4, 4).T
    proj = np.asarray(camera.projection()).reshape(4, 4).T
    inv = np.linalg.inv(proj @ view)
    out = []
    for u, v in pixels:
        ndc = np.array([u / camera.width * 2 - 1, 1 - v / camera.height * 2])
        near = inv @ np.array([ndc[0], ndc[1], -1.0, 1.0])
        far = inv @ np.array([ndc[0], ndc[1], 1.0, 1.0])
        a, b = near[:3] / near[3], far[:3] / far[3]
        t = a[2] / (a[2] - b[2])
        out.append((a + t * (b - a))[:2])
    return np.asarray(out)


def table_background(
    rng: np.random.Generator,
    rgb: np.ndarray,
    table_mask: np.ndarray,
    camera: Camera,
    warped: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Replace the plain rendered table with a textured surface seen in correct perspective.

    The texture is warped onto the table plane with the homography that the camera
    induces (so wood grain recedes with the view), then multiplied by the rendered
    table's brightness relative to :data:`TABLE_GREY`, which carries the light falloff
    and the shadows cast by the tray and dice.

    Args:
        rng: draws the table's material, colour and texture scale.
        rgb: the rendered frame.
        table_mask: pixels where the renderer drew the table.
        camera: the camera of the frame.
        warped: a texture already warped for this camera (video frames reuse one);
            when given, ``rng`` is not used.
    """
    info: dict[str, Any] = {}
    if warped is None:
        warped, info = table_texture(rng, camera)
    shade = rgb.astype(np.float32) / (TABLE_GREY * 255.0)
    out = rgb.astype(np.float32)
    m = table_mask
    out[m] = warped[m].astype(np.float32) * shade[m].mean(axis=1, keepdims=True)
    return np.clip(out, 0, 255).astype(np.uint8), info


def table_texture(rng: np.random.Generator, camera: Camera) -> tuple[np.ndarray, dict[str, Any]]:
    """A table surface texture warped into the camera's view, (h, w, 3) RGB, and what it is."""
    kind = str(rng.choice(_TABLE_KINDS))
    base = _TABLE_COLOURS[int(rng.integers(0, len(_TABLE_COLOURS)))]
    base = cast("Rgb", tuple(int(np.clip(c + rng.integers(-20, 21), 0, 255)) for c in base))
    size = 512
    tex = surface_texture(rng, kind, base, size=size)
    w, h = camera.width, camera.height
    corners_px = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    ground = _ground_hit(camera, corners_px)
    centre = ground.mean(axis=0)
    span = float(np.abs(ground - centre).max()) * 2 * rng.uniform(1.0, 2.5)
    tex_pts = (ground - centre) / span * size + size / 2
    hom = cv2.getPerspectiveTransform(tex_pts.astype(np.float32), corners_px.astype(np.float32))
    warped = cv2.warpPerspective(tex, hom, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return warped, {"table": kind, "table_rgb": list(base)}


def soft_shadows(
    rng: np.random.Generator,
    rgb: np.ndarray,
    seg: np.ndarray,
    camera: Camera,
    poses: list[DiePose],
    light_dir: tuple[float, float, float],
) -> tuple[np.ndarray, float]:
    """Darken the surface under and beside each die where its shadow falls.

    TinyRenderer's shadow map costs half the render time and barely shows at die
    scale, so shadows are drawn here instead: each die's corners are pushed along
    the light onto the plane it rests on, the hull of that footprint is filled,
    blurred into a soft penumbra, and multiplied into every non-die pixel.

    Returns:
        ``(rgb, strength)`` with the darkening strength used (0 = no shadows drawn).
    """
    if not poses or rng.random() < 0.1:
        return rgb, 0.0
    strength = float(rng.uniform(0.25, 0.6))
    light = np.asarray(light_dir, float)
    light = light / np.linalg.norm(light)
    mask: np.ndarray = np.zeros(rgb.shape[:2], np.float32)
    px_size = []
    for pose in poses:
        corners = pose.corners()
        z0 = corners[:, 2].min()
        flat = corners - light[None, :] * ((corners[:, 2] - z0) / max(light[2], 0.2))[:, None]
        both = np.vstack([flat, corners[corners[:, 2] < z0 + pose.size * 0.3]])
        pts, front = camera.project(both)
        if not front.all():
            continue
        hull = cv2.convexHull(pts.astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(mask, hull, 1.0, cv2.LINE_AA)
        px_size.append(float(np.ptp(pts[:, 0])))
    if not px_size:
        return rgb, 0.0
    sigma = max(1.0, float(np.median(px_size)) * float(rng.uniform(0.08, 0.25)))
    mask = cv2.GaussianBlur(mask, (0, 0), sigma)
    dice = np.isin(seg, [pz.body for pz in poses])
    mask[dice] = 0.0
    out = rgb.astype(np.float32) * (1.0 - strength * np.clip(mask, 0, 1))[..., None]
    return np.clip(out, 0, 255).astype(np.uint8), strength


def _motion_kernel(rng: np.random.Generator, length: int) -> np.ndarray:
    k: np.ndarray = np.zeros((length, length), np.float32)
    cv2.line(k, (0, length // 2), (length - 1, length // 2), 1.0, 1)
    rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
    k = cv2.warpAffine(k, rot, (length, length))
    return k / max(float(k.sum()), 1e-6)


def degrade(
    rng: np.random.Generator, rgb: np.ndarray, noise_rng: np.random.Generator | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """Lens blur, occasional motion blur, white balance, exposure, vignette and sensor noise.

    Args:
        rng: draws the camera's settings (blur, white balance, exposure...).
        rgb: the rendered frame.
        noise_rng: draws the sensor noise; defaults to ``rng``. Video frames pass one
            camera ``rng`` seeded the same for every frame and a fresh ``noise_rng`` per frame,
            so the camera stays the same while the grain changes.

    Returns:
        ``(rgb, params)``: the degraded RGB ``uint8`` image and what was applied (for the sidecar).
    """
    img: np.ndarray = rgb.astype(np.float32)
    h, w = img.shape[:2]
    params: dict[str, Any] = {}
    if rng.random() < 0.35:  # cheap webcam: captured small, scaled up
        f = float(rng.uniform(0.5, 0.8))
        small = cv2.resize(img, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        params["rescale"] = round(f, 3)
    sigma = float(rng.uniform(0.3, 1.2)) if rng.random() < 0.85 else float(rng.uniform(1.2, 2.0))
    img = cv2.GaussianBlur(img, (0, 0), sigma)
    params["blur_sigma"] = round(sigma, 3)
    if rng.random() < 0.12:
        length = int(rng.integers(3, 12))
        img = cv2.filter2D(img, -1, _motion_kernel(rng, length))
        params["motion_blur"] = length
    img = _tone(rng, img, params)
    img = _vignette(rng, img, params)
    img = _grain(rng, img, params, float(rng.uniform(1.0, 7.0)), noise_rng)
    return np.clip(img, 0, 255).astype(np.uint8), params


def webcam(
    rng: np.random.Generator, rgb: np.ndarray, noise_rng: np.random.Generator | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """A webcam's video frame: :func:`degrade`'s colour and grain, but the optics of a camera in focus.

    A webcam over a tray films dice at rest as sharp as a still: its lens blur is slight
    and it is never captured small and scaled up. Motion blur belongs to what moves
    (the video adds it per body), so there is none here; the stream's JPEG is the
    caller's, after any look.

    Args:
        rng: draws the camera's settings (seeded the same for every frame of a video).
        rgb: the rendered frame.
        noise_rng: draws this frame's sensor noise; defaults to ``rng``.

    Returns:
        ``(rgb, params)``: the RGB ``uint8`` frame and what was applied.
    """
    sigma = float(rng.uniform(0.3, 0.7))
    img: np.ndarray = cv2.GaussianBlur(rgb.astype(np.float32), (0, 0), sigma)
    params: dict[str, Any] = {"blur_sigma": round(sigma, 3)}
    img = _tone(rng, img, params)
    img = _vignette(rng, img, params)
    img = _grain(rng, img, params, float(rng.uniform(1.0, 4.0)), noise_rng)
    return np.clip(img, 0, 255).astype(np.uint8), params


def _tone(rng: np.random.Generator, img: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """White balance, exposure, gamma and contrast of a consumer camera."""
    # White balance errors run along warm/cool, with a little green/magenta.
    k, m = float(rng.normal(0, 0.5)), float(rng.normal(0, 0.3))
    gains = np.clip(np.array([1 + 0.08 * k, 1 + 0.03 * m, 1 - 0.08 * k]), 0.85, 1.15)
    exposure = float(rng.uniform(0.75, 1.2))
    gamma = float(rng.uniform(0.8, 1.25))
    img = np.clip(img * gains * exposure, 0, 255)
    img = 255.0 * (img / 255.0) ** gamma
    contrast = float(rng.uniform(0.85, 1.15))
    img = (img - 128.0) * contrast + 128.0
    params.update(
        wb_gains=[round(float(g), 3) for g in gains],
        exposure=round(exposure, 3),
        gamma=round(gamma, 3),
        contrast=round(contrast, 3),
    )
    return img


def _vignette(rng: np.random.Generator, img: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Darker corners (on 60 % of cameras)."""
    if rng.random() < 0.6:
        h, w = img.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r2 = ((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2
        strength = float(rng.uniform(0.05, 0.35))
        img = img * (1 - strength * r2 / 2)[..., None]
        params["vignette"] = round(strength, 3)
    return img


def _grain(
    rng: np.random.Generator,
    img: np.ndarray,
    params: dict[str, Any],
    noise: float,
    noise_rng: np.random.Generator | None,
) -> np.ndarray:
    """Sensor noise of strength ``noise``, stronger in the bright parts (shot noise), drawn from ``noise_rng``."""
    h, w = img.shape[:2]
    nr = rng if noise_rng is None else noise_rng
    grain = nr.normal(0, noise, (h, w, 1)) + nr.normal(0, noise * 0.4, (h, w, 3))
    params["noise"] = round(noise, 3)
    out: np.ndarray = img + grain.astype(np.float32) * np.sqrt(np.clip(img, 1, 255) / 128.0)
    return out
