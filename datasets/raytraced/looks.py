"""What the raytraced scenes look like: dice colours, pip atlases, felt, wood and table textures.

Everything is drawn here in numpy as linear-RGB float images (the renderer wants linear
reflectance); nothing is shared with the pybullet generator's textures. Pips are drawn
as a shaded dimple (darker rim, lighter floor) so they read as indents under any light.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "DIE_COLOURS",
    "FELT_COLOURS",
    "PIP_LAYOUT",
    "DieLook",
    "die_atlas",
    "felt_texture",
    "sample_die_look",
    "srgb_to_linear",
    "wood_texture",
]

F32 = npt.NDArray[np.float32]
Rgb = tuple[float, float, float]

#: Die body and pip colours (sRGB 0..1) by name.
DIE_COLOURS: dict[str, tuple[Rgb, Rgb]] = {
    "white": ((0.93, 0.93, 0.91), (0.05, 0.05, 0.06)),
    "ivory": ((0.92, 0.86, 0.72), (0.08, 0.06, 0.05)),
    "red": ((0.75, 0.07, 0.08), (0.95, 0.95, 0.95)),
    "black": ((0.06, 0.06, 0.07), (0.95, 0.95, 0.95)),
    "blue": ((0.08, 0.22, 0.65), (0.95, 0.95, 0.95)),
    "green": ((0.07, 0.48, 0.22), (0.95, 0.95, 0.95)),
}
#: Felt floor colours (sRGB), dark ones included.
FELT_COLOURS: tuple[Rgb, ...] = (
    (0.10, 0.42, 0.20),
    (0.06, 0.20, 0.12),
    (0.10, 0.18, 0.45),
    (0.05, 0.07, 0.18),
    (0.50, 0.08, 0.10),
    (0.22, 0.04, 0.06),
    (0.12, 0.12, 0.13),
    (0.30, 0.15, 0.40),
)
#: Wood colours (sRGB) for walls and tables.
WOOD_COLOURS: tuple[Rgb, ...] = ((0.55, 0.35, 0.18), (0.72, 0.52, 0.30), (0.35, 0.20, 0.10), (0.80, 0.66, 0.46))

#: Pip centres of each face value in a face's 0..1 square.
PIP_LAYOUT: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.27, 0.27), (0.73, 0.73)),
    3: ((0.27, 0.27), (0.5, 0.5), (0.73, 0.73)),
    4: ((0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)),
    5: ((0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)),
    6: ((0.27, 0.25), (0.27, 0.5), (0.27, 0.75), (0.73, 0.25), (0.73, 0.5), (0.73, 0.75)),
}


@dataclass(frozen=True, slots=True)
class DieLook:
    """One set of dice: colour name, body and pip sRGB, pip radius (face fraction), marbling, gloss."""

    name: str
    body: Rgb
    pip: Rgb
    pip_radius: float
    marbled: bool
    roughness: float
    red_one: bool


def srgb_to_linear(rgb: npt.ArrayLike) -> F32:
    """Linear reflectance of sRGB 0..1 colours (the renderer works in linear light)."""
    c = np.asarray(rgb, np.float32)
    out: F32 = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)
    return out


def sample_die_look(rng: np.random.Generator) -> DieLook:
    """A random dice set: one of :data:`DIE_COLOURS`, its tint jittered, sometimes marbled."""
    name = str(rng.choice(list(DIE_COLOURS)))
    body, pip = DIE_COLOURS[name]
    jitter = rng.uniform(-0.04, 0.04, 3)
    body = (
        float(np.clip(body[0] + jitter[0], 0, 1)),
        float(np.clip(body[1] + jitter[1], 0, 1)),
        float(np.clip(body[2] + jitter[2], 0, 1)),
    )
    return DieLook(
        name=name,
        body=body,
        pip=pip,
        pip_radius=float(rng.uniform(0.085, 0.115)),
        marbled=name in ("red", "blue", "green") and rng.random() < 0.3,
        roughness=float(rng.uniform(0.08, 0.35)),
        red_one=name in ("white", "ivory") and rng.random() < 0.3,
    )


def _noise(rng: np.random.Generator, size: tuple[int, int], scale: float) -> F32:
    """Smooth value noise in 0..1 that tiles (white noise low-passed in the Fourier domain, normalised).

    Tiling matters: floors and tables repeat their texture, and a seam would draw a line
    across the picture that no real table has.
    """
    spectrum = np.fft.fft2(rng.random(size))
    fy = np.fft.fftfreq(size[0])[:, None]
    fx = np.fft.fftfreq(size[1])[None, :]
    smooth = np.real(np.fft.ifft2(spectrum * np.exp(-2 * (np.pi * scale) ** 2 * (fx**2 + fy**2))))
    lo, hi = float(smooth.min()), float(smooth.max())
    out: F32 = ((smooth - lo) / max(hi - lo, 1e-9)).astype(np.float32)
    return out


def die_atlas(rng: np.random.Generator, look: DieLook, cell: int = 96) -> F32:
    """The six faces side by side (``cell`` x ``6*cell``), linear RGB, pips as shaded dimples."""
    h, w = cell, 6 * cell
    body = srgb_to_linear(look.body)
    img = np.broadcast_to(body, (h, w, 3)).copy()
    if look.marbled:
        swirl = _noise(rng, (h, w), cell / 6)
        veins = (1.0 - np.abs(np.sin(swirl * 14.0)))[..., None] ** 8
        img = img * (1 - 0.35 * veins) + srgb_to_linear((0.85, 0.85, 0.85)) * 0.35 * veins
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32) + 0.5
    radius = look.pip_radius * cell
    for value, pips in PIP_LAYOUT.items():
        colour = srgb_to_linear((0.75, 0.05, 0.05) if value == 1 and look.red_one else look.pip)
        for u, v in pips:
            cx, cy = (value - 1 + u) * cell, v * cell
            r = radius * (1.5 if value == 1 and look.red_one else 1.0)
            d = np.hypot(xx - cx, yy - cy) / r
            inside = np.clip((1.0 - d) * r, 0.0, 1.0)[..., None]  # anti-aliased disc
            rim = np.exp(-(((d - 0.9) / 0.12) ** 2))[..., None]  # the dimple's shadowed wall
            img = img * (1 - inside) + colour * inside * (1.0 - 0.35 * rim)
            img = img * (1 - 0.25 * rim * (1 - inside))
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def felt_texture(rng: np.random.Generator, colour: Rgb, size: int = 256) -> F32:
    """Felt: the colour with fine fibre noise and a faint large-scale mottle, linear RGB."""
    fine = rng.normal(0.0, 0.06, (size, size)).astype(np.float32)
    mottle = _noise(rng, (size, size), size / 10) - 0.5
    factor = (1.0 + fine + 0.12 * mottle)[..., None]
    return np.clip(srgb_to_linear(colour) * factor, 0.0, 1.0).astype(np.float32)


def wood_texture(rng: np.random.Generator, colour: Rgb, size: int = 256) -> F32:
    """Wood: rings along one axis, bent by noise, linear RGB."""
    warp = _noise(rng, (size, size), size / 8)
    _, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    cycles = 2 * np.pi * int(rng.integers(4, 8))  # whole cycles across the tile, so it repeats seamlessly
    rings = 0.5 + 0.5 * np.sin(xx / size * cycles + warp * rng.uniform(4, 10))
    factor = (0.8 + 0.25 * rings + rng.normal(0.0, 0.02, (size, size)))[..., None]
    out: F32 = np.clip(srgb_to_linear(colour) * factor, 0.0, 1.0).astype(np.float32)
    return out
