"""One Blender scene: build a tray, drop the dice, render with Cycles, label the final poses.

:func:`generate_scene` is a pure function of ``(seed, index, size, samples)``: every
draw comes from ``numpy.random.default_rng([seed, index, 3])`` in a fixed order (Cycles'
own seed is fixed), so a run can be resumed or split by index. Units are cm; the table is
``z = 0`` and the tray's inner floor top ``z = floor_t``, centred on the origin (the frame
of :mod:`farklecam.datasets.raytraced`).
"""

from __future__ import annotations

import time
from typing import Any

import bpy
import numpy as np

from farklecam.datasets.blender import materials
from farklecam.datasets.blender.drops import FRAMING, plan_drops
from farklecam.datasets.blender.labels import DiePose, label_dice
from farklecam.datasets.blender.meshes import box_object, die_mesh, die_object, reset_scene
from farklecam.datasets.blender.physics import FPS, FRAMES, simulate
from farklecam.datasets.blender.render import add_camera, add_lights, develop, render, visible_share
from farklecam.datasets.raytraced.framing import frame_tray
from farklecam.datasets.raytraced.labels import scene_fields
from farklecam.datasets.raytraced.placement import Tray
from farklecam.datasets.scene_run import GeneratedScene

__all__ = ["GENERATOR_VERSION", "generate_scene"]

#: Version of the Blender generator's draws (bump when a change alters the scenes a seed gives).
GENERATOR_VERSION = 1
_STYLES = ["plastic", "plastic", "plastic", "marbled", "translucent"]


def _tray_objects(rng: np.random.Generator, tray: Tray) -> tuple[Any, list[Any], dict[str, str]]:
    """The table, the tray's floor and four walls (with their materials); the table, the tray's parts, their kinds."""
    floor_kind = ["felt", "felt", "leather", "wood"][int(rng.integers(4))]
    floor_mat = {"felt": materials.felt, "leather": materials.leather, "wood": materials.wood}[floor_kind](rng)
    wall_kind = ["wood", "leather", "same"][int(rng.integers(3))]
    wall_mat = floor_mat if wall_kind == "same" else (materials.wood if wall_kind == "wood" else materials.leather)(rng)
    table_mat, table_kind = materials.table(rng)
    table = box_object("table", (0, 0, -0.5), (400, 400, 1.0), table_mat)
    w, d, t = tray.width, tray.depth, tray.wall_t
    parts = [box_object("floor", (0, 0, tray.floor_t / 2), (w + 2 * t, d + 2 * t, tray.floor_t), floor_mat)]
    wz = tray.floor_t + tray.wall_h / 2
    for sx in (-1, 1):
        parts.append(box_object(f"wall_x{sx}", (sx * (w / 2 + t / 2), 0, wz), (t, d + 2 * t, tray.wall_h), wall_mat))
    for sy in (-1, 1):
        parts.append(box_object(f"wall_y{sy}", (0, sy * (d / 2 + t / 2), wz), (w, t, tray.wall_h), wall_mat))
    return table, parts, {"floor": floor_kind, "wall": wall_kind, "table": table_kind}


def generate_scene(
    seed: int, index: int, width: int = 640, height: int = 480, samples: int = 16, threads: int = 1
) -> GeneratedScene:
    """The scene number ``index`` of the run ``seed`` (a pure function of its arguments).

    2-8 dice of one set (30%: two sets of different colour and size), 16-27 px on an edge
    at 640x480 (scaled with the picture's height), the camera 0-15 degrees off straight
    down, the tray sized to fit the frame. ``samples``: Cycles samples per pixel
    (denoised); ``threads``: Cycles render threads.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng([seed, index, 3])
    reset_scene()
    n = int(rng.integers(2, 9))
    n_sets = 1 if rng.random() < 0.7 else 2
    set_size = [float(rng.uniform(1.4, 1.9)) for _ in range(n_sets)]
    set_of = [int(rng.integers(n_sets)) for _ in range(n)]
    sizes = [set_size[k] for k in set_of]
    tray, camera, tilt = frame_tray(rng, sizes, width, height, FRAMING)
    table, tray_parts, surface_kinds = _tray_objects(rng, tray)

    styles, meshes, shapes = [], [], []
    for k in range(n_sets):
        colour = list(materials.DIE_COLOURS)[int(rng.integers(len(materials.DIE_COLOURS)))]
        style = _STYLES[int(rng.integers(len(_STYLES)))]
        body = materials.die_material(rng, colour, style)
        pip = materials.pip_material(rng, colour in materials.LIGHT_DICE)
        mesh, verts = die_mesh(rng, set_size[k], float(rng.uniform(0.06, 0.16)), body, pip)
        meshes.append(mesh)
        shapes.append(verts)
        styles.append(f"{colour}/{style}")
    drops = plan_drops(rng, tray, sizes, [shapes[k] for k in set_of], camera)
    objects = [die_object(f"die{i}", meshes[set_of[d.index]], d.rotation, d.position) for i, d in enumerate(drops)]
    t_sim = time.perf_counter()
    simulate(objects, [d.kind for d in drops], [table, *tray_parts], rng)
    sim_s = time.perf_counter() - t_sim
    add_camera(camera)
    light = add_lights(rng)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    depsgraph.update()
    poses = []
    for obj, d in zip(objects, drops, strict=True):
        m = np.array(obj.matrix_world)
        poses.append(DiePose(m[:3, :3], m[:3, 3], shapes[set_of[d.index]], sizes[d.index], d.kind))
    labels, hidden = label_dice(
        poses, camera, tray, lambda k, box, stride: visible_share(objects[k], camera, box, stride, depsgraph)
    )
    linear, render_s = render(width, height, samples, threads)
    image, gain = develop(rng, linear)
    quality = int(rng.integers(75, 96))
    sidecar: dict[str, Any] = {
        **scene_fields(camera, tray, tilt, labels, hidden, surface_kinds),
        "light": {**light, "exposure_gain": round(gain, 3)},
        "post": {"jpeg_quality": quality},
        "dice_styles": styles,
        "physics": {"engine": "blender rigid body (bullet)", "fps": FPS, "frames": FRAMES, "seconds": round(sim_s, 2)},
        "renderer": {
            "name": "blender-cycles",
            "version": bpy.app.version_string,
            "samples": samples,
            "denoiser": "oidn",
        },
        "render_seconds": round(render_s, 2),
        "scene_seconds": round(time.perf_counter() - t0, 2),
        "generator": "blender",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "index": index,
    }
    return GeneratedScene(image, [d.box for d in labels], sidecar)
