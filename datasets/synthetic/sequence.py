"""A whole throw as video frames, for the live-play work (settle detection, hands, glare).

The same world, renderer and post-processing as the still scenes, but one fixed
camera and light for the whole clip: an empty tray, dice thrown in and tumbling,
resting, optionally a hand passing over and a glare frame, then the dice picked up.
Each frame comes with a sidecar: ``phase`` (``empty``, ``moving``, ``settled`` or
``hand``), ``bad`` (``"glare"`` or None), the tray outline and the labelled dice.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from datasets.synthetic.camera import Camera, Light, render
from datasets.synthetic.hand import SKIN_TONES, Hand
from datasets.synthetic.labels import label_dice, tray_outline
from datasets.synthetic.postprocess import degrade, soft_shadows, table_background, table_texture
from datasets.synthetic.scene import dice_specs, furnish, sample_camera, sample_light, sample_tray, spawn_dice
from datasets.synthetic.world import TIME_STEP, World

__all__ = ["SEQUENCE_STREAM", "render_throw_sequence"]

#: Second seed word of sequences, so sequence ``s`` never shares draws with scene ``(s, i)``.
SEQUENCE_STREAM = 1_000_003
Frame = tuple[np.ndarray, dict[str, Any]]


def _hand_shadow(
    rgb: np.ndarray, seg: np.ndarray, hand: Hand, camera: Camera, light: Light, height: float
) -> np.ndarray:
    """Darken the surface where the hand's silhouette falls, shifted along the light."""
    mask = np.isin(seg, hand.bodies).astype(np.float32)
    if not mask.any():
        return rgb
    d = np.asarray(light.direction) / np.linalg.norm(light.direction)
    ground = -d * height / max(d[2], 0.3)
    (a, b), _ = camera.project(np.array([[0.0, 0.0, height], [ground[0], ground[1], 0.0]]))
    shift = np.float32([[1, 0, b[0] - a[0]], [0, 1, b[1] - a[1]]])
    shadow = cv2.GaussianBlur(cv2.warpAffine(mask, shift, mask.shape[::-1]), (0, 0), 6.0)
    shadow[mask > 0] = 0.0
    return np.clip(rgb * (1 - 0.45 * shadow[..., None]), 0, 255).astype(np.uint8)


def _glare(rng: np.random.Generator, rgb: np.ndarray) -> np.ndarray:
    """An overexposed frame with a bright specular bloom (a lamp caught by the tray or a lens)."""
    h, w = rgb.shape[:2]
    blob = np.zeros((h, w), np.float32)
    centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
    axes = (int(w * rng.uniform(0.1, 0.3)), int(h * rng.uniform(0.08, 0.25)))
    cv2.ellipse(blob, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    blob = cv2.GaussianBlur(blob, (0, 0), max(axes) / 3)[..., None]
    out = rgb.astype(np.float32) * 1.35
    return np.clip(out + (255 - out) * blob * 0.95, 0, 255).astype(np.uint8)


def render_throw_sequence(
    seed: int,
    *,
    width: int = 640,
    height: int = 480,
    fps: float = 20.0,
    settled_seconds: float = 1.5,
    hand_pass: bool = True,
    glare: bool = True,
    pickup: bool = True,
    max_tumble_seconds: float = 4.0,
) -> Iterator[Frame]:
    """Render one throw as a stream of ``(frame_bgr, sidecar)`` at ``fps``.

    Args:
        seed: the clip's seed (same seed, same clip).
        width: frame width in pixels.
        height: frame height in pixels.
        fps: frames per second of the clip (physics steps 1/240 s between frames).
        settled_seconds: how long the dice lie still before anything else happens.
        hand_pass: a hand passes over the resting dice once (phase ``hand``).
        glare: one frame while settled is overexposed with a glare bloom (``bad: "glare"``).
        pickup: at the end a hand comes down and takes the dice away.
        max_tumble_seconds: give up waiting for the dice to rest after this long.

    Yields:
        BGR ``uint8`` frames and their sidecar dictionaries.
    """
    rng = np.random.default_rng([seed, SEQUENCE_STREAM])
    tray, floor, wall = sample_tray(rng)
    n, styles, sizes = dice_specs(rng)
    dice = (min(n, 6), styles, sizes)
    light = sample_light(rng)
    cam_seed = int(rng.integers(0, 2**31))
    steps = max(1, round(1.0 / fps / TIME_STEP))
    with tempfile.TemporaryDirectory(prefix="farklecam-seq-") as tmp, World(tray) as world:
        specs = furnish(rng, world, Path(tmp), floor, wall, dice)
        corners = tray.floor_corners() * np.array([0.75, 0.75, 1.0])  # wall tops may leave the frame
        camera = sample_camera(rng, corners, float(np.mean(sizes)), width, height, frame_all=True)
        hand = Hand(world.client, SKIN_TONES[int(rng.integers(0, len(SKIN_TONES)))], float(rng.uniform(0.9, 1.15)))
        backdrop, _ = table_texture(np.random.default_rng(cam_seed), camera)
        count = 0

        def shoot(phase: str, bad: str | None = None, hand_z: float = 0.0) -> Frame:
            nonlocal count
            rgb, seg = render(world.client, camera, light)
            poses = world.poses()
            labels, hidden = label_dice(poses, camera, seg, tray, [world.touching(q.body) for q in poses])
            rgb, _ = table_background(rng, rgb, seg == world.table, camera, warped=backdrop)
            rgb, _ = soft_shadows(np.random.default_rng(cam_seed + 1), rgb, seg, camera, poses, light.direction)
            if hand_z > 0:
                rgb = _hand_shadow(rgb, seg, hand, camera, light, hand_z)
            noise = np.random.default_rng([seed, SEQUENCE_STREAM, count])
            rgb, _ = degrade(np.random.default_rng(cam_seed + 2), rgb, noise_rng=noise)
            if bad == "glare":
                rgb = _glare(noise, rgb)
            sidecar = {
                "frame": count,
                "time_s": round(count / fps, 4),
                "phase": phase,
                "bad": bad,
                "tray": tray_outline(camera, tray),
                "dice": [d.entry for d in labels],
                "hidden_dice": hidden,
                "seed": seed,
                "size": [width, height],
            }
            count += 1
            return np.ascontiguousarray(rgb[..., ::-1]), sidecar

        for _ in range(round(0.5 * fps)):
            yield shoot("empty")
        spawn_dice(rng, world, tray, specs)
        calm, t = 0, 0.0
        while calm < 2 and t < max_tumble_seconds:
            world.step(steps)
            t += steps * TIME_STEP
            calm = 0 if world.moving() else calm + 1
            yield shoot("moving")
        glare_at = int(rng.integers(0, max(1, round(settled_seconds * fps)))) if glare else -1
        for k in range(round(settled_seconds * fps)):
            yield shoot("settled", "glare" if k == glare_at else None)
        reach = max(tray.width, tray.depth) * 0.9 + 25.0
        if hand_pass:
            yaw = float(rng.uniform(0, 360))
            u = np.array([np.cos(np.radians(yaw)), np.sin(np.radians(yaw)), 0.0])
            z = tray.floor_t + tray.wall_h + float(rng.uniform(5, 12))
            for s in np.linspace(-1, 1, round(1.2 * fps)):
                hand.place(u * s * reach + np.array([0, 0, z]), yaw)
                yield shoot("hand", hand_z=z)
            hand.hide()
            for _ in range(round(0.5 * fps)):
                yield shoot("settled")
        if pickup and world.dice:
            centre = np.mean([q.position for q in world.poses()], axis=0)
            yaw = float(rng.uniform(0, 360))
            u = np.array([np.cos(np.radians(yaw)), np.sin(np.radians(yaw)), 0.0])
            low = centre + np.array([0, 0, 3.0])
            high = low + np.array([0, 0, tray.wall_h + 8.0])
            start = high - u * reach
            path = [start + (low - start) * a for a in np.linspace(0, 1, round(0.8 * fps))]
            for pos in path:
                hand.place(pos, yaw)
                yield shoot("hand", hand_z=float(pos[2]))
            world.remove_dice()
            for pos in [low + (start - low) * a for a in np.linspace(0, 1, round(0.6 * fps))]:
                hand.place(pos, yaw)
                yield shoot("hand", hand_z=float(pos[2]))
            hand.hide()
            for _ in range(round(0.3 * fps)):
                yield shoot("empty")
