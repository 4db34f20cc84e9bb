"""The drop: Blender's rigid-body world (Bullet) settles the tossed and off-tray dice.

Centimetre units (gravity 981 cm/s^2), 60 frames a second for 150 frames (2.5 s), 20
substeps, box collision shapes (the bevel only rounds edges, so a die on a face rests
exactly flat). Leaning dice and their helpers (:data:`farklecam.datasets.blender.drops.HELD_KINDS`)
are passive: they stay where geometry put them and the dropped dice settle against them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import bpy
import numpy as np

from farklecam.datasets.blender.drops import HELD_KINDS

__all__ = ["FPS", "FRAMES", "simulate"]

FPS, FRAMES = 60, 150


def simulate(dice: Sequence[Any], kinds: Sequence[str], statics: Sequence[Any], rng: np.random.Generator) -> None:
    """Run the drop and leave every die object at its final pose (and the rigid-body world removed).

    Friction and restitution are drawn per object (statics first, then dice, in order).
    """
    scene = bpy.context.scene
    scene.gravity = (0.0, 0.0, -981.0)
    bpy.ops.rigidbody.world_add()
    world = scene.rigidbody_world
    world.substeps_per_frame = 20
    world.solver_iterations = 30
    world.point_cache.frame_start, world.point_cache.frame_end = 1, FRAMES
    scene.render.fps = FPS
    coll = world.collection
    if coll is None:
        coll = bpy.data.collections.new("RigidBodyWorld")
        world.collection = coll
    for obj in statics:
        coll.objects.link(obj)
        obj.rigid_body.type = "PASSIVE"
        obj.rigid_body.collision_shape = "BOX"
        obj.rigid_body.friction = float(rng.uniform(0.9, 1.0))
        obj.rigid_body.restitution = 0.2
        obj.rigid_body.collision_margin = 0.01
    for obj, kind in zip(dice, kinds, strict=True):
        coll.objects.link(obj)
        rb = obj.rigid_body
        rb.type = "PASSIVE" if kind in HELD_KINDS else "ACTIVE"
        rb.collision_shape = "BOX"
        rb.mass = 0.005
        rb.friction = float(rng.uniform(0.8, 1.0))
        rb.restitution = float(rng.uniform(0.2, 0.45))
        rb.collision_margin = 0.01
        rb.linear_damping, rb.angular_damping = 0.05, 0.15
    for f in range(1, FRAMES + 1):
        scene.frame_set(f)
    final = [obj.matrix_world.copy() for obj in dice]
    bpy.ops.rigidbody.world_remove()
    scene.frame_set(1)
    for obj, m in zip(dice, final, strict=True):
        obj.matrix_world = m
