"""Motion blur painted onto training crops: a die smeared along one direction.

Why: a webcam exposes for tens of milliseconds, and a die still rolling, or a
hand-held phone, smears each pip into a short streak. On the real validation
photos the only faces every classifier misread were two motion-blurred 4s read as
6s: a smeared pair of pips looks like a column of three. The photometric
augmentation blurs crops evenly (a defocused lens); this adds the directional kind.

The kernel is a line 3-9 px long on the 64 px crop, at any angle, sampled
bilinearly and normalised, so brightness is kept. A pip 6-9 px across stays a blob, so the
label stays right.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

#: Shortest and longest smear, in pixels of the 64 px crop.
MIN_LENGTH, MAX_LENGTH = 3, 9


def motion_kernel(length: float, angle_deg: float) -> npt.NDArray[np.float32]:
    """A normalised line kernel ``length`` px long at ``angle_deg`` (odd side, centred).

    Points along the line are splatted bilinearly, so the kernel is symmetric about
    its centre at any length and angle: the smear never shifts the die.
    """
    side = int(np.ceil(length)) | 1
    c = (side - 1) / 2
    half = (length - 1) / 2
    t = np.linspace(-1.0, 1.0, 8 * side + 1)
    xs = c + t * half * np.cos(np.radians(angle_deg))
    ys = c + t * half * np.sin(np.radians(angle_deg))
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    fx, fy = xs - x0, ys - y0
    kernel = np.zeros((side + 1, side + 1), np.float64)
    for ox, oy, w in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        np.add.at(kernel, (y0 + oy, x0 + ox), w)
    out: npt.NDArray[np.float32] = (kernel[:side, :side] / float(kernel.sum())).astype(np.float32)
    return out


def add_motion_blur(crops: npt.NDArray[np.uint8], rng: np.random.Generator, p: float) -> npt.NDArray[np.uint8]:
    """Smear a share ``p`` of square BGR ``crops`` (n, s, s, 3) along a random line; returns a copy.

    ``p`` 0 returns the crops unchanged and draws nothing from ``rng``, so a recipe
    without motion blur keeps its random stream.
    """
    if p <= 0 or len(crops) == 0:
        return crops
    out = crops.copy()
    for i in np.flatnonzero(rng.random(len(crops)) < p):
        kernel = motion_kernel(float(rng.uniform(MIN_LENGTH, MAX_LENGTH)), float(rng.uniform(0, 180)))
        out[i] = cv2.filter2D(crops[i], -1, kernel, borderType=cv2.BORDER_REFLECT)
    return out
