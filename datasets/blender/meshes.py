"""The scene's meshes in Blender: boxes (table, tray floor, walls) and the dice (bevel + pip dimples).

A die is a cube rounded by Blender's bevel modifier (3 segments) with its pips cut as
real dimples: an exact boolean difference against the spheres of
:func:`farklecam.datasets.blender.faces.pip_spheres`. The dimples' polygons get the pip material
(material slot 1), the rest the body (slot 0).
"""

from __future__ import annotations

from typing import Any

import bpy  # first: it puts bmesh and mathutils on the path

# isort: split
import bmesh
import numpy as np
import numpy.typing as npt
from mathutils import Matrix, Vector

from farklecam.datasets.blender.faces import pip_spheres

__all__ = ["box_object", "die_mesh", "die_object", "reset_scene"]

F64 = npt.NDArray[np.float64]


def reset_scene() -> None:
    """An empty scene with no data left over from the previous one."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    for block in (bpy.data.meshes, bpy.data.materials, bpy.data.images, bpy.data.lights, bpy.data.cameras):
        for item in list(block):
            block.remove(item)


def box_object(name: str, centre: tuple[float, float, float], dims: tuple[float, float, float], material: Any) -> Any:
    """A box of ``dims`` cm centred on ``centre``, its origin at the centre (where Bullet's BOX shape is centred)."""
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bmesh.ops.scale(bm, vec=Vector(dims), verts=bm.verts)
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    obj.location = Vector(centre)
    bpy.context.scene.collection.objects.link(obj)
    obj.data.materials.append(material)
    return obj


def die_mesh(rng: np.random.Generator, size: float, rounding: float, body: Any, pip: Any) -> tuple[Any, F64]:
    """A die of edge ``size`` cm, bevelled ``rounding`` of the edge, with dimpled pips; and its vertices (n, 3).

    The pip spheres' radius is 7.5-9.5% of the edge, sunk 35-60% of it into the face.
    """
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("die_src")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=size)
    bm.to_mesh(mesh)
    bm.free()
    src = bpy.data.objects.new("die_src", mesh)
    scene.collection.objects.link(src)
    bevel = src.modifiers.new("bevel", "BEVEL")
    bevel.width = rounding * size
    bevel.segments = 3
    bevel.limit_method = "NONE"
    r = float(rng.uniform(0.075, 0.095)) * size
    depth = float(rng.uniform(0.35, 0.6)) * r
    centres, normals = pip_spheres(size, r, depth)
    cutter_mesh = bpy.data.meshes.new("pips")
    bm = bmesh.new()
    for c in centres:
        made = bmesh.ops.create_uvsphere(bm, u_segments=12, v_segments=6, radius=r)
        bmesh.ops.translate(bm, vec=Vector(c), verts=made["verts"])
    bm.to_mesh(cutter_mesh)
    bm.free()
    cutter = bpy.data.objects.new("pips", cutter_mesh)
    scene.collection.objects.link(cutter)
    boolean = src.modifiers.new("pips", "BOOLEAN")
    boolean.operation = "DIFFERENCE"
    boolean.solver = "EXACT"
    boolean.object = cutter
    depsgraph = bpy.context.evaluated_depsgraph_get()
    out = bpy.data.meshes.new_from_object(src.evaluated_get(depsgraph))
    bpy.data.objects.remove(src)
    bpy.data.objects.remove(cutter)
    out.materials.clear()
    out.materials.append(body)
    out.materials.append(pip)
    h = size / 2
    for poly in out.polygons:
        # A dimple polygon lies near a pip's sphere and sunk below its face's plane (a flat
        # face's polygons lie on the plane, even when their centroid falls near a pip).
        c = np.array(poly.center)
        j = int(np.argmin(np.linalg.norm(centres - c, axis=1)))
        sunk = float(c @ normals[j]) < h - 0.02 * depth
        poly.material_index = int(np.linalg.norm(centres[j] - c) < r * 1.02 and sunk)
        poly.use_smooth = False  # smooth normals over the boolean's n-gons smear the faces
    verts = np.array([v.co for v in out.vertices], float)
    return out, verts


def die_object(name: str, mesh: Any, rotation: F64, position: F64) -> Any:
    """A die object sharing ``mesh``, posed by a rotation (3, 3) and centre (3,)."""
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    m = Matrix.Identity(4)
    for a in range(3):
        for b in range(3):
            m[a][b] = rotation[a, b]
        m[a][3] = position[a]
    obj.matrix_world = m
    return obj
