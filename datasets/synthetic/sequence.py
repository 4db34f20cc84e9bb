"""Throws as video frames, for the live-play work (settle detection, hands, glare, lifted dice).

The same world, renderer and post-processing as the still scenes, but one fixed
camera and light for the whole clip. :func:`render_throw_sequence` is one throw: an
empty tray, dice thrown in and tumbling, resting, optionally a hand passing over and
a glare frame, then the dice picked up. :func:`render_game_video` is a stretch of
play: throw after throw, the player lifting the dice set aside out of the tray
between throws (the others stay put: not a throw), hands passing, glare, a slow last
die (thrown after the others rest), leaning and off-tray dice, small dice on request,
and an optional look the reader did not train on (:func:`unseen_look`). Each frame
comes with a sidecar: ``phase`` (``empty``, ``moving``, ``settled``, ``hand`` or
``lift``), ``throw``, ``bad`` (``"glare"`` or None), the tray outline and the labelled
dice; a game video also returns the truth per throw (:class:`ThrowTruth`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pybullet as p

from farklecam.datasets.synthetic.camera import Camera, Light, render
from farklecam.datasets.synthetic.hand import SKIN_TONES, Hand
from farklecam.datasets.synthetic.labels import label_dice, tray_outline
from farklecam.datasets.synthetic.postprocess import soft_shadows, table_background, table_texture, webcam
from farklecam.datasets.synthetic.scene import dice_specs, furnish, sample_camera, sample_light, sample_tray, spawn_dice
from farklecam.datasets.synthetic.textures import DieStyle, sample_die_style
from farklecam.datasets.synthetic.world import TIME_STEP, DiePose, Tray, World, random_quaternion

__all__ = ["SEQUENCE_STREAM", "ThrowTruth", "render_game_video", "render_throw_sequence", "unseen_look"]

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
    shift = np.array([[1, 0, b[0] - a[0]], [0, 1, b[1] - a[1]]], np.float32)
    shadow = cv2.GaussianBlur(cv2.warpAffine(mask, shift, mask.shape[::-1]), (0, 0), 6.0)
    shadow[mask > 0] = 0.0
    shaded: np.ndarray = np.clip(rgb * (1 - 0.45 * shadow[..., None]), 0, 255).astype(np.uint8)
    return shaded


#: Each frame is rendered this many times larger and averaged down: a sensor's pixel integrates the light
#: over its area, where TinyRenderer samples one texel, which breaks small dice's pips into specks.
SUPERSAMPLE = 2

#: Share of the frame interval the shutter is open: a webcam indoors at 15 fps exposes about 1/30 s.
EXPOSURE = 0.5


def _smear(rgb: np.ndarray, mask: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Motion blur of one moving body: its pixels smeared over the ``shift`` (dx, dy) it travelled while exposed.

    Only what moves is blurred: a die at rest stays as sharp as in a still, as in a webcam's video.
    """
    length = float(np.hypot(*shift))
    if length < 1.0 or not mask.any():
        return rgb
    half = int(np.ceil(length / 2)) + 1
    kernel: np.ndarray = np.zeros((2 * half + 1, 2 * half + 1), np.float32)
    a = (round(half - shift[0] / 2), round(half - shift[1] / 2))
    b = (round(half + shift[0] / 2), round(half + shift[1] / 2))
    cv2.line(kernel, a, b, 1.0, 1, cv2.LINE_AA)
    kernel /= max(float(kernel.sum()), 1e-6)
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    y0, y1 = max(int(ys.min()) - half, 0), min(int(ys.max()) + half + 1, h)
    x0, x1 = max(int(xs.min()) - half, 0), min(int(xs.max()) + half + 1, w)
    crop = rgb[y0:y1, x0:x1].astype(np.float32)
    blurred = cv2.filter2D(crop, -1, kernel)
    passed = np.clip(cv2.filter2D(mask[y0:y1, x0:x1].astype(np.float32), -1, kernel) * 4, 0, 1)[..., None]
    out = rgb.copy()
    out[y0:y1, x0:x1] = np.clip(crop * (1 - passed) + blurred * passed, 0, 255).astype(np.uint8)
    return out


def _jpeg(rgb: np.ndarray, quality: int) -> np.ndarray:
    """The frame as the webcam's JPEG stream delivers it."""
    ok, data = cv2.imencode(".jpg", rgb, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_UNCHANGED), np.uint8)


def _glare(rng: np.random.Generator, rgb: np.ndarray) -> np.ndarray:
    """An overexposed frame with a bright specular bloom (a lamp caught by the tray or a lens)."""
    h, w = rgb.shape[:2]
    blob: np.ndarray = np.zeros((h, w), np.float32)
    centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
    axes = (int(w * rng.uniform(0.1, 0.3)), int(h * rng.uniform(0.08, 0.25)))
    cv2.ellipse(blob, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    blob = cv2.GaussianBlur(blob, (0, 0), max(axes) / 3)[..., None]
    out = rgb.astype(np.float32) * 1.35
    return np.clip(out + (255 - out) * blob * 0.95, 0, 255).astype(np.uint8)


class _Shooter:
    """Renders the world as the clip's one webcam sees it, post-processed the same way every frame.

    Each frame is rendered :data:`SUPERSAMPLE` times larger and averaged down. The webcam
    (:func:`~farklecam.datasets.synthetic.postprocess.webcam`) is in focus; what moves
    while the shutter is open (a tumbling die, the hand) is smeared along its path
    (:func:`_smear`), what rests is not; every frame has its own sensor grain, then the
    look (if any) and the stream's JPEG.

    Args:
        seed: the clip's seed (its grain per frame is drawn from it and the frame count).
        rng: the clip's generator (the table's background draws from it).
        world: the scene.
        camera: the fixed camera.
        light: the fixed light.
        hand: the player's hand (its shadow is drawn when it is low).
        fps: frames per second (for the sidecar's time and the exposure).
        cam_seed: seeds the camera's fixed post-processing (its table texture, shadows and optics).
        look: an extra post-process for every frame (a look the reader did not train on), or None.
        jpeg_quality: quality of the webcam's JPEG stream, the last step of every frame.
    """

    def __init__(
        self,
        seed: int,
        rng: np.random.Generator,
        world: World,
        camera: Camera,
        light: Light,
        hand: Hand,
        fps: float,
        cam_seed: int,
        look: Callable[[np.ndarray], np.ndarray] | None = None,
        jpeg_quality: int = 80,
    ) -> None:
        self.seed, self.rng, self.world, self.camera, self.light, self.hand = seed, rng, world, camera, light, hand
        self.fps, self.look, self.count, self.cam_seed, self.quality = fps, look, 0, cam_seed, jpeg_quality
        self.backdrop, _ = table_texture(np.random.default_rng(self.cam_seed), camera)
        self._palm: np.ndarray | None = None  # the hand's palm on the last frame (None: out of view)

    def __call__(self, phase: str, bad: str | None = None, hand_z: float = 0.0, **extra: Any) -> Frame:
        """The next frame: BGR pixels and its sidecar (``extra`` is added to the sidecar)."""
        world, camera, tray = self.world, self.camera, self.world.tray
        fine = replace(camera, width=camera.width * SUPERSAMPLE, height=camera.height * SUPERSAMPLE)
        rgb, seg = render(world.client, fine, self.light)
        rgb = cv2.resize(rgb, (camera.width, camera.height), interpolation=cv2.INTER_AREA)
        seg = np.ascontiguousarray(seg[::SUPERSAMPLE, ::SUPERSAMPLE])
        poses = world.poses()
        labels, hidden = label_dice(poses, camera, seg, tray, [world.touching(q.body) for q in poses])
        rgb, _ = table_background(self.rng, rgb, seg == world.table, camera, warped=self.backdrop)
        rgb, _ = soft_shadows(np.random.default_rng(self.cam_seed + 1), rgb, seg, camera, poses, self.light.direction)
        if hand_z > 0:
            rgb = _hand_shadow(rgb, seg, self.hand, camera, self.light, hand_z)
        rgb = self._motion_blur(rgb, seg, poses)
        noise = np.random.default_rng([self.seed, SEQUENCE_STREAM, self.count])
        rgb, _ = webcam(np.random.default_rng(self.cam_seed + 2), rgb, noise_rng=noise)
        if bad == "glare":
            rgb = _glare(noise, rgb)
        if self.look is not None:
            rgb = self.look(rgb)
        rgb = _jpeg(rgb, self.quality)
        sidecar = {
            "frame": self.count,
            "time_s": round(self.count / self.fps, 4),
            "phase": phase,
            "bad": bad,
            "tray": tray_outline(camera, tray),
            "dice": [d.entry for d in labels],
            "hidden_dice": hidden,
            "seed": self.seed,
            "size": [camera.width, camera.height],
            **extra,
        }
        self.count += 1
        return np.ascontiguousarray(rgb[..., ::-1]), sidecar

    def _motion_blur(self, rgb: np.ndarray, seg: np.ndarray, poses: list[DiePose]) -> np.ndarray:
        """Smear each die by its velocity (a spin sweeps its corners too) and the hand by its step since last frame."""
        open_s = EXPOSURE / self.fps
        for pose in poses:
            lin, ang = (np.asarray(v) for v in p.getBaseVelocity(pose.body, physicsClientId=self.world.client))
            speed = float(np.linalg.norm(lin))
            if speed * open_s < 0.02 and float(np.linalg.norm(ang)) * pose.size * open_s < 0.04:
                continue  # at rest (or nearly): as sharp as a still
            spin = float(np.linalg.norm(ang)) * pose.size / 2 * open_s  # cm its corners sweep
            along = lin / speed if speed > 1e-6 else np.array([1.0, 0.0, 0.0])
            end = pose.position + lin * open_s + along * spin
            (a, b), front = self.camera.project(np.array([pose.position, end]))
            if front.all():
                rgb = _smear(rgb, seg == pose.body, b - a)
        at = np.asarray(p.getBasePositionAndOrientation(self.hand.bodies[0], physicsClientId=self.world.client)[0])
        palm = at if at[2] > -100 else None
        if palm is not None and self._palm is not None:
            (a, b), front = self.camera.project(np.array([self._palm, palm]))
            if front.all():
                rgb = _smear(rgb, np.isin(seg, self.hand.bodies), (b - a) * EXPOSURE)
        self._palm = palm
        return rgb


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
        shoot = _Shooter(seed, rng, world, camera, light, hand, fps, cam_seed)

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
        if hand_pass:
            yield from _hand_pass(shoot, rng, tray, fps)
            for _ in range(round(0.5 * fps)):
                yield shoot("settled")
        if pickup and world.dice:
            centre = np.mean([q.position for q in world.poses()], axis=0)
            yield from _reach(shoot, rng, tray, fps, centre, world.remove_dice)
            for _ in range(round(0.3 * fps)):
                yield shoot("empty")


def _hand_pass(shoot: _Shooter, rng: np.random.Generator, tray: Tray, fps: float, **extra: Any) -> Iterator[Frame]:
    """A hand sweeping over the tray above the walls, from one side out of view to the other."""
    reach = max(tray.width, tray.depth) * 0.9 + 25.0
    yaw = float(rng.uniform(0, 360))
    u = np.array([np.cos(np.radians(yaw)), np.sin(np.radians(yaw)), 0.0])
    z = tray.floor_t + tray.wall_h + float(rng.uniform(5, 12))
    for s in np.linspace(-1, 1, round(1.2 * fps)):
        shoot.hand.place(u * s * reach + np.array([0, 0, z]), yaw)
        yield shoot("hand", hand_z=z, **extra)
    shoot.hand.hide()


def _reach(
    shoot: _Shooter,
    rng: np.random.Generator,
    tray: Tray,
    fps: float,
    target: np.ndarray,
    take: Callable[[], None],
    phase: str = "hand",
    **extra: Any,
) -> Iterator[Frame]:
    """A hand coming down to ``target`` from out of view, calling ``take`` there (dice lifted), and leaving."""
    reach = max(tray.width, tray.depth) * 0.9 + 25.0
    yaw = float(rng.uniform(0, 360))
    u = np.array([np.cos(np.radians(yaw)), np.sin(np.radians(yaw)), 0.0])
    low = target + np.array([0, 0, 3.0])
    start = low + np.array([0, 0, tray.wall_h + 8.0]) - u * reach
    for a in np.linspace(0, 1, round(0.8 * fps)):
        pos = start + (low - start) * a
        shoot.hand.place(pos, yaw)
        yield shoot(phase, hand_z=float(pos[2]), **extra)
    take()
    for a in np.linspace(0, 1, round(0.6 * fps)):
        pos = low + (start - low) * a
        shoot.hand.place(pos, yaw)
        yield shoot(phase, hand_z=float(pos[2]), **extra)
    shoot.hand.hide()


@dataclass(frozen=True, slots=True)
class ThrowTruth:
    """What a game video's throw really was: read from its first frame at rest.

    Attributes:
        throw: 0-based number of the throw in the video.
        rest_frame: first frame on which every die had stopped (the physics says so).
        rest_time: that frame's time in seconds.
        faces: sorted faces of the dice that score (flat, in the tray, in view).
        rethrow: dice in view that must be thrown again (leaning or off the tray).
        dice: dice in view.
        events: what the throw holds, as far as known when its dice rest (``slow_last``, ``off_tray``,
            ``lean``, ``small``); hands, glare and lifted dice are in the frames' sidecars.
        labels: each die in view at rest: ``box`` (xyxy pixels), ``face`` (None when cocked), ``status``,
            ``size_px`` (its box's longer side) and ``visible``, so a bench can say which die a reading got wrong.
    """

    throw: int
    rest_frame: int
    rest_time: float
    faces: tuple[int, ...]
    rethrow: int
    dice: int
    events: tuple[str, ...]
    labels: tuple[dict[str, Any], ...] = ()

    @classmethod
    def from_sidecar(cls, sidecar: dict[str, Any], events: tuple[str, ...] = ()) -> ThrowTruth:
        """The truth of the throw whose first frame at rest has ``sidecar``."""
        dice = sidecar["dice"]
        return cls(
            throw=int(sidecar["throw"]),
            rest_frame=int(sidecar["frame"]),
            rest_time=float(sidecar["time_s"]),
            faces=tuple(sorted(int(d["face"]) for d in dice if d["status"] == "ok")),
            rethrow=sum(d["status"] in ("cocked", "off_tray") for d in dice),
            dice=len(dice),
            events=events,
            labels=tuple(
                {
                    "box": d["box"],
                    "face": d["face"],
                    "status": d["status"],
                    "size_px": round(max(d["box"][2] - d["box"][0], d["box"][3] - d["box"][1]), 1),
                    "visible": d["visible"],
                }
                for d in dice
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**asdict(self), "faces": list(self.faces), "events": list(self.events), "labels": list(self.labels)}


def unseen_look(rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
    """A colour post-process outside what the reader's training scenes saw, fixed for a whole video.

    The training scenes' :func:`~farklecam.datasets.synthetic.postprocess.degrade` keeps white
    balance within 15 % per channel. This look turns every hue by 26-60 degrees (trays,
    felt and coloured dice in colours never rendered), casts a tungsten or fluorescent
    tint of 22-30 % per channel and adds chroma noise; its videos are also streamed at
    a JPEG quality under the training range (:data:`JPEG_QUALITY`).
    """
    hue = int(rng.integers(13, 31)) * (1 if rng.random() < 0.5 else -1)  # OpenCV hue units: 2 degrees
    warm = rng.random() < 0.5
    tint = float(rng.uniform(0.22, 0.30))
    gains = np.array([1 + tint, 1.0, 1 - tint] if warm else [1 - tint, 1 + tint / 3, 1 + tint / 2], np.float32)
    seed = int(rng.integers(0, 2**31))
    frames = 0

    def look(rgb: np.ndarray) -> np.ndarray:
        nonlocal frames
        hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
        hsv[..., 0] = ((hsv[..., 0].astype(np.int16) + hue) % 180).astype(np.uint8)
        out = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(np.float32) * gains
        out += np.random.default_rng([seed, frames]).normal(0, 4.0, out.shape).astype(np.float32)
        frames += 1
        looked: np.ndarray = np.clip(out, 0, 255).astype(np.uint8)
        return looked

    return look


#: JPEG quality of a game video's webcam stream: (trained look, unseen look). The training scenes were
#: written at 45-95; a webcam's MJPEG runs at 60-90, and the unseen look's 30-42 is under what the reader saw.
JPEG_QUALITY: dict[bool, tuple[int, int]] = {False: (60, 91), True: (30, 43)}

#: Share of game videos whose dice are clear or translucent (real tables mostly use opaque dice).
SEE_THROUGH_SHARE = 0.2


def _game_style(rng: np.random.Generator) -> DieStyle:
    """One matching set's look, as a table plays with: opaque, but for :data:`SEE_THROUGH_SHARE` of games."""
    see_through = rng.random() < SEE_THROUGH_SHARE
    while True:
        style = sample_die_style(rng)
        if (style.kind in ("clear", "translucent")) == see_through:
            return style


def _remove(world: World, bodies: list[int]) -> None:
    """Take some dice off the table (the player lifting set-aside dice out)."""
    for body in bodies:
        p.removeBody(body, physicsClientId=world.client)
    world.dice[:] = [(b, size) for b, size in world.dice if b not in bodies]


def _add_slow_die(rng: np.random.Generator, world: World, tray: Tray, spec: tuple[float, float, int]) -> None:
    """One die rolled in late and slowly from a wall, while the others already rest."""
    size, chamfer, tex = spec
    k = int(rng.integers(0, 4))
    d = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]][k], float)
    half = (tray.width if k < 2 else tray.depth) / 2 - size
    xy = d * half + np.array([-d[1], d[0]]) * rng.uniform(-0.5, 0.5) * half
    pos = np.array([*xy, tray.floor_t + size / 2 + 1.5])
    body = world.add_die(size, chamfer, tex, pos, random_quaternion(rng), 0.3)
    world.set_velocity(body, np.array([*(-d * rng.uniform(15, 35)), 0.0]), rng.normal(0, 6, 3))


def _add_off_tray_die(rng: np.random.Generator, world: World, tray: Tray, spec: tuple[float, float, int]) -> None:
    """One die thrown over the wall, coming to rest on the table beside the tray."""
    size, chamfer, tex = spec
    k = int(rng.integers(0, 4))
    d = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]][k], float)
    out = (tray.width if k < 2 else tray.depth) / 2 + tray.wall_t + rng.uniform(1.0, 3.0)
    along = (tray.depth if k < 2 else tray.width) / 2
    xy = d * out + np.array([-d[1], d[0]]) * rng.uniform(-0.6, 0.6) * along
    body = world.add_die(size, chamfer, tex, np.array([*xy, rng.uniform(2, 4)]), random_quaternion(rng), 0.3)
    world.set_velocity(body, np.array([*(d * rng.uniform(0, 10)), 0.0]), rng.normal(0, 8, 3))


def render_game_video(
    seed: int,
    *,
    throws: int = 6,
    width: int = 640,
    height: int = 480,
    fps: float = 15.0,
    small_dice: bool = False,
    unseen: bool = False,
    truths: list[ThrowTruth] | None = None,
    meta: dict[str, Any] | None = None,
    max_tumble_seconds: float = 5.0,
) -> Iterator[Frame]:
    """Render a stretch of play with one camera: ``throws`` throws, and between them what players do.

    A turn starts with six dice; after each throw the player lifts one or more dice
    out of the tray (one reach of the hand each, the other dice stay put) and throws
    the rest again, or picks all up and starts a new turn. Throws may have a slow last
    die, a die off the tray or a leaning die, a hand passing over the resting dice, and
    a glare frame.

    Args:
        seed: the video's seed (same seed, same video).
        throws: how many throws.
        width: frame width in pixels.
        height: frame height in pixels.
        fps: frames per second.
        small_dice: 1.2-1.4 cm dice (the small dice sold) in a 20-30 cm tray, about 25-40 px across, instead
            of 1.6-2.2 cm dice in a 16-24 cm one.
        unseen: post-process every frame with :func:`unseen_look` (a look the reader did not train on).
        truths: if given, each throw's :class:`ThrowTruth` is appended when its dice come to rest.
        meta: if given, filled with what holds for the whole video: ``dice_styles`` (the set's look, name and
            kind) and ``jpeg_quality`` (of the webcam's stream).
        max_tumble_seconds: stop waiting for the dice to rest after this long.

    Yields:
        BGR ``uint8`` frames and their sidecars (with ``throw``, the throw the frame belongs to).
    """
    rng = np.random.default_rng([seed, SEQUENCE_STREAM, 2])
    tray, floor, wall = sample_tray(rng)
    styles = [_game_style(rng)]
    # a dice tray a webcam frames whole: 16-24 cm wide, so 1.6-2.2 cm dice span about 35-60 px at 640x480;
    # small dice lie in a full-size tray (20-30 cm, what players have), so 1.2-1.4 cm dice span about 25-40 px
    tray_w = float(rng.uniform(16, 24)) * (1.25 if small_dice else 1.0)
    tray = Tray(tray_w, tray_w * float(rng.uniform(0.6, 0.9)), min(tray.wall_h, 3.5), tray.wall_t)
    sizes = [float(rng.uniform(1.2, 1.4) if small_dice else rng.uniform(1.6, 2.2))]
    light = sample_light(rng)
    look = unseen_look(rng) if unseen else None
    quality = int(rng.integers(*JPEG_QUALITY[unseen]))
    if meta is not None:
        meta.update(dice_styles=[f"{s.name} ({s.kind})" for s in styles], jpeg_quality=quality)
    steps = max(1, round(1.0 / fps / TIME_STEP))
    with tempfile.TemporaryDirectory(prefix="farklecam-game-") as tmp, World(tray) as world:
        specs = furnish(rng, world, Path(tmp), floor, wall, (6, styles, sizes))
        corners = tray.floor_corners() * np.array([0.75, 0.75, 1.0])
        camera = sample_camera(rng, corners, float(np.mean(sizes)), width, height, frame_all=True)
        hand = Hand(world.client, SKIN_TONES[int(rng.integers(0, len(SKIN_TONES)))], float(rng.uniform(0.9, 1.15)))
        shoot = _Shooter(seed, rng, world, camera, light, hand, fps, int(rng.integers(0, 2**31)), look, quality)
        n = 6
        for _ in range(round(0.5 * fps)):
            yield shoot("empty", throw=-1)
        for k in range(throws):
            events = ["small"] if small_dice else []
            slow = n >= 2 and rng.random() < 0.35
            off = n >= 2 and not slow and rng.random() < 0.2
            first = specs[: n - (slow or off)]
            spawn = spawn_dice(rng, world, tray, first, lean_rate=0.25)
            if spawn["lean"]:
                events.append("lean")
            if len(world.dice) > len(first):  # a die leans on a helper die: a game still has its n dice
                _remove(world, [max(world.poses(), key=lambda q: q.position[2]).body])  # one still in the air
            if off:
                _add_off_tray_die(rng, world, tray, specs[n - 1])
                events.append("off_tray")
            calm, t, late, rest = 0, 0.0, slow, None
            while calm < 2 and t < max_tumble_seconds:
                world.step(steps)
                t += steps * TIME_STEP
                calm = 0 if world.moving() else calm + 1
                if late and (calm or t > 1.5):  # the others (nearly) rest: the last die rolls in
                    _add_slow_die(rng, world, tray, specs[n - 1])
                    late, calm = False, 0
                    events.append("slow_last")
                if calm < 2:
                    frame = shoot("settled" if calm else "moving", throw=k)
                    rest = frame[1] if calm == 1 else rest  # every die stopped on this frame (the last time)
                    yield frame
            if truths is not None and rest is not None:
                truths.append(ThrowTruth.from_sidecar(rest, tuple(events)))
            glare_at = int(rng.integers(3, round(1.2 * fps))) if rng.random() < 0.5 else -1
            for j in range(round(float(rng.uniform(1.2, 1.8)) * fps)):
                yield shoot("settled", "glare" if j == glare_at else None, throw=k)
            if rng.random() < 0.5:
                yield from _hand_pass(shoot, rng, tray, fps, throw=k)
                for _ in range(round(0.6 * fps)):
                    yield shoot("settled", throw=k)
            bodies = [b for b, _ in world.dice]
            keep = int(rng.integers(1, len(bodies))) if len(bodies) >= 2 and k < throws - 1 else 0
            rng.shuffle(bodies)
            lifted = bodies[:keep]
            for group in ([lifted] if keep < 3 else [lifted[:1], lifted[1:]]) if keep else []:
                where = np.mean([q.position for q in world.poses() if q.body in group], axis=0)
                yield from _reach(shoot, rng, tray, fps, where, partial(_remove, world, group), "lift", throw=k)
                for _ in range(round(0.8 * fps)):
                    yield shoot("settled", throw=k)
            n = len(world.dice) if keep else 6
            if world.dice:
                centre = np.mean([q.position for q in world.poses()], axis=0)
                yield from _reach(shoot, rng, tray, fps, centre, world.remove_dice, throw=k)
            for _ in range(round(0.4 * fps)):
                yield shoot("empty", throw=k)
            n = max(1, min(n, 6))
