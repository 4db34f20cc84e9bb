"""A third, independent scene generator: dice dropped by Blender's rigid bodies and rendered by Cycles.

Why: a reader tuned on one generator learns its look. :mod:`farklecam.datasets.synthetic`
(pybullet + TinyRenderer) and :mod:`farklecam.datasets.raytraced` (mitsuba 3, poses by geometry)
share no rendering code; this one shares none with either, so each look can be judged
by a model trained without it (leave-one-out across the three generators).

What it draws: bevelled dice with pips cut as real dimples (:mod:`~farklecam.datasets.blender.meshes`,
layout in :mod:`~farklecam.datasets.blender.faces`), Principled-BSDF plastic, marbled or
translucent bodies in twelve colours with black, red, blue, white or gold pips; felt,
leather or wooden trays with wooden, leather or matching walls, on a wooden, stone,
checked-cloth or tiled table (:mod:`~farklecam.datasets.blender.materials`); a sun, a tinted area
light and a coloured sky, developed from a linear EXR with auto exposure, a shoulder,
noise and JPEG 75-95 (:mod:`~farklecam.datasets.blender.render`); a pinhole camera 0-15 degrees
off straight down, dice 16-27 px on an edge at 640x480. Poses
(:mod:`~farklecam.datasets.blender.drops`, :mod:`~farklecam.datasets.blender.physics`): 2-8 dice tossed
into the tray or beside it and settled by Blender's rigid-body world; up to three lean
18-50 degrees on a wall or on a flat helper die (which comes in addition). Labels
(:mod:`~farklecam.datasets.blender.labels`)
come from the final poses, in the sidecar format of :mod:`farklecam.datasets.raytraced.labels`
plus ``placed`` and ``dropped_as``; ``generator: "blender"``.

What it shares with the project: the output format (:mod:`farklecam.datasets.yolo`, the sidecar's
common entries from :func:`farklecam.datasets.raytraced.labels.scene_fields`), the pinhole camera and
tray maths (:mod:`farklecam.datasets.raytraced.camera`, ``Tray``), the scene's framing with its own
ranges (:mod:`farklecam.datasets.raytraced.framing`), the run loop (:mod:`farklecam.datasets.scene_run`),
``top_face`` and ``COCKED_TILT_DEG``; no rendering or physics.

Why its own interpreter: ``bpy`` 4.5 is Blender as a Python module; it needs Python 3.11
exactly and ``numpy<2``, while farklecam pins numpy 2, so it cannot be an extra. It runs
under a "Blender venv" (``scripts/blender_venv.sh`` makes ``.venv-blender``) with the
repo root on the path. Only :mod:`~farklecam.datasets.blender.meshes`,
:mod:`~farklecam.datasets.blender.materials`, :mod:`~farklecam.datasets.blender.physics`,
:mod:`~farklecam.datasets.blender.render` and :mod:`~farklecam.datasets.blender.scene` import bpy; the pure
maths (faces, rotations, drop planning, labels) runs and is tested in the main venv.

The held-out set (an hour or more on two cores, so not part of ``farklecam.datasets.rebuild``)::

    .venv-blender/bin/python -m farklecam.datasets.blender --out data/eval/blender --count 300 --seed 40

Known limits: leaning dice are placed by geometry and held still, because under Bullet
every leaning die slid flat within a quarter of a second (friction 1, box or hull shapes,
more substeps all tried), so only tossed and off-tray dice come from physics and a die
lands cocked on its own only against a leaner or a wall; dice start at rest (none bounce
out of the tray); flat dice rest at exactly 0 degrees; trays are rectangular (no round
ones); every face has pips (no symbol faces); no motion blur or defocus.
"""
