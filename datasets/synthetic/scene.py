"""One labelled scene: build a tray, throw dice, let them rest, photograph and label them.

:func:`generate_scene` is a pure function of ``(seed, index, size)``: every random draw
comes from ``numpy.random.default_rng([seed, index])``, so any scene of a run can be
regenerated alone, and runs can be split or resumed by index.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from farklecam.datasets.synthetic.camera import Camera, Light, look_from, render
from farklecam.datasets.synthetic.labels import label_dice
from farklecam.datasets.synthetic.labels import tray_outline as tray_outline_px
from farklecam.datasets.synthetic.postprocess import TABLE_GREY, degrade, soft_shadows, table_background
from farklecam.datasets.synthetic.textures import DieStyle, die_atlas, sample_die_style, save_rgb, surface_texture
from farklecam.datasets.synthetic.world import (
    Tray,
    World,
    flat_rotation,
    lean_pose,
    quat_from_matrix,
    random_quaternion,
)
from farklecam.datasets.yolo import YoloBox

__all__ = [
    "GENERATOR_VERSION",
    "GENERATOR_VERSIONS",
    "Scene",
    "build_scene",
    "dice_specs",
    "furnish",
    "generate_scene",
    "sample_camera",
    "sample_light",
    "sample_tray",
    "spawn_dice",
]

Rgb = tuple[int, int, int]
_FLOORS: dict[str, tuple[Rgb, ...]] = {
    "felt": ((30, 110, 50), (25, 60, 120), (130, 25, 30), (35, 35, 38), (90, 90, 95), (60, 30, 90)),
    "wood": ((205, 170, 125), (160, 110, 65), (225, 200, 160), (120, 75, 45)),
    "plastic": ((235, 235, 235), (200, 200, 200), (40, 40, 42), (30, 60, 140), (170, 30, 35)),
    "paper": ((240, 240, 238), (225, 225, 222), (215, 212, 205)),
}
_FLOOR_P = {"felt": 0.4, "wood": 0.25, "plastic": 0.2, "paper": 0.15}
#: Chance that a scene gets a die placed leaning on a wall or a die (cocked), or one outside the tray.
P_LEAN, P_OFF_TRAY = 0.12, 0.05
#: The generator's version. Version 2 widened the dice palette
# (:data:`~farklecam.datasets.synthetic.textures.DIE_STYLES_V2`)
#: and turns the helper die a cocked die leans on to a random face (version 1 always showed a 1).
#: Version 1 is kept so the scenes the first models were trained on can be regenerated exactly.
GENERATOR_VERSION = 2
GENERATOR_VERSIONS = (1, 2)


@dataclass(frozen=True, slots=True)
class Scene:
    """A generated photo (BGR ``uint8``), its YOLO boxes and its sidecar dictionary."""

    image: np.ndarray
    boxes: list[YoloBox]
    sidecar: dict[str, Any]


def _material(rng: np.random.Generator) -> tuple[str, Rgb]:
    kinds = list(_FLOOR_P)
    kind = str(rng.choice(kinds, p=[_FLOOR_P[k] for k in kinds]))
    colours = _FLOORS[kind]
    base = colours[int(rng.integers(0, len(colours)))]
    return kind, cast("Rgb", tuple(int(np.clip(c + rng.integers(-15, 16), 0, 255)) for c in base))


def sample_light(rng: np.random.Generator) -> Light:
    """A directional light 25-85 degrees above the horizon, slightly warm or cool."""
    elev, az = np.radians(rng.uniform(25, 85)), rng.uniform(0, 2 * np.pi)
    k = float(rng.uniform(-1, 1))  # colour temperature: -1 cool (bluish) .. +1 warm (tungsten)
    tint = (1.0 - 0.1 * max(0.0, -k), 1.0 - 0.03 * abs(k), 1.0 - 0.12 * max(0.0, k))
    return Light(
        direction=(float(np.cos(elev) * np.cos(az)), float(np.cos(elev) * np.sin(az)), float(np.sin(elev))),
        color=(float(tint[0]), float(tint[1]), float(tint[2])),
        ambient=float(rng.uniform(0.45, 0.75)),
        diffuse=float(rng.uniform(0.25, 0.55)),
        specular=float(rng.uniform(0.0, 0.25)),
        shadow=False,  # drawn by postprocess.soft_shadows: cheaper and visible at die scale
    )


def sample_camera(
    rng: np.random.Generator, points: np.ndarray, die_size: float, width: int, height: int, frame_all: bool
) -> Camera:
    """Aim a camera at the dice so a die spans roughly 24-90 px (more when framing them all).

    Args:
        rng: the scene's random generator.
        points: (n, 3) die centres.
        die_size: mean die edge in cm, to turn a wanted pixel size into a distance.
        width: image width in pixels.
        height: image height in pixels.
        frame_all: keep every die in frame (wider shots); else aim near one die.
    """
    fov = float(rng.uniform(40, 70))
    tilt = float(rng.uniform(0, 6)) if rng.random() < 0.45 else float(rng.uniform(6, 35))
    yaw = float(rng.uniform(0, 360))
    focal = height / 2 / np.tan(np.radians(fov) / 2)
    want_px = float(np.exp(rng.uniform(np.log(24), np.log(90))))
    dist = focal * die_size / want_px
    if frame_all:
        lo, hi = points[:, :2].min(axis=0), points[:, :2].max(axis=0)
        target = np.array([*((lo + hi) / 2 + rng.normal(0, die_size, 2)), points[:, 2].min()])
        reach = float(np.linalg.norm(points[:, :2] - target[:2], axis=1).max()) + die_size * 1.5
        dist = max(dist, reach * focal / (0.47 * min(width, height)) / np.cos(np.radians(tilt)))
    else:
        pick = points[int(rng.integers(0, len(points)))]
        target = pick + np.array([*rng.normal(0, 3 * die_size, 2), 0.0])
    return look_from(target, max(dist, 8.0), tilt, yaw, fov, width, height)


def spawn_dice(
    rng: np.random.Generator,
    world: World,
    tray: Tray,
    dice: list[tuple[float, float, int]],
    lean_rate: float = P_LEAN,
    version: int = GENERATOR_VERSION,
) -> dict[str, Any]:
    """Place and throw the dice; returns what was arranged (for the sidecar).

    Thrown box-shaped dice almost never end up leaning, and rarely leave a tray, yet
    the reader must learn both. So with probability ``lean_rate`` (default
    :data:`P_LEAN`; a cocked-rich training batch raises it) one die starts
    leaning on a wall or on a helper die (see :func:`~farklecam.datasets.synthetic.world.lean_pose`)
    and with :data:`P_OFF_TRAY` one starts just outside the walls; physics then decides
    where everything really rests, and the labels come from the rested poses only.
    From ``version`` 2 on, the helper die shows a random face.
    """
    mode = "drop" if rng.random() < 0.3 else "throw"
    info: dict[str, Any] = {"mode": mode, "lean": None, "off_tray_spawn": False}
    restitution = float(rng.uniform(0.2, 0.5))
    n = len(dice)
    special = list(range(n))
    rng.shuffle(special)
    lean_i = special.pop() if n and rng.random() < lean_rate else None
    off_i = special.pop() if special and rng.random() < P_OFF_TRAY else None
    side = rng.choice([-1.0, 1.0])
    for i, (size, chamfer, tex) in enumerate(dice):
        z_floor = tray.floor_t
        if i == lean_i:
            tilt = float(rng.uniform(30, 43))  # below ~30 the floor friction cannot hold the lean
            if n >= 2 and rng.random() < 0.4:  # lean on a helper die placed flat in the tray
                direction = np.array([*rng.normal(size=2), 0.0])
                direction /= np.linalg.norm(direction)
                pos, rot = lean_pose(rng, size, direction, 0.0, z_floor, tilt)
                helper = np.array([*(direction[:2] * (size / 2 + 0.01)), z_floor + size / 2 + 0.01])
                yaw = float(np.arctan2(direction[1], direction[0]))
                flat = flat_rotation(rng if version >= 2 else None, yaw)
                world.add_die(size, chamfer, tex, helper, quat_from_matrix(flat), restitution)
                info["lean"] = "die"
            else:
                k = int(rng.integers(0, 4))
                direction = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]][k], float)
                reach = tray.width / 2 if k < 2 else tray.depth / 2
                pos, rot = lean_pose(rng, size, direction, reach, z_floor, tilt)
                along = (tray.depth if k < 2 else tray.width) / 2 - size
                pos += np.cross([0, 0, 1.0], direction) * rng.uniform(-along, along)
                info["lean"] = "wall"
            world.add_die(size, chamfer, tex, pos, quat_from_matrix(rot), restitution)
            continue
        if i == off_i:
            k = int(rng.integers(0, 4))
            out = (tray.width if k < 2 else tray.depth) / 2 + tray.wall_t + rng.uniform(0.8, 6.0)
            along = (tray.depth if k < 2 else tray.width) / 2
            d = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]][k], float)
            xy = d * out + np.array([-d[1], d[0]]) * rng.uniform(-along, along)
            pos = np.array([*xy, rng.uniform(2, 6)])
            body = world.add_die(size, chamfer, tex, pos, random_quaternion(rng), restitution)
            world.set_velocity(body, np.array([*(d * rng.uniform(0, 30)), 0.0]), rng.normal(0, 10, 3))
            info["off_tray_spawn"] = True
            continue
        if mode == "throw":
            x0 = side * tray.width * rng.uniform(0.15, 0.4)
            pos = np.array(
                [
                    x0 + rng.uniform(-2, 2),
                    rng.uniform(-0.35, 0.35) * tray.depth,
                    tray.floor_t + tray.wall_h + 2 + 2.5 * i,
                ]
            )
            vel = np.array([-side * rng.uniform(20, 110), rng.normal(0, 25), rng.uniform(-60, 0)])
        else:
            pos = np.array(
                [rng.normal(0, tray.width * 0.12), rng.normal(0, tray.depth * 0.12), tray.floor_t + 3 + 2.6 * i]
            )
            vel = np.array([*rng.normal(0, 12, 2), 0.0])
        body = world.add_die(size, chamfer, tex, pos, random_quaternion(rng), restitution)
        world.set_velocity(body, vel, rng.normal(0, 18, 3))
    return info


def dice_specs(rng: np.random.Generator, version: int = GENERATOR_VERSION) -> tuple[int, list[DieStyle], list[float]]:
    """How many dice, which looks (one set, sometimes a mix), and their sizes in cm."""
    n = int(rng.integers(1, 7)) if rng.random() < 0.85 else int(rng.integers(7, 13))
    n_styles = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    styles = [sample_die_style(rng, version=version) for _ in range(n_styles)]
    sizes = [float(rng.uniform(1.2, 2.2)) for _ in range(n_styles)]
    return n, styles, sizes


def sample_tray(rng: np.random.Generator) -> tuple[Tray, tuple[str, Rgb], tuple[str, Rgb]]:
    """A tray (a quarter of them small, where dice meet the walls more) and its floor and wall materials."""
    small = rng.random() < 0.25
    tw = float(rng.uniform(12, 20) if small else rng.uniform(18, 40))
    tray = Tray(tw, tw * float(rng.uniform(0.55, 1.0)), float(rng.uniform(1.5, 5.0)), float(rng.uniform(0.6, 2.5)))
    floor = _material(rng)
    wall = floor if rng.random() < 0.35 else _material(rng)
    return tray, floor, wall


def furnish(
    rng: np.random.Generator,
    world: World,
    workdir: Path,
    floor: tuple[str, Rgb],
    wall: tuple[str, Rgb],
    dice: tuple[int, list[DieStyle], list[float]],
) -> list[tuple[float, float, int]]:
    """Load the textures, build table and tray, and choose each die's (size, chamfer, texture)."""
    floor_png = save_rgb(workdir / "floor.png", surface_texture(rng, floor[0], floor[1], 512))
    wall_png = save_rgb(workdir / "wall.png", surface_texture(rng, wall[0], wall[1], 256))
    floor_tex, wall_tex = world.load_texture(str(floor_png)), world.load_texture(str(wall_png))
    n, styles, sizes = dice
    die_tex = [
        world.load_texture(str(save_rgb(workdir / f"die{k}.png", die_atlas(rng, s)))) for k, s in enumerate(styles)
    ]
    grey = (TABLE_GREY, TABLE_GREY, TABLE_GREY)
    world.build(grey, floor_tex, wall_tex, float(rng.uniform(0.45, 0.9)), float(rng.uniform(0.1, 0.4)))
    chamfers = [float(rng.uniform(0.06, 0.14)) for _ in styles]
    picks = [int(rng.integers(0, len(styles))) for _ in range(n)]
    return [(sizes[k], chamfers[k], die_tex[k]) for k in picks]


def build_scene(
    rng: np.random.Generator,
    width: int,
    height: int,
    workdir: Path,
    lean_rate: float = P_LEAN,
    version: int = GENERATOR_VERSION,
) -> Scene:
    """Generate one scene from ``rng`` (textures are written to ``workdir`` for pybullet)."""
    tray, (floor_kind, floor_rgb), (wall_kind, wall_rgb) = sample_tray(rng)
    n, styles, sizes = dice_specs(rng, version)
    with World(tray) as world:
        specs = furnish(rng, world, workdir, (floor_kind, floor_rgb), (wall_kind, wall_rgb), (n, styles, sizes))
        spawn = spawn_dice(rng, world, tray, specs, lean_rate, version)
        sim_s = world.settle()
        poses = world.poses()
        touching = [world.touching(pz.body) for pz in poses]
        centres = np.array([pz.position for pz in poses])
        off = [not tray.inside(pz.position) for pz in poses]
        frame_all = any(off) or rng.random() < 0.6
        camera = sample_camera(rng, centres, float(np.mean([pz.size for pz in poses])), width, height, frame_all)
        light = sample_light(rng)
        rgb, seg = render(world.client, camera, light)
        table = world.table
    labels, hidden = label_dice(poses, camera, seg, tray, touching)
    rgb, table_info = table_background(rng, rgb, seg == table, camera)
    rgb, table_info["shadow"] = soft_shadows(rng, rgb, seg, camera, poses, light.direction)
    rgb, post = degrade(rng, rgb)
    post["jpeg_quality"] = int(rng.integers(45, 96))
    sidecar: dict[str, Any] = {
        "tray": tray_outline_px(camera, tray),
        "dice": [d.entry for d in labels],
        "hidden_dice": hidden,
        "size": [width, height],
        "camera": {
            "eye": [round(v, 2) for v in camera.eye],
            "target": [round(v, 2) for v in camera.target],
            "fov_deg": round(camera.fov_deg, 2),
            "intrinsics": [round(v, 3) for v in camera.intrinsics()],
            "table_normal": [round(float(v), 5) for v in camera.to_camera(np.array([[0.0, 0.0, 1.0]]))[0]],
        },
        "light": {
            "direction": [round(v, 3) for v in light.direction],
            "ambient": round(light.ambient, 3),
            "diffuse": round(light.diffuse, 3),
            "specular": round(light.specular, 3),
            "shadow": light.shadow,
        },
        "tray_spec": {
            "width_cm": round(tray.width, 2),
            "depth_cm": round(tray.depth, 2),
            "wall_h_cm": round(tray.wall_h, 2),
            "floor": floor_kind,
            "wall": wall_kind,
        },
        "dice_styles": [f"{s.name}/{s.kind}" for s in styles],
        "spawn": spawn,
        "sim_seconds": round(sim_s, 3),
        "post": {**table_info, **post},
    }
    bgr = np.ascontiguousarray(rgb[..., ::-1])
    return Scene(bgr, [d.box for d in labels], sidecar)


def generate_scene(
    seed: int,
    index: int,
    width: int = 640,
    height: int = 480,
    lean_rate: float = P_LEAN,
    version: int = GENERATOR_VERSION,
) -> Scene:
    """The scene number ``index`` of the run ``seed`` (a pure function of its arguments).

    Raises:
        ValueError: ``version`` is not one of :data:`GENERATOR_VERSIONS`.
    """
    if version not in GENERATOR_VERSIONS:
        raise ValueError(f"generator version must be one of {GENERATOR_VERSIONS}, got {version}")
    rng = np.random.default_rng([seed, index])
    with tempfile.TemporaryDirectory(prefix="farklecam-synth-") as tmp:
        scene = build_scene(rng, width, height, Path(tmp), lean_rate, version)
    scene.sidecar.update(seed=seed, index=index, lean_rate=lean_rate, generator_version=version)
    return scene
