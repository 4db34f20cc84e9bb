"""Generated training scenes: dice thrown by pybullet into a tray, photographed by TinyRenderer.

``python -m farklecam.datasets.synthetic --out DIR --count N --seed S`` writes a YOLO dataset;
:func:`generate_scene` makes one labelled still and :func:`render_throw_sequence` a
labelled video of a throw. See :mod:`farklecam.datasets.synthetic.mesh` for the cocked threshold.
"""

from __future__ import annotations

from farklecam.datasets.synthetic.mesh import COCKED_TILT_DEG
from farklecam.datasets.synthetic.scene import Scene, generate_scene
from farklecam.datasets.synthetic.sequence import render_throw_sequence

__all__ = ["COCKED_TILT_DEG", "Scene", "generate_scene", "render_throw_sequence"]
