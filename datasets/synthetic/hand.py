"""A player's hand for throw sequences: skin-coloured capsules (palm, fingers, thumb, forearm).

Visual only (no collision shapes): the hand passes over the tray or sweeps dice up,
and the sequence code removes the dice it "picks up". Each part is its own body,
moved together by :meth:`Hand.place`, which keeps the pybullet side to plain calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pybullet as p

__all__ = ["SKIN_TONES", "Hand"]

#: Skin tones (RGB 0..1), light to dark.
SKIN_TONES: tuple[tuple[float, float, float], ...] = (
    (0.96, 0.80, 0.69),
    (0.92, 0.72, 0.58),
    (0.80, 0.58, 0.42),
    (0.60, 0.42, 0.28),
    (0.40, 0.27, 0.18),
)

# (offset x, y, z in cm with fingers along +x, radius, length, yaw of the capsule axis in degrees)
_PARTS: tuple[tuple[float, float, float, float, float, float], ...] = (
    (0.0, -1.9, 0.0, 2.1, 5.0, 0.0),  # palm, two capsules side by side
    (0.0, 1.9, 0.0, 2.1, 5.0, 0.0),
    (6.3, -2.9, -0.3, 0.85, 4.6, -4.0),  # little .. index finger
    (7.0, -1.0, -0.2, 0.95, 5.6, -1.0),
    (7.2, 1.0, -0.2, 0.95, 6.0, 1.0),
    (6.8, 2.9, -0.3, 0.9, 5.4, 4.0),
    (2.5, 5.0, -0.6, 1.0, 4.2, 50.0),  # thumb
    (-16.0, 0.0, 0.6, 3.0, 22.0, 0.0),  # forearm, reaching out of the frame
)


def _capsule_quat(yaw_deg: float) -> np.ndarray:
    """Orientation turning a capsule's z axis onto the horizontal direction ``yaw_deg``."""
    y = np.radians(yaw_deg) / 2
    q_yaw = np.array([0.0, 0.0, np.sin(y), np.cos(y)])
    q_lay = np.array([0.0, np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4)])
    return np.asarray(p.multiplyTransforms([0, 0, 0], q_yaw, [0, 0, 0], q_lay)[1])


@dataclass
class Hand:
    """A hand in one pybullet client, scaled by ``scale`` (1 = an adult hand, ~19 cm)."""

    client: int
    rgb: tuple[float, float, float]
    scale: float = 1.0
    bodies: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for _x, _y, _z, radius, length, _yaw in _PARTS:
            vis = p.createVisualShape(
                p.GEOM_CAPSULE,
                radius=radius * self.scale,
                length=length * self.scale,
                rgbaColor=[*self.rgb, 1.0],
                specularColor=[0.2, 0.2, 0.2],
                physicsClientId=self.client,
            )
            self.bodies.append(p.createMultiBody(0, -1, vis, basePosition=[0, 0, -500], physicsClientId=self.client))

    def place(self, position: np.ndarray, yaw_deg: float) -> None:
        """Put the hand's palm centre at ``position`` with the fingers pointing along ``yaw_deg``."""
        c, s = np.cos(np.radians(yaw_deg)), np.sin(np.radians(yaw_deg))
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        for body, (x, y, z, _r, _l, yaw) in zip(self.bodies, _PARTS, strict=True):
            pos = position + rot @ (np.array([x, y, z]) * self.scale)
            p.resetBasePositionAndOrientation(
                body, pos.tolist(), _capsule_quat(yaw_deg + yaw).tolist(), physicsClientId=self.client
            )

    def hide(self) -> None:
        """Move the hand far below the table, out of every view."""
        for body in self.bodies:
            p.resetBasePositionAndOrientation(body, [0, 0, -500], [0, 0, 0, 1], physicsClientId=self.client)
