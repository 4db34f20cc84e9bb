"""The one module that talks to mitsuba 3: build the scene, path-trace it, cast visibility rays.

Mitsuba runs in its ``scalar_rgb`` variant (plain CPU, no JIT): its ``llvm_ad_rgb``
variant needs an LLVM newer than the 14/15 this machine has (it aborts compiling
``fminimum``). Lighting is one rectangular area light (soft shadows), sometimes a
point light as well (harder ones), and a dim constant sky as fill; a path tracer with
``max_depth`` 3 (direct light plus one bounce) keeps a 640x480 frame to seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.datasets.raytraced.camera import PinholeCamera
from farklecam.datasets.raytraced.dice import RoundedDie, rounded_die_mesh
from farklecam.datasets.raytraced.placement import Tray

__all__ = ["VARIANT", "Lighting", "Surfaces", "render_scene", "visible_fraction"]

VARIANT = "scalar_rgb"
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Lighting:
    """The lights: an area light (centre, half-size, radiance scale), an optional point light, sky fill."""

    area_centre: tuple[float, float, float]
    area_half: float
    area_gain: float
    point: tuple[float, float, float] | None
    point_gain: float
    sky: float


@dataclass(frozen=True, slots=True)
class Surfaces:
    """Linear-RGB textures and gloss of every surface; ``atlases[k]`` is the look of dice with ``look_of == k``."""

    table: F32
    floor: F32
    wall: F32
    wall_rough: float
    atlases: list[F32]
    roughness: list[float]
    look_of: list[int]


def _mi() -> Any:
    """Mitsuba with the variant set (imported late: only generation needs it, never the reader or CI)."""
    import mitsuba as mi

    if mi.variant() != VARIANT:
        mi.set_variant(VARIANT)
    return mi


def _bitmap(mi: Any, image: F32, repeat: float = 1.0) -> dict[str, Any]:
    tex: dict[str, Any] = {"type": "bitmap", "data": mi.TensorXf(np.ascontiguousarray(image)), "raw": True}
    if repeat != 1.0:
        tex["to_uv"] = mi.ScalarTransform4f().scale([repeat, repeat, 1.0])
    return tex


def _box(mi: Any, lo: tuple[float, float, float], hi: tuple[float, float, float], bsdf: Any) -> dict[str, Any]:
    centre = [(a + b) / 2 for a, b in zip(lo, hi, strict=True)]
    half = [(b - a) / 2 for a, b in zip(lo, hi, strict=True)]
    return {"type": "cube", "to_world": mi.ScalarTransform4f().translate(centre).scale(half), "bsdf": bsdf}


def _die_mesh(mi: Any, name: str, die: RoundedDie, bsdf: Any) -> Any:
    mesh = rounded_die_mesh(round(die.rounding, 3))
    props = mi.Properties()
    props["bsdf"] = bsdf
    out = mi.Mesh(name, len(mesh.vertices), len(mesh.faces), props, True, True)
    params = mi.traverse(out)
    params["vertex_positions"] = die.world_vertices().astype(np.float32).ravel()
    params["vertex_normals"] = die.world_normals().astype(np.float32).ravel()
    params["vertex_texcoords"] = mesh.uvs.astype(np.float32).ravel()
    params["faces"] = mesh.faces.ravel()
    params.update()
    return out


def _tray_shapes(mi: Any, tray: Tray, floor: Any, wall: Any) -> dict[str, Any]:
    w, d, t, h, f = tray.width / 2, tray.depth / 2, tray.wall_t, tray.wall_h, tray.floor_t
    top = f + h
    return {
        "tray_base": _box(mi, (-w - t, -d - t, 0.0), (w + t, d + t, f - 0.02), wall),
        "tray_floor": _box(mi, (-w, -d, f - 0.05), (w, d, f), floor),
        "wall_px": _box(mi, (w, -d - t, 0.0), (w + t, d + t, top), wall),
        "wall_nx": _box(mi, (-w - t, -d - t, 0.0), (-w, d + t, top), wall),
        "wall_py": _box(mi, (-w, d, 0.0), (w, d + t, top), wall),
        "wall_ny": _box(mi, (-w, -d - t, 0.0), (w, -d, top), wall),
    }


def _scene_dict(
    mi: Any,
    camera: PinholeCamera,
    tray: Tray,
    dice: list[RoundedDie],
    surfaces: Surfaces,
    lighting: Lighting,
    spp: int,
) -> dict[str, Any]:
    t4 = mi.ScalarTransform4f
    felt = {"type": "diffuse", "reflectance": _bitmap(mi, surfaces.floor, 4.0)}
    wall = {"type": "roughplastic", "alpha": surfaces.wall_rough, "diffuse_reflectance": _bitmap(mi, surfaces.wall)}
    table = {"type": "diffuse", "reflectance": _bitmap(mi, surfaces.table, 6.0)}
    looks = [
        mi.load_dict({"type": "roughplastic", "alpha": rough, "int_ior": 1.49, "diffuse_reflectance": _bitmap(mi, a)})
        for a, rough in zip(surfaces.atlases, surfaces.roughness, strict=True)
    ]
    sx, sy, sz = lighting.area_centre
    dist2 = sx * sx + sy * sy + sz * sz
    radiance = np.pi * dist2 / (2 * lighting.area_half) ** 2 * lighting.area_gain  # ~white paper at gain 1
    scene: dict[str, Any] = {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3, "hide_emitters": True},
        "sensor": {
            "type": "perspective",
            "fov": camera.fov_y_deg,
            "fov_axis": "y",
            "near_clip": 1.0,
            "far_clip": 5000.0,
            "to_world": t4().look_at(origin=list(camera.eye), target=list(camera.target), up=list(camera.up)),
            "film": {"type": "hdrfilm", "width": camera.width, "height": camera.height, "rfilter": {"type": "box"}},
            "sampler": {"type": "stratified", "sample_count": spp},
        },
        "table": {"type": "rectangle", "to_world": t4().scale([300.0, 300.0, 1.0]), "bsdf": table},
        **_tray_shapes(mi, tray, felt, wall),
        "area": {
            "type": "rectangle",
            "to_world": t4().translate([sx, sy, sz]).rotate([1.0, 0.0, 0.0], 180.0).scale(lighting.area_half),
            "emitter": {
                "type": "area",
                "radiance": {"type": "rgb", "value": radiance},
            },
        },
        "sky": {"type": "constant", "radiance": {"type": "rgb", "value": lighting.sky}},
    }
    if lighting.point is not None:
        px, py, pz = lighting.point
        power = np.pi * (px * px + py * py + pz * pz) * lighting.point_gain
        scene["point"] = {"type": "point", "position": [px, py, pz], "intensity": {"type": "rgb", "value": power}}
    for k, die in enumerate(dice):
        scene[f"die{k}"] = _die_mesh(mi, f"die{k}", die, looks[surfaces.look_of[k]])
    return scene


def render_scene(
    camera: PinholeCamera,
    tray: Tray,
    dice: list[RoundedDie],
    surfaces: Surfaces,
    lighting: Lighting,
    spp: int,
) -> tuple[F32, list[float], float]:
    """Path-trace the scene.

    Returns:
        ``(rgb, visible, seconds)``: linear RGB float (h, w, 3), each die's visible
        fraction (:func:`visible_fraction`) and the seconds the render took.
    """
    mi = _mi()
    start = time.perf_counter()
    scene = mi.load_dict(_scene_dict(mi, camera, tray, dice, surfaces, lighting, spp))
    rgb = np.asarray(mi.render(scene), np.float32)[..., :3]
    seconds = time.perf_counter() - start
    return rgb, [visible_fraction(mi, scene, camera, die) for die in dice], seconds


def visible_fraction(mi: Any, scene: Any, camera: PinholeCamera, die: RoundedDie, step: int = 5) -> float:
    """The share of the die's camera-facing surface points (every ``step``-th vertex) that are seen.

    A point is seen when it projects into the picture and a ray from the eye reaches it
    before anything else (a wall, another die) does.
    """
    eye = np.asarray(camera.eye)
    points, normals = die.world_vertices()[::step], die.world_normals()[::step]
    facing = np.einsum("ij,ij->i", normals, eye - points) > 0
    points = points[facing]
    if not len(points):
        return 0.0
    px, front = camera.project(points)
    inside = front & (px[:, 0] >= 0) & (px[:, 0] < camera.width) & (px[:, 1] >= 0) & (px[:, 1] < camera.height)
    seen = 0
    for point in points[inside]:
        offset = point - eye
        dist = float(np.linalg.norm(offset))
        hit = scene.ray_intersect(mi.Ray3f(mi.Point3f(*eye), mi.Vector3f(*(offset / dist))))
        seen += int(not hit.is_valid() or float(hit.t) > dist - 0.03)
    return seen / len(points)
