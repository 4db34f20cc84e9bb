"""The one module that renders and casts rays: Blender's camera, the lights, Cycles, developing, visibility.

Cycles runs on the CPU (adaptive sampling, OpenImageDenoise, few bounces, no caustics)
into a linear 32-bit EXR, which :func:`develop` turns into a photo: auto exposure (median
brightness to 0.18-0.3), a Reinhard-style shoulder, sRGB and a little sensor noise.
The camera is the project's :class:`~farklecam.datasets.raytraced.camera.PinholeCamera` (same
intrinsics as the labels). Lights: a sun, a rectangular area light and a coloured world.
"""

from __future__ import annotations

import colorsys
import math
import os
import tempfile
import time
from typing import Any

import bpy  # first: it puts mathutils on the path

# isort: split
import numpy as np
import numpy.typing as npt
from mathutils import Matrix, Vector

from farklecam.datasets.raytraced.camera import PinholeCamera

os.environ.setdefault("OPENCV_IO_ENABLE_OPENEXR", "1")  # before cv2 first reads an EXR
import cv2

__all__ = ["add_camera", "add_lights", "develop", "render", "visible_share"]

F32 = npt.NDArray[np.float32]


def add_camera(camera: PinholeCamera) -> Any:
    """Blender's camera for ``camera``: the same eye, axes and vertical field of view."""
    data = bpy.data.cameras.new("cam")
    data.sensor_fit = "VERTICAL"
    data.sensor_height = 24.0
    data.lens = camera.focal_px * 24.0 / camera.height
    data.clip_start, data.clip_end = 1.0, 5000.0
    obj = bpy.data.objects.new("cam", data)
    bpy.context.scene.collection.objects.link(obj)
    right, down, forward = camera.axes()
    rot = np.stack([right, -down, -forward], axis=1)  # Blender's camera looks down its -z, y up
    m = Matrix.Identity(4)
    for i in range(3):
        for j in range(3):
            m[i][j] = rot[i, j]
        m[i][3] = camera.eye[i]
    obj.matrix_world = m
    bpy.context.scene.camera = obj
    return obj


def add_lights(rng: np.random.Generator) -> dict[str, Any]:
    """A coloured world, a sun (1.5-5 W/m^2, warm tints) and a tinted area light; returns the sidecar's ``light``."""
    scene = bpy.context.scene
    world = bpy.data.worlds.new("world")
    scene.world = world
    world.use_nodes = True
    bg = world.node_tree.nodes["Background"]
    hue, sat = rng.uniform(0, 1), rng.uniform(0.05, 0.35)
    sky = colorsys.hsv_to_rgb(hue, sat, 1.0)
    sky_strength = float(rng.uniform(0.1, 0.45))
    bg.inputs["Color"].default_value = (*sky, 1)
    bg.inputs["Strength"].default_value = sky_strength
    el, az = math.radians(rng.uniform(35, 80)), rng.uniform(0, 2 * math.pi)
    sun = bpy.data.lights.new("sun", "SUN")
    sun.energy = float(rng.uniform(1.5, 5.0))
    sun.angle = math.radians(rng.uniform(1, 20))
    sun.color = colorsys.hsv_to_rgb(rng.uniform(0.05, 0.15), rng.uniform(0, 0.25), 1.0)
    sun_obj = bpy.data.objects.new("sun", sun)
    scene.collection.objects.link(sun_obj)
    direction = Vector((math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)))
    sun_obj.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    el2, az2 = math.radians(rng.uniform(40, 85)), rng.uniform(0, 2 * math.pi)
    dist = float(rng.uniform(40, 110))
    pos = dist * Vector((math.cos(el2) * math.cos(az2), math.cos(el2) * math.sin(az2), math.sin(el2)))
    area = bpy.data.lights.new("area", "AREA")
    area.shape = "RECTANGLE"
    area.size, area.size_y = float(rng.uniform(10, 60)), float(rng.uniform(10, 60))
    area.energy = float(rng.uniform(0.3, 1.2)) * dist * dist * 30.0  # cm units: irradiance comparable to the sun's
    area.color = colorsys.hsv_to_rgb(rng.uniform(0, 1), rng.uniform(0, 0.2), 1.0)
    area_obj = bpy.data.objects.new("area", area)
    scene.collection.objects.link(area_obj)
    area_obj.location = pos
    area_obj.rotation_euler = (-pos).to_track_quat("-Z", "Y").to_euler()
    return {
        "sun_dir": [round(v, 3) for v in direction],
        "sun_strength": round(sun.energy, 2),
        "area_pos": [round(v, 1) for v in pos],
        "area_size": [round(area.size, 1), round(area.size_y, 1)],
        "world_rgb": [round(v, 3) for v in sky],
        "world_strength": round(sky_strength, 3),
    }


def render(width: int, height: int, samples: int, threads: int) -> tuple[F32, float]:
    """Render the scene with Cycles; the linear BGR picture (float32) and the seconds it took.

    The EXR goes through a temporary file in ``$TMPDIR`` (removed after reading).
    """
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    cycles = scene.cycles
    cycles.device = "CPU"
    cycles.samples = samples
    cycles.use_adaptive_sampling = True
    cycles.use_denoising = True
    cycles.denoiser = "OPENIMAGEDENOISE"
    cycles.max_bounces, cycles.diffuse_bounces, cycles.glossy_bounces = 6, 2, 2
    cycles.transmission_bounces, cycles.transparent_max_bounces = 6, 2
    cycles.caustics_reflective = cycles.caustics_refractive = False
    scene.render.threads_mode, scene.render.threads = "FIXED", threads
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = width, height, 100
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.image_settings.color_mode = "RGB"
    fd, path = tempfile.mkstemp(suffix=".exr")
    os.close(fd)
    try:
        scene.render.filepath = path
        start = time.perf_counter()
        bpy.ops.render.render(write_still=True)
        seconds = time.perf_counter() - start
        linear = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    finally:
        os.unlink(path)
    if linear is None:
        raise RuntimeError(f"Cycles wrote no readable EXR at {path}")
    return linear[..., :3].astype(np.float32), seconds


def develop(rng: np.random.Generator, linear: F32) -> tuple[npt.NDArray[np.uint8], float]:
    """Auto-expose, tone-map with a shoulder, sRGB-encode and add sensor noise; BGR ``uint8`` and the gain."""
    lum = linear @ np.array([0.0722, 0.7152, 0.2126], np.float32)  # BGR weights
    gain = float(np.clip(rng.uniform(0.18, 0.3) / max(float(np.median(lum)), 1e-4), 0.05, 50))
    x = linear * gain
    white = float(rng.uniform(2.0, 4.0))
    x = x * (1 + x / white**2) / (1 + x)
    x = np.clip(x, 0, 1)
    srgb = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    noisy = srgb * 255 + rng.normal(0, rng.uniform(0.5, 3.0), srgb.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8), gain


def visible_share(
    obj: Any, camera: PinholeCamera, box: tuple[float, float, float, float], stride: float, depsgraph: Any
) -> float:
    """Share of a die's silhouette the camera sees.

    Rays every ``stride`` pixels over the die's unclipped ``box``: those that hit the die
    alone make its silhouette; of those inside the frame, the ones whose first hit in the
    whole scene is the die count as seen.
    """
    scene = bpy.context.scene
    axes = camera.axes()
    eye = Vector(camera.eye)
    fx, _, cx, cy = camera.intrinsics()
    inv = obj.matrix_world.inverted()
    evaluated = obj.evaluated_get(depsgraph)
    x1, y1, x2, y2 = box
    own = seen = 0
    for v in np.arange(y1 + stride / 2, y2, stride):
        for u in np.arange(x1 + stride / 2, x2, stride):
            d = axes.T @ np.array([(u - cx) / fx, (v - cy) / fx, 1.0])
            ray = Vector(d / np.linalg.norm(d))
            if not evaluated.ray_cast(inv @ eye, (inv.to_3x3() @ ray).normalized())[0]:
                continue
            own += 1
            if 0 <= u < camera.width and 0 <= v < camera.height:
                hit = scene.ray_cast(depsgraph, eye, ray)
                if hit[0] and hit[4] is not None and hit[4].name == obj.name:
                    seen += 1
    return seen / own if own else 0.0
