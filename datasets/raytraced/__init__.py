"""A second, independent scene generator: dice placed by geometry and path-traced by mitsuba 3.

Why: every other generated scene comes from :mod:`farklecam.datasets.synthetic` (pybullet physics,
TinyRenderer, its own dice, trays and lights). A reader tuned on one generator learns its
look; judging it on a second one that shares no rendering or physics code tells how far
its figures carry to a world it never saw.

What it draws: rounded-cube dice built in numpy (:mod:`~farklecam.datasets.raytraced.dice`), pips as
shaded dimples in a texture atlas, six dice colours (white, ivory, red, black, blue, green;
some marbled, some white sets with a red one) (:mod:`~farklecam.datasets.raytraced.looks`); felt
trays in eight colours, dark ones included, with wooden or felt walls, on a wooden or
cloth table; a rectangular area light for soft shadows, sometimes a point light, and a
dim sky; a pinhole camera 0-15 degrees off straight down at 640x480 with dice about
19-38 px across. Poses come without a physics engine (:mod:`~farklecam.datasets.raytraced.placement`):
flat dice with a random yaw, dice leaning 15-50 degrees (most 25-36) on a wall or another
die with the lower edge on the floor and touching their support, and a few dice off the
tray on the table. Mitsuba's ``scalar_rgb`` path tracer renders (:mod:`~farklecam.datasets.raytraced.render`).

What it shares with :mod:`farklecam.datasets.synthetic`: only the output format, the class ids and
label writer of :mod:`farklecam.datasets.yolo` and the sidecar's fields (:mod:`~farklecam.datasets.raytraced.labels`);
it imports nothing from it.

``python -m farklecam.datasets.raytraced --out DIR --count N --seed S`` writes a folder (resumable).
mitsuba is in the ``train`` extra only; everything but :mod:`~farklecam.datasets.raytraced.render`
runs without it.
"""

from __future__ import annotations

from farklecam.datasets.raytraced.dice import COCKED_TILT_DEG, RoundedDie
from farklecam.datasets.raytraced.scene import generate_scene

__all__ = ["COCKED_TILT_DEG", "RoundedDie", "generate_scene"]
