"""Principled-BSDF node materials: dice (plastic, marbled, translucent), pips, felt, leather, wood, tables.

Every random choice comes from the scene's generator, texture offsets included, so a
scene stays a pure function of its seed. Colours are linear RGB.
"""

from __future__ import annotations

import colorsys
from typing import Any

import bpy
import numpy as np

__all__ = [
    "DIE_COLOURS",
    "LIGHT_DICE",
    "die_material",
    "felt",
    "leather",
    "pip_material",
    "table",
    "wood",
]

RGB = tuple[float, float, float]

DIE_COLOURS: dict[str, RGB] = {
    "white": (0.85, 0.85, 0.82),
    "ivory": (0.8, 0.72, 0.55),
    "black": (0.02, 0.02, 0.025),
    "red": (0.6, 0.03, 0.03),
    "blue": (0.03, 0.08, 0.45),
    "green": (0.03, 0.3, 0.08),
    "yellow": (0.8, 0.6, 0.05),
    "purple": (0.25, 0.05, 0.4),
    "orange": (0.8, 0.25, 0.02),
    "teal": (0.02, 0.35, 0.35),
    "pink": (0.8, 0.3, 0.45),
    "grey": (0.25, 0.25, 0.27),
}
#: Body colours that get dark pips (the rest get white or gold ones).
LIGHT_DICE = frozenset({"white", "ivory", "yellow", "pink", "orange"})
FELT_COLOURS: list[RGB] = [
    (0.02, 0.2, 0.06),
    (0.3, 0.02, 0.03),
    (0.03, 0.06, 0.25),
    (0.03, 0.03, 0.03),
    (0.25, 0.12, 0.04),
    (0.2, 0.02, 0.2),
    (0.35, 0.35, 0.33),
    (0.02, 0.18, 0.2),
]
LEATHER_COLOURS: list[RGB] = [(0.12, 0.05, 0.02), (0.03, 0.02, 0.015), (0.3, 0.12, 0.05), (0.25, 0.02, 0.02)]
WOOD_PAIRS: list[tuple[RGB, RGB]] = [
    ((0.35, 0.17, 0.06), (0.18, 0.07, 0.02)),
    ((0.55, 0.35, 0.17), (0.35, 0.2, 0.08)),
    ((0.12, 0.05, 0.02), (0.05, 0.02, 0.01)),
    ((0.6, 0.5, 0.35), (0.45, 0.33, 0.2)),
]


def _new(name: str) -> tuple[Any, Any, Any]:
    """A node material with its Principled BSDF and node tree."""
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nt = mat.node_tree
    return mat, nt.nodes["Principled BSDF"], nt


def _coords(nt: Any, rng: np.random.Generator, scale: float) -> Any:
    """Object coordinates, scaled and shifted by a random offset (so no two surfaces share a pattern)."""
    tc = nt.nodes.new("ShaderNodeTexCoord")
    mp = nt.nodes.new("ShaderNodeMapping")
    mp.inputs["Scale"].default_value = (scale, scale, scale)
    mp.inputs["Location"].default_value = tuple(rng.uniform(-50, 50, 3))
    nt.links.new(tc.outputs["Object"], mp.inputs["Vector"])
    return mp.outputs["Vector"]


def _ramp(nt: Any, fac: Any, c1: Any, c2: Any, p1: float = 0.3, p2: float = 0.7) -> Any:
    """A two-stop colour ramp from ``c1`` at ``p1`` to ``c2`` at ``p2`` driven by ``fac``."""
    ramp = nt.nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.elements[0].position, ramp.color_ramp.elements[1].position = p1, p2
    ramp.color_ramp.elements[0].color = (*c1, 1)
    ramp.color_ramp.elements[1].color = (*c2, 1)
    nt.links.new(fac, ramp.inputs["Fac"])
    return ramp.outputs["Color"]


def die_material(rng: np.random.Generator, colour: str, style: str) -> Any:
    """A die body of a :data:`DIE_COLOURS` colour; ``style``: plastic, marbled or translucent."""
    mat, bsdf, nt = _new(f"die_{colour}_{style}")
    base = np.clip(np.array(DIE_COLOURS[colour]) * rng.uniform(0.85, 1.15, 3), 0, 1)
    bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.25, 0.5))
    bsdf.inputs["Coat Weight"].default_value = float(rng.uniform(0.0, 0.3))
    bsdf.inputs["Coat Roughness"].default_value = float(rng.uniform(0.1, 0.3))
    bsdf.inputs["Base Color"].default_value = (*base, 1)
    if style == "marbled":
        noise = nt.nodes.new("ShaderNodeTexNoise")
        noise.inputs["Scale"].default_value = float(rng.uniform(0.8, 2.0))
        noise.inputs["Detail"].default_value = 8.0
        noise.inputs["Distortion"].default_value = float(rng.uniform(2, 6))
        nt.links.new(_coords(nt, rng, 1.0), noise.inputs["Vector"])
        other = np.clip(base * rng.uniform(0.3, 0.6) + rng.uniform(0, 0.5) * np.array(DIE_COLOURS["white"]), 0, 1)
        nt.links.new(_ramp(nt, noise.outputs["Fac"], base, other, 0.45, 0.6), bsdf.inputs["Base Color"])
    elif style == "translucent":
        bsdf.inputs["Transmission Weight"].default_value = float(rng.uniform(0.5, 0.85))
        bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.15, 0.35))
    return mat


def pip_material(rng: np.random.Generator, light_die: bool) -> Any:
    """Pip paint: black, red or blue on light dice; white or gold on dark ones."""
    mat, bsdf, _ = _new("pip")
    r = rng.random()
    if light_die:
        c = (0.015, 0.015, 0.015) if r < 0.75 else ((0.5, 0.02, 0.02) if r < 0.9 else (0.02, 0.04, 0.3))
    else:
        c = (0.85, 0.85, 0.85) if r < 0.85 else (0.75, 0.55, 0.12)
    bsdf.inputs["Base Color"].default_value = (*c, 1)
    bsdf.inputs["Roughness"].default_value = 0.5
    return mat


def felt(rng: np.random.Generator) -> Any:
    """Felt: a :data:`FELT_COLOURS` colour (dark ones too), mottled by fine noise, with sheen."""
    mat, bsdf, nt = _new("felt")
    c = np.array(FELT_COLOURS[int(rng.integers(len(FELT_COLOURS)))])
    c = np.clip(c * rng.uniform(0.8, 1.25, 3), 0, 1)
    noise = nt.nodes.new("ShaderNodeTexNoise")
    noise.inputs["Scale"].default_value = float(rng.uniform(20, 60))
    noise.inputs["Detail"].default_value = 10.0
    nt.links.new(_coords(nt, rng, 1.0), noise.inputs["Vector"])
    nt.links.new(_ramp(nt, noise.outputs["Fac"], c * 0.75, np.clip(c * 1.2, 0, 1)), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = 0.95
    bsdf.inputs["Sheen Weight"].default_value = float(rng.uniform(0.3, 1.0))
    return mat


def leather(rng: np.random.Generator) -> Any:
    """Leather: Voronoi cells in colour and bump."""
    mat, bsdf, nt = _new("leather")
    c = np.array(LEATHER_COLOURS[int(rng.integers(len(LEATHER_COLOURS)))]) * rng.uniform(0.8, 1.2)
    vor = nt.nodes.new("ShaderNodeTexVoronoi")
    vor.inputs["Scale"].default_value = float(rng.uniform(8, 20))
    nt.links.new(_coords(nt, rng, 1.0), vor.inputs["Vector"])
    bump = nt.nodes.new("ShaderNodeBump")
    bump.inputs["Strength"].default_value = 0.3
    nt.links.new(vor.outputs["Distance"], bump.inputs["Height"])
    nt.links.new(bump.outputs["Normal"], bsdf.inputs["Normal"])
    nt.links.new(_ramp(nt, vor.outputs["Distance"], np.clip(c * 1.2, 0, 1), c * 0.7), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.35, 0.6))
    return mat


def wood(rng: np.random.Generator, scale: float = 0.15) -> Any:
    """Wood: distorted wave bands between two :data:`WOOD_PAIRS` colours, sometimes lacquered."""
    mat, bsdf, nt = _new("wood")
    c1, c2 = WOOD_PAIRS[int(rng.integers(len(WOOD_PAIRS)))]
    wave = nt.nodes.new("ShaderNodeTexWave")
    wave.bands_direction = "X"
    wave.inputs["Scale"].default_value = float(rng.uniform(0.5, 2.0))
    wave.inputs["Distortion"].default_value = float(rng.uniform(4, 12))
    wave.inputs["Detail"].default_value = 4.0
    nt.links.new(_coords(nt, rng, scale), wave.inputs["Vector"])
    nt.links.new(_ramp(nt, wave.outputs["Fac"], c1, c2, 0.2, 0.9), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.3, 0.7))
    bsdf.inputs["Coat Weight"].default_value = float(rng.uniform(0, 0.5))
    return mat


def table(rng: np.random.Generator) -> tuple[Any, str]:
    """The table under the tray and its kind: wood, stone, checked cloth or tiles."""
    kind = ["wood", "stone", "cloth", "tiles"][int(rng.integers(4))]
    if kind == "wood":
        return wood(rng, 0.05), kind
    mat, bsdf, nt = _new("table_" + kind)
    h, s, v = rng.uniform(0, 1), rng.uniform(0, 0.35), rng.uniform(0.1, 0.8)
    c = np.array(colorsys.hsv_to_rgb(h, s, v))
    if kind == "stone":
        noise = nt.nodes.new("ShaderNodeTexNoise")
        noise.inputs["Scale"].default_value = float(rng.uniform(0.05, 0.2))
        noise.inputs["Detail"].default_value = 12.0
        noise.inputs["Distortion"].default_value = 3.0
        nt.links.new(_coords(nt, rng, 1.0), noise.inputs["Vector"])
        lighter = np.clip(c * 0.5 + 0.3, 0, 1)
        nt.links.new(_ramp(nt, noise.outputs["Fac"], c, lighter, 0.4, 0.55), bsdf.inputs["Base Color"])
        bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.2, 0.5))
    elif kind == "cloth":
        chk = nt.nodes.new("ShaderNodeTexChecker")
        chk.inputs["Scale"].default_value = float(rng.uniform(0.2, 0.6))
        chk.inputs["Color1"].default_value = (*c, 1)
        chk.inputs["Color2"].default_value = (*np.clip(c * 0.6 + rng.uniform(0, 0.3, 3), 0, 1), 1)
        nt.links.new(_coords(nt, rng, 1.0), chk.inputs["Vector"])
        nt.links.new(chk.outputs["Color"], bsdf.inputs["Base Color"])
        bsdf.inputs["Roughness"].default_value = 0.9
    else:
        brick = nt.nodes.new("ShaderNodeTexBrick")
        brick.inputs["Scale"].default_value = float(rng.uniform(0.05, 0.12))
        brick.inputs["Color1"].default_value = (*c, 1)
        brick.inputs["Color2"].default_value = (*np.clip(c * 0.85, 0, 1), 1)
        brick.inputs["Mortar"].default_value = (0.6, 0.6, 0.58, 1)
        nt.links.new(_coords(nt, rng, 1.0), brick.inputs["Vector"])
        nt.links.new(brick.outputs["Color"], bsdf.inputs["Base Color"])
        bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.1, 0.4))
    return mat, kind
