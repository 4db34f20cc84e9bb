"""One raytraced scene: draw a tray, place dice by geometry, path-trace it, label it.

:func:`generate_scene` is a pure function of ``(seed, index, size, spp)`` (every draw
comes from ``numpy.random.default_rng([seed, index])``; mitsuba's sampler keeps its fixed
default seed), so a run can be resumed or split by index.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.datasets.raytraced.camera import PinholeCamera
from farklecam.datasets.raytraced.dice import RoundedDie
from farklecam.datasets.raytraced.framing import FramingRanges, frame_tray
from farklecam.datasets.raytraced.labels import label_dice, scene_fields
from farklecam.datasets.raytraced.looks import (
    FELT_COLOURS,
    WOOD_COLOURS,
    DieLook,
    die_atlas,
    felt_texture,
    sample_die_look,
    wood_texture,
)
from farklecam.datasets.raytraced.placement import (
    OVERLAP_TOL_CM,
    Placed,
    Tray,
    flat_die,
    lean_on_die,
    lean_on_wall,
    lean_tilt,
    off_tray_die,
    overlaps,
)
from farklecam.datasets.raytraced.render import Lighting, Surfaces, render_scene
from farklecam.datasets.scene_run import GeneratedScene

__all__ = ["GENERATOR_VERSION", "generate_scene", "place_dice"]

#: Version of the raytraced generator's draws (bump when a change alters the scenes a seed gives).
GENERATOR_VERSION = 1
F64 = npt.NDArray[np.float64]
_ATTEMPTS = 40
#: Dice 14.5-26 px on an edge, trays 14-36 cm wide with walls 2-4.5 cm high.
FRAMING = FramingRanges(
    edge_px=(14.5, 26),
    fov_deg=(40, 62),
    aligned=0.8,
    yaw_jitter_deg=12,
    room_aligned=0.86,
    wall_t=(0.6, 2.0),
    tray_width=(14, 36),
    wall_h=(2.0, 4.5),
    floor_t=(0.3, 0.7),
)


def _in_frame(camera: PinholeCamera, die: RoundedDie, margin: float = 2.0) -> bool:
    px, front = camera.project(die.world_vertices())
    return bool(
        front.all()
        and px[:, 0].min() >= margin
        and px[:, 1].min() >= margin
        and px[:, 0].max() <= camera.width - margin
        and px[:, 1].max() <= camera.height - margin
    )


def _fits(die: RoundedDie, tray: Tray, placed: list[Placed]) -> bool:
    inside = tray.inside(die.position)
    if inside and tray.wall_gap(die) < -OVERLAP_TOL_CM:
        return False
    return not overlaps(die, [p.die for p in placed])


def place_dice(
    rng: np.random.Generator, tray: Tray, sizes: list[float], roundings: list[float], camera: PinholeCamera
) -> list[Placed]:
    """Place ``len(sizes)`` dice: some leaning on a wall or a die, a few off the tray, the rest flat.

    A die that cannot be placed without overlap in :data:`_ATTEMPTS` draws is dropped.
    """
    n = len(sizes)
    order = list(range(n))
    n_lean = min(n - 1, int(rng.choice([0, 1, 1, 1, 2, 2])))
    n_off = min(n - 1 - n_lean, int(rng.choice([0, 0, 0, 0, 1, 1, 2])))
    kinds = ["lean"] * n_lean + ["off"] * n_off + ["flat"] * (n - n_lean - n_off)
    placed: list[Placed] = []
    floor = tray.floor_t
    for k, kind in zip(order, kinds, strict=True):
        size, rounding = sizes[k], roundings[k]
        for _ in range(_ATTEMPTS):
            if kind == "flat":
                half = np.maximum(np.array([tray.width, tray.depth]) / 2 - 0.75 * size, 0.0)
                cand = [Placed(flat_die(rng, size, rounding, rng.uniform(-half, half), floor), "flat")]
            elif kind == "off":
                reach = (tray.width / 2 + tray.wall_t + 5 * size, tray.depth / 2 + tray.wall_t + 5 * size)
                die = off_tray_die(rng, size, rounding, tray, reach)
                cand = [Placed(die, "off")] if _in_frame(camera, die) else []
            elif rng.random() < 0.5:
                cand = [Placed(lean_on_wall(rng, size, rounding, tray, lean_tilt(rng)), "wall")]
            else:
                half = np.maximum(np.array([tray.width, tray.depth]) / 2 - 2.5 * size, 0.0)
                helper = flat_die(rng, size, rounding, rng.uniform(-half, half), floor)
                leaning = lean_on_die(rng, helper, size, rounding, floor, lean_tilt(rng))
                cand = [Placed(helper, "flat"), Placed(leaning, "die")]
            if not cand:
                continue
            trial = list(placed)
            ok = True
            for c in cand:
                if not _fits(c.die, tray, trial) or (c.kind != "off" and not tray.inside(c.die.position)):
                    ok = False
                    break
                trial.append(c)
            if ok:
                placed = trial
                break
    return placed


def _surfaces(rng: np.random.Generator, looks: list[DieLook], look_of: list[int]) -> tuple[Surfaces, dict[str, Any]]:
    felt_rgb = FELT_COLOURS[int(rng.integers(0, len(FELT_COLOURS)))]
    wall_kind = "wood" if rng.random() < 0.5 else "felt"
    if wall_kind == "wood":
        wall = wood_texture(rng, WOOD_COLOURS[int(rng.integers(0, len(WOOD_COLOURS)))])
    else:
        wall = felt_texture(rng, felt_rgb if rng.random() < 0.6 else FELT_COLOURS[int(rng.integers(0, 8))])
    table_kind = "wood" if rng.random() < 0.5 else "cloth"
    if table_kind == "wood":
        table = wood_texture(rng, WOOD_COLOURS[int(rng.integers(0, len(WOOD_COLOURS)))], 512)
    else:
        grey = float(rng.uniform(0.25, 0.85))
        table = felt_texture(rng, (grey, grey * rng.uniform(0.92, 1.0), grey * rng.uniform(0.85, 1.0)), 256)
    surfaces = Surfaces(
        table=table,
        floor=felt_texture(rng, felt_rgb),
        wall=wall,
        wall_rough=float(rng.uniform(0.2, 0.6)),
        atlases=[die_atlas(rng, look) for look in looks],
        roughness=[look.roughness for look in looks],
        look_of=look_of,
    )
    info = {"floor": [round(c, 3) for c in felt_rgb], "wall": wall_kind, "table": table_kind}
    return surfaces, info


def _lighting(rng: np.random.Generator) -> Lighting:
    elev, az = np.radians(rng.uniform(35, 85)), rng.uniform(0, 2 * np.pi)
    dist = float(rng.uniform(50, 150))
    centre = dist * np.array([np.cos(elev) * np.cos(az), np.cos(elev) * np.sin(az), np.sin(elev)])
    point = None
    if rng.random() < 0.3:
        e2, a2 = np.radians(rng.uniform(40, 80)), rng.uniform(0, 2 * np.pi)
        d2 = float(rng.uniform(40, 100))
        p = d2 * np.array([np.cos(e2) * np.cos(a2), np.cos(e2) * np.sin(a2), np.sin(e2)])
        point = (float(p[0]), float(p[1]), float(p[2]))
    return Lighting(
        area_centre=(float(centre[0]), float(centre[1]), float(centre[2])),
        area_half=float(rng.uniform(4, 25)),
        area_gain=float(rng.uniform(0.5, 0.9)) if point else float(rng.uniform(0.7, 1.1)),
        point=point,
        point_gain=float(rng.uniform(0.3, 0.5)),
        sky=float(rng.uniform(0.08, 0.3)),
    )


def _develop(rng: np.random.Generator, linear: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.uint8], float]:
    """Expose (the 99.5th brightness percentile to 0.8-0.95), sRGB-encode, add a little sensor noise; BGR."""
    luminance = linear @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    gain = float(np.clip(rng.uniform(0.8, 0.95) / max(float(np.percentile(luminance, 99.5)), 1e-6), 0.4, 3.0))
    x = np.clip(linear * gain, 0.0, 1.0)
    srgb = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    noisy = srgb * 255.0 + rng.normal(0.0, rng.uniform(0.0, 2.5), srgb.shape)
    bgr = np.clip(np.rint(noisy), 0, 255).astype(np.uint8)[..., ::-1]
    return np.ascontiguousarray(bgr), gain


def generate_scene(seed: int, index: int, width: int = 640, height: int = 480, spp: int = 64) -> GeneratedScene:
    """The scene number ``index`` of the run ``seed`` (a pure function of its arguments).

    Dice span about 19-38 px across at 640x480 (scaled with the picture's height), the
    camera is 0-15 degrees off straight down, and the tray is sized to fit the frame.
    ``spp`` is rounded up to a square (mitsuba's stratified sampler needs one).
    """
    spp = int(np.ceil(np.sqrt(spp))) ** 2  # the stratified sampler takes square counts; say what was rendered
    rng = np.random.default_rng([seed, index])
    n_looks = 1 if rng.random() < 0.75 else 2
    looks = [sample_die_look(rng) for _ in range(n_looks)]
    set_size = [float(rng.uniform(1.4, 1.9)) for _ in looks]
    n = int(rng.integers(2, 9))
    look_of = [int(rng.integers(0, n_looks)) for _ in range(n)]
    sizes = [set_size[k] for k in look_of]
    roundings = [float(rng.uniform(0.07, 0.16)) for _ in range(n)]
    tray, camera, tilt = frame_tray(rng, sizes, width, height, FRAMING)
    placed = place_dice(rng, tray, sizes, roundings, camera)
    surfaces, surface_info = _surfaces(rng, looks, [look_of[sizes.index(p.die.size)] for p in placed])
    lighting = _lighting(rng)
    linear, visible, seconds = render_scene(camera, tray, [p.die for p in placed], surfaces, lighting, spp)
    image, gain = _develop(rng, linear)
    labels, hidden = label_dice(placed, visible, camera, tray)
    quality = int(rng.integers(75, 96))
    sidecar: dict[str, Any] = {
        **scene_fields(camera, tray, tilt, labels, hidden, surface_info),
        "light": {
            "area_centre": [round(v, 2) for v in lighting.area_centre],
            "area_half_cm": round(lighting.area_half, 2),
            "point": None if lighting.point is None else [round(v, 2) for v in lighting.point],
            "sky": round(lighting.sky, 3),
            "exposure_gain": round(gain, 3),
        },
        "post": {"jpeg_quality": quality},
        "dice_styles": [f"{look.name}{'/marbled' if look.marbled else ''}" for look in looks],
        "renderer": {"name": "mitsuba3", "variant": "scalar_rgb", "spp": spp, "max_depth": 3},
        "render_seconds": round(seconds, 2),
        "generator": "raytraced",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "index": index,
    }
    return GeneratedScene(image, [d.box for d in labels], sidecar)
