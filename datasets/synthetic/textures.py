"""Procedural textures drawn with OpenCV: die face atlases, tray floors and table tops.

Everything is drawn from a numpy ``Generator`` so a scene's look follows from its
seed, and nothing is read from disk (no image assets to license or download).
Images are RGB ``uint8``; :func:`save_rgb` writes them as the PNG files pybullet's
``loadTexture`` wants.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import cast

import cv2
import numpy as np

__all__ = [
    "ATLAS_CELL",
    "ATLAS_GRID",
    "DIE_STYLES",
    "DIE_STYLES_V2",
    "PIP_LAYOUT",
    "DieStyle",
    "die_atlas",
    "sample_die_style",
    "save_rgb",
    "surface_texture",
]

Rgb = tuple[int, int, int]

#: Side of one face cell of the die atlas, in texture pixels.
ATLAS_CELL = 128
#: The atlas is 4 cells wide and 2 high: faces 1..6 then a plain body-colour cell for the rounded edges.
ATLAS_GRID = (4, 2)

#: Pip centres of each face in cell units (0..1), the standard Western layout.
PIP_LAYOUT: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.5), (0.75, 0.5), (0.25, 0.75), (0.75, 0.75)),
}

#: (name, body RGB, pip RGB, kind). ``kind`` picks the body finish: opaque, translucent or marbled.
#: The palette of generator version 1 (the scenes the shipped models were first trained on).
DIE_STYLES: tuple[tuple[str, Rgb, Rgb, str], ...] = (
    ("ivory", (236, 226, 196), (22, 20, 18), "opaque"),
    ("ivory", (240, 232, 210), (25, 25, 25), "opaque"),
    ("white", (246, 246, 244), (18, 18, 18), "opaque"),
    ("white_red", (244, 244, 240), (190, 25, 30), "opaque"),
    ("red", (200, 28, 32), (245, 245, 245), "opaque"),
    ("red", (215, 45, 45), (250, 250, 250), "translucent"),
    ("blue", (30, 64, 178), (245, 245, 245), "opaque"),
    ("blue", (50, 110, 220), (250, 250, 250), "translucent"),
    ("black", (26, 26, 28), (240, 240, 240), "opaque"),
    ("green", (30, 140, 62), (245, 245, 245), "opaque"),
    ("green", (60, 190, 90), (250, 250, 250), "translucent"),
    ("yellow", (232, 200, 40), (20, 20, 20), "opaque"),
    ("orange", (235, 120, 30), (20, 20, 20), "opaque"),
    ("purple", (110, 50, 150), (245, 245, 245), "opaque"),
    ("pink", (235, 120, 170), (250, 250, 250), "translucent"),
    ("brown", (110, 60, 30), (240, 230, 200), "marbled"),
    ("grey", (130, 130, 135), (15, 15, 15), "marbled"),
    ("teal", (20, 130, 140), (245, 245, 245), "marbled"),
    ("gold", (200, 160, 60), (30, 20, 10), "marbled"),
)

#: Looks added in generator version 2, after the held-out real photos showed where reads fail:
#: two-colour swirls (blue/black, blue/red), coloured pips on coloured bodies (gold on red,
#: red on blue, yellow on green) and clear dice whose far pips show through. Each entry
#: also names the swirl's second colour, which version 1 derived from the body.
EXTRA_STYLES_V2: tuple[tuple[str, Rgb, Rgb, str, Rgb], ...] = (
    ("blue_black", (40, 95, 205), (205, 35, 35), "swirl", (18, 18, 22)),
    ("blue_red", (35, 85, 200), (245, 245, 245), "swirl", (185, 30, 40)),
    ("black_white", (24, 24, 26), (220, 40, 40), "swirl", (215, 215, 210)),
    ("green_yellow", (25, 115, 70), (235, 210, 45), "swirl", (10, 60, 35)),
    ("purple_pink", (100, 40, 150), (240, 200, 60), "swirl", (225, 110, 170)),
    ("red_gold", (190, 30, 35), (222, 182, 72), "opaque", (120, 15, 20)),
    ("blue_red_pips", (30, 70, 190), (210, 30, 30), "opaque", (20, 40, 120)),
    ("green_yellow_pips", (20, 120, 60), (240, 215, 50), "opaque", (10, 70, 35)),
    ("black_gold", (22, 22, 24), (215, 175, 70), "opaque", (60, 60, 60)),
    ("clear_red", (205, 40, 45), (245, 245, 245), "clear", (120, 20, 25)),
    ("clear_blue", (50, 110, 215), (250, 250, 250), "clear", (25, 55, 130)),
    ("clear_white", (225, 228, 232), (25, 25, 25), "clear", (170, 175, 185)),
    ("gold_swirl", (205, 165, 65), (25, 20, 15), "swirl", (110, 70, 20)),
)
#: The palette of generator version 2: version 1's looks, then :data:`EXTRA_STYLES_V2`.
DIE_STYLES_V2: tuple[tuple[str, Rgb, Rgb, str, Rgb | None], ...] = (
    *((name, body, pip, kind, None) for name, body, pip, kind in DIE_STYLES),
    *EXTRA_STYLES_V2,
)


@dataclass(frozen=True, slots=True)
class DieStyle:
    """The look of one set of dice: body and pip colours, finish, pip size and edge darkening."""

    name: str
    body: Rgb
    pip: Rgb
    kind: str
    pip_radius: float
    edge_dark: float
    second: Rgb


def _jitter(rng: np.random.Generator, rgb: Rgb, amount: int) -> Rgb:
    c = np.clip(np.asarray(rgb) + rng.integers(-amount, amount + 1, 3), 0, 255)
    return (int(c[0]), int(c[1]), int(c[2]))


def sample_die_style(rng: np.random.Generator, ivory_bias: float = 0.3, version: int = 2) -> DieStyle:
    """Pick a die look; ivory/white dice are favoured because the webcam photos show them.

    ``version`` picks the palette (:data:`DIE_STYLES` or :data:`DIE_STYLES_V2`); the
    random draws are the same in both, so a version-1 scene is reproduced exactly.
    """
    palette: tuple[tuple[str, Rgb, Rgb, str, Rgb | None], ...] = (
        tuple((*entry, None) for entry in DIE_STYLES) if version == 1 else DIE_STYLES_V2
    )
    i = int(rng.integers(0, 3)) if rng.random() < ivory_bias else int(rng.integers(0, len(palette)))
    name, body, pip, kind, second = palette[i]
    if second is None:  # a marbled die's veins: a lighter, duller shade of its body
        second = cast("Rgb", tuple(int(v) for v in np.clip(np.asarray(body) * 0.6 + 60, 0, 255)))
    return DieStyle(
        name=name,
        body=_jitter(rng, body, 14),
        pip=_jitter(rng, pip, 12),
        kind=kind,
        pip_radius=float(rng.uniform(0.075, 0.105)),
        edge_dark=float(rng.uniform(0.12, 0.35)),
        second=_jitter(rng, second, 30),
    )


def _noise(rng: np.random.Generator, shape: tuple[int, int], scale: float) -> np.ndarray:
    """Smooth value noise in 0..1: random numbers on a coarse grid, resized up with bicubic."""
    h, w = shape
    gh, gw = max(2, int(h / scale)), max(2, int(w / scale))
    small = rng.random((gh, gw)).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(big, 0.0, 1.0)


def _pip_mask(value: int, radius: float) -> np.ndarray:
    """Coverage (0..1, shape (cell, cell, 1)) of a face's pips, drawn at 4x and averaged down."""
    s = ATLAS_CELL
    mask = np.zeros((s * 4, s * 4), np.uint8)
    rad = int(radius * s * 4)
    for u, v in PIP_LAYOUT[value]:
        cv2.circle(mask, (int(u * s * 4), int(v * s * 4)), rad, 255, -1, cv2.LINE_AA)
    return cv2.resize(mask, (s, s), interpolation=cv2.INTER_AREA).astype(np.float32)[..., None] / 255


def _face_cell(rng: np.random.Generator, style: DieStyle, value: int | None) -> np.ndarray:
    """One face (or the plain edge cell when ``value`` is None), float RGB 0..255."""
    s = ATLAS_CELL
    body = np.asarray(style.body, np.float32)
    cell: np.ndarray = np.empty((s, s, 3), np.float32)
    cell[:] = body
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32) / (s - 1)
    if style.kind == "marbled":
        m = _noise(rng, (s, s), 24.0) * 0.6 + _noise(rng, (s, s), 8.0) * 0.4
        m = np.clip((m - 0.45) * 3.0, 0, 1)[..., None]
        cell = cell * (1 - m) + np.asarray(style.second, np.float32) * m
    elif style.kind == "swirl":
        # Two resins poured together: bands of a strong second colour, bent by coarse noise.
        warp = _noise(rng, (s, s), 40.0)
        angle = rng.uniform(0, np.pi)
        u = xx * np.cos(angle) + yy * np.sin(angle)
        band = 0.5 + 0.5 * np.sin((u * rng.uniform(0.5, 1.6) + warp * 1.2) * 2 * np.pi)
        m = np.clip((band - rng.uniform(0.3, 0.7)) * 2.5, 0, 1)[..., None]
        cell = cell * (1 - m) + np.asarray(style.second, np.float32) * m
    elif style.kind in ("translucent", "clear"):
        # A glow in the middle and darker rims reads as light passing through the body.
        r = np.sqrt((xx - 0.5) ** 2 + (yy - 0.5) ** 2)
        cell = cell * (1.15 - 0.45 * r[..., None])
    cell += (_noise(rng, (s, s), 6.0)[..., None] - 0.5) * 10.0
    if value is not None and style.kind == "clear":
        # Through a clear body the pips of the opposite face show, mirrored, soft and faint.
        mirrored = np.ascontiguousarray(_pip_mask(7 - value, style.pip_radius * 1.2)[:, ::-1, 0])
        ghost = cv2.GaussianBlur(mirrored, (0, 0), 3.0)[..., None]
        cell = cell * (1 - 0.35 * ghost) + np.asarray(style.pip, np.float32) * 0.35 * ghost
    if value is not None:
        m = _pip_mask(value, style.pip_radius)
        # Pips are drilled: a darker rim on the inside edge gives them depth.
        rim = np.clip(m * (1 - cv2.erode(m, np.ones((5, 5), np.uint8))[..., None]) * 1.5, 0, 1)
        pip = np.asarray(style.pip, np.float32)
        cell = cell * (1 - m) + pip * m
        cell = cell * (1 - 0.35 * rim)
    # Rounded edges: faces darken (or for dark dice lighten a little) towards their border.
    d = np.minimum(np.minimum(xx, 1 - xx), np.minimum(yy, 1 - yy))
    edge = np.exp(-d / 0.06)[..., None]
    dark_body = body.mean() < 60
    shaded: np.ndarray = cell + edge * 40.0 * style.edge_dark if dark_body else cell * (1 - style.edge_dark * edge)
    return shaded


def die_atlas(rng: np.random.Generator, style: DieStyle) -> np.ndarray:
    """The texture of one die look: faces 1..6 in a 4x2 grid, cell 7 and 8 plain (edges).

    Face ``v`` sits at column ``(v - 1) % 4``, row ``(v - 1) // 4`` (rows counted from the
    image top); :mod:`farklecam.datasets.synthetic.mesh` maps UVs accordingly.
    """
    gw, gh = ATLAS_GRID
    s = ATLAS_CELL
    atlas = np.zeros((gh * s, gw * s, 3), np.float32)
    for k in range(gw * gh):
        value = k + 1 if k < 6 else None
        r, c = divmod(k, gw)
        cell = _face_cell(rng, style, value)
        if value is None:
            cell = cell * (1 - style.edge_dark * 0.8) if np.mean(style.body) >= 60 else cell + 12
        atlas[r * s : (r + 1) * s, c * s : (c + 1) * s] = cell
    texture: np.ndarray = np.clip(atlas, 0, 255).astype(np.uint8)
    return texture


def _wood(rng: np.random.Generator, size: int, base: Rgb) -> np.ndarray:
    """Wood grain: stretched noise bent by low-frequency noise, banded with a sine."""
    # Streaks: noise that changes fast across the grain (x) and slowly along it (y).
    streak = cv2.resize(
        rng.random((max(2, size // 96), size // 2)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC
    )
    warp = _noise(rng, (size, size), size / 3)
    freq = rng.uniform(6, 20)
    xx = np.mgrid[0:size, 0:size][1].astype(np.float32) / size
    bands = 0.5 + 0.5 * np.sin((xx * freq + warp * 1.2) * 2 * np.pi)
    shade = 0.84 + 0.12 * bands**3 * rng.uniform(0.5, 1.0) + (streak - 0.5) * 0.12
    grain: np.ndarray = np.asarray(base, np.float32) * shade[..., None]
    return grain


def surface_texture(rng: np.random.Generator, kind: str, base: Rgb, size: int = 512) -> np.ndarray:
    """A square surface texture of a material: ``felt``, ``wood``, ``plastic``, ``paper`` or ``noise``.

    Returns:
        RGB ``uint8`` image of ``size`` x ``size``.
    """
    b = np.asarray(base, np.float32)
    if kind == "wood":
        img = _wood(rng, size, base)
    elif kind == "felt":
        fine: np.ndarray = rng.normal(0, 1, (size, size)).astype(np.float32)
        fine = cv2.GaussianBlur(fine, (0, 0), 0.8)
        img = b * (1 + 0.07 * fine[..., None] + 0.06 * (_noise(rng, (size, size), 40.0)[..., None] - 0.5))
    elif kind == "plastic":
        grad = np.linspace(1.05, 0.95, size, dtype=np.float32)[:, None, None]
        img = b * grad + rng.normal(0, 1.5, (size, size, 1)).astype(np.float32)
    elif kind == "paper":
        img = b * (1 + 0.03 * (_noise(rng, (size, size), 20.0)[..., None] - 0.5))
        img = img + rng.normal(0, 2.0, (size, size, 1)).astype(np.float32)
    else:  # "noise": blotchy random texture (stone, laminate, patterned cloth)
        a = _noise(rng, (size, size), rng.uniform(4, 60))
        c2 = b * rng.uniform(0.5, 1.3, 3)
        img = b * (1 - a[..., None]) + c2 * a[..., None]
        img += rng.normal(0, 4, (size, size, 1)).astype(np.float32)
    texture: np.ndarray = np.clip(img, 0, 255).astype(np.uint8)
    return texture


def save_rgb(path: Path, rgb: np.ndarray) -> Path:
    """Write an RGB image as PNG (pybullet textures are read from files)."""
    # No compression: these files live for one scene and pybullet decodes them at once.
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 0])
    return path
