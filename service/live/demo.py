"""A scripted dice table: frames of throws drawn with OpenCV, and a reader that knows the script.

``farklecam live --demo`` plays it so the window can be tried with no camera and no
model; the settle tests and ``bench/live_pipeline.py`` use it because it is exact,
fast (under a millisecond a frame) and knows the truth of every frame. Each throw
goes through what a camera sees: a hand clears the previous dice, dice tumble in and
land, rest; optionally a hand passes over them. Alongside each frame it keeps a
sidecar like the synthetic generator's (``phase``, ``throw``, ``dice``), and
:meth:`DemoTable.read` turns the sidecar of the frame just yielded into a
:class:`~farklecam.vision.reading.Reading` with the noise of a real reader: jittered boxes,
confidences below 1, dice hidden under a hand, random faces on blurred moving dice,
one wrong face on the glare frame, and a die whose reads flicker between two faces.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import DieStatus, Reading

__all__ = ["DemoTable", "DemoThrow", "demo_script"]

_PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.27, 0.27), (0.73, 0.73)),
    3: ((0.27, 0.27), (0.5, 0.5), (0.73, 0.73)),
    4: ((0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)),
    5: ((0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)),
    6: ((0.27, 0.25), (0.73, 0.25), (0.27, 0.5), (0.73, 0.5), (0.27, 0.75), (0.73, 0.75)),
}
_SKIN = (120, 160, 215)


@dataclass(frozen=True, slots=True)
class DemoThrow:
    """One scripted throw.

    Attributes:
        faces: the faces the dice land on (one per die thrown).
        cocked: indices of dice that land leaning (the reader says ``cocked``).
        glare: one settled frame where the reader misreads one die.
        flicker: index of a die whose reads alternate between two faces (truly ambiguous), or None.
        hand: a hand passes over the settled dice (motion, but no new throw).
    """

    faces: tuple[int, ...]
    cocked: tuple[int, ...] = ()
    glare: bool = True
    flicker: int | None = None
    hand: bool = False

    @property
    def expected_faces(self) -> tuple[int, ...]:
        """Sorted faces of the dice that score: what the settle layer should report."""
        skip = {*self.cocked, *(() if self.flicker is None else (self.flicker,))}
        return tuple(sorted(f for i, f in enumerate(self.faces) if i not in skip))


def demo_script(n_throws: int, seed: int = 0) -> list[DemoThrow]:
    """A varied script: 6, then fewer dice, a cocked die, a flickering die and a hand now and then."""
    rng = np.random.default_rng(seed)
    throws = []
    for k in range(n_throws):
        n = int(rng.integers(1, 7)) if k % 3 else 6
        faces = tuple(int(f) for f in rng.integers(1, 7, n))
        throws.append(
            DemoThrow(
                faces,
                cocked=(0,) if k % 5 == 3 and n > 1 else (),
                flicker=n - 1 if k % 7 == 5 and n > 1 else None,
                hand=k % 4 == 2,
            )
        )
    return throws


class DemoTable:
    """Plays a script of throws as frames, and reads them like a (noisy) dice reader.

    Args:
        throws: the script.
        size: ``(width, height)`` of the frames.
        fps: frame rate the time stamps assume.
        settled_frames: frames the dice rest before the next throw (after a hand, half again).
        seed: seed of every random choice (positions, noise).
        more: after the script, asked for each next throw; None means "not yet" (the dice rest
            a little longer). Without it the frames end with the script.
        die: side of a die in pixels (default a sixteenth of the width).
    """

    def __init__(
        self,
        throws: Sequence[DemoThrow],
        size: tuple[int, int] = (640, 480),
        fps: float = 30.0,
        settled_frames: int = 30,
        seed: int = 0,
        more: Callable[[], DemoThrow | None] | None = None,
        die: int | None = None,
    ) -> None:
        self.throws = list(throws)
        self.size, self.fps, self.settled_frames = size, fps, settled_frames
        self.seed, self.more = seed, more
        self.die = die or max(24, size[0] // 16)
        self._rng = np.random.default_rng(seed)
        self._noise = np.random.default_rng(seed + 1)
        self.current: dict[str, Any] = {"phase": "empty", "throw": -1, "dice": []}
        self.sidecars: list[dict[str, Any]] = []
        self.reads = 0
        self._background = self._felt()

    # ------------------------------------------------------------------ frames
    def __iter__(self) -> Iterator[Frame]:
        return self.frames()

    def frames(self) -> Iterator[Frame]:
        """Every frame of the script, in order; ``self.current`` is the sidecar of the frame last yielded."""
        for index, (image, sidecar) in enumerate(self._scenes()):
            self.current = sidecar
            self.sidecars.append(sidecar)
            yield Frame(image, index, index / self.fps)

    def _scenes(self) -> Iterator[tuple[npt.NDArray[np.uint8], dict[str, Any]]]:
        rest: tuple[npt.NDArray[np.uint8], dict[str, Any]] = (self._background, dict(self.current))
        for k in itertools.count():
            if k < len(self.throws):
                throw = self.throws[k]
            elif self.more is None:
                return
            else:
                while (upcoming := self.more()) is None:  # the players are not ready: the dice rest longer
                    yield rest[0].copy(), rest[1]
                throw = upcoming
            previous = rest[1]["dice"]
            for rest in self._throw(k, throw, previous):
                yield rest

    def _throw(
        self, k: int, throw: DemoThrow, previous: list[dict[str, Any]]
    ) -> Iterator[tuple[npt.NDArray[np.uint8], dict[str, Any]]]:
        height = self.size[1]
        if previous:  # a hand sweeps the old dice away
            for t in np.linspace(0.0, 1.0, 10):
                dice = previous if t < 0.5 else []
                yield self._draw(dice, hand=t), self._sidecar("clear", k, dice, hidden=self._under_hand(dice, t))
        for _ in range(4):
            yield self._draw([]), self._sidecar("empty", k, [])
        finals = self._places(len(throw.faces))
        starts = np.column_stack([np.full(len(finals), -self.die * 2.0), self._rng.uniform(0.2, 0.8, len(finals))])
        starts[:, 1] *= height
        for t in np.linspace(0.0, 1.0, 18):
            ease = 1 - (1 - t) ** 3
            dice = []
            for i, (x, y) in enumerate(finals):
                cx = starts[i, 0] + (x - starts[i, 0]) * ease + np.sin(t * 20 + i) * 6 * (1 - t)
                cy = starts[i, 1] + (y - starts[i, 1]) * ease
                face = int(self._rng.integers(1, 7))
                dice.append(self._die(cx, cy, face, "ok", angle=(1 - t) * 360 + i * 40, blur=True))
            yield self._draw(dice), self._sidecar("moving", k, dice)
        landed = [
            self._die(x, y, f, "cocked" if i in throw.cocked else "ok", angle=float(self._rng.uniform(-12, 12)))
            for i, ((x, y), f) in enumerate(zip(finals, throw.faces, strict=True))
        ]
        for i in range(len(landed)):
            landed[i]["flicker"] = i == throw.flicker
        image = self._draw(landed)
        glare_at = self.settled_frames // 3 if throw.glare else -1
        for j in range(self.settled_frames):
            glare = j == glare_at
            yield (
                (self._glare(image, landed[0]) if glare else image.copy()),
                self._sidecar("settled", k, landed, glare=glare),
            )
        if throw.hand:
            for t in np.linspace(0.0, 1.0, 12):
                yield self._draw(landed, hand=t), self._sidecar("hand", k, landed, hidden=self._under_hand(landed, t))
            for _ in range(self.settled_frames // 2):
                yield image.copy(), self._sidecar("settled", k, landed)

    def _sidecar(
        self, phase: str, k: int, dice: list[dict[str, Any]], hidden: AbstractSet[int] = frozenset(), **extra: Any
    ) -> dict[str, Any]:
        shown = [d for i, d in enumerate(dice) if i not in hidden and d["centre"][0] > 0]  # off-frame: unseen
        return {"phase": phase, "throw": k, "dice": shown, **extra}

    def _places(self, n: int) -> list[tuple[float, float]]:
        """Resting centres inside the tray, no two dice touching."""
        width, height = self.size
        places: list[tuple[float, float]] = []
        gap = self.die * 1.9
        while len(places) < n:
            x = float(self._rng.uniform(width * 0.2, width * 0.85))
            y = float(self._rng.uniform(height * 0.2, height * 0.8))
            if all(np.hypot(x - px, y - py) > gap for px, py in places):
                places.append((x, y))
            gap *= 0.995  # a crowded tray: let the dice come a little closer rather than search forever
        return places

    def _die(self, cx: float, cy: float, face: int, status: str, angle: float, blur: bool = False) -> dict[str, Any]:
        half = self.die / 2 * (1.2 if status == "cocked" else 1.0)
        reach = half * (abs(np.cos(np.radians(angle))) + abs(np.sin(np.radians(angle))))
        box = [cx - reach, cy - reach, cx + reach, cy + reach]
        return {"face": face, "status": status, "box": box, "centre": (cx, cy), "angle": angle, "blur": blur}

    def _under_hand(self, dice: list[dict[str, Any]], t: float) -> set[int]:
        hx = -self.size[0] * 0.2 + t * self.size[0] * 1.4
        return {i for i, d in enumerate(dice) if abs(d["centre"][0] - hx) < self.size[0] * 0.12}

    # ------------------------------------------------------------------ drawing
    def _felt(self) -> npt.NDArray[np.uint8]:
        width, height = self.size
        rng = np.random.default_rng(self.seed + 2)
        felt = np.empty((height, width, 3), np.uint8)
        felt[:] = (40, 110, 30)
        grain = rng.normal(0, 6, (height, width, 1))
        felt = np.clip(felt + grain, 0, 255).astype(np.uint8)
        cv2.rectangle(felt, (width // 10, height // 10), (width * 9 // 10, height * 9 // 10), (20, 60, 110), 6)
        return felt

    def _draw(self, dice: list[dict[str, Any]], hand: float | None = None) -> npt.NDArray[np.uint8]:
        image = self._background.copy()
        for die in dice:
            self._paint_die(image, die)
        if hand is not None:
            width, height = self.size
            hx = int(-width * 0.2 + hand * width * 1.4)
            cv2.ellipse(image, (hx, height // 2), (width // 9, height // 3), 10, 0, 360, _SKIN, -1)
            for f in range(4):
                cv2.ellipse(image, (hx + width // 10, height // 4 + f * height // 10), (40, 12), 0, 0, 360, _SKIN, -1)
        return image

    def _paint_die(self, image: npt.NDArray[np.uint8], die: dict[str, Any]) -> None:
        (cx, cy), angle, half = die["centre"], die["angle"], self.die / 2
        cocked = die["status"] == "cocked"
        rot = cv2.getRotationMatrix2D((0, 0), angle, 1.0)[:, :2]
        corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]]) * (
            (1.25, 0.8) if cocked else 1
        )
        pts = (corners @ rot.T + (cx, cy)).astype(np.int32)
        cv2.fillConvexPoly(image, pts, (200, 215, 220) if cocked else (235, 240, 240), cv2.LINE_AA)
        cv2.polylines(image, [pts], True, (90, 90, 90), 1, cv2.LINE_AA)
        if cocked:
            return
        for u, v in _PIPS[die["face"]]:
            px, py = np.array([(u - 0.5) * 2 * half, (v - 0.5) * 2 * half]) @ rot.T + (cx, cy)
            cv2.circle(image, (int(px), int(py)), max(2, self.die // 11), (20, 20, 20), -1, cv2.LINE_AA)
        if die["blur"]:
            limits = (*self.size, *self.size)
            x1, y1, x2, y2 = (int(np.clip(v, 0, lim)) for v, lim in zip(die["box"], limits, strict=True))
            if x2 - x1 > 2 and y2 - y1 > 2:
                image[y1:y2, x1:x2] = cv2.blur(image[y1:y2, x1:x2], (7, 7))

    def _glare(self, image: npt.NDArray[np.uint8], die: dict[str, Any]) -> npt.NDArray[np.uint8]:
        out = image.copy()
        cx, cy = die["centre"]
        cv2.circle(out, (int(cx), int(cy)), max(3, self.die // 6), (255, 255, 255), -1, cv2.LINE_AA)
        return out

    # ------------------------------------------------------------------ reading
    def read(self, frame_bgr: npt.NDArray[np.uint8], /) -> Reading:
        """The reading of the frame last yielded: its sidecar's dice, with a real reader's noise."""
        rng, sidecar = self._noise, self.current
        self.reads += 1
        rows = []
        for i, die in enumerate(sidecar["dice"]):
            face, status, conf = die["face"], die["status"], float(rng.uniform(0.85, 0.99))
            if die["blur"]:  # a tumbling die: the classifier guesses
                face, conf = int(rng.integers(1, 7)), float(rng.uniform(0.3, 0.6))
            elif sidecar.get("glare") and i == 0:  # the glare frame: one confidently wrong face
                face = face % 6 + 1
            elif die.get("flicker"):  # alternates from one read to the next, however often it is read
                face = face if self.reads % 2 else face % 6 + 1
                conf = 0.7
            if status == "cocked":
                face = 0
            box = np.asarray(die["box"], np.float32) + rng.normal(0, 0.8, 4).astype(np.float32)
            rows.append((box, float(rng.uniform(0.8, 0.98)), face, conf, status))
        if not rows:
            return Reading.empty(self.size)
        return Reading(
            xyxy=np.array([r[0] for r in rows], np.float32),
            confidence=np.array([r[1] for r in rows], np.float32),
            face=np.array([r[2] for r in rows], np.int64),
            face_confidence=np.array([r[3] for r in rows], np.float32),
            status=np.array([DieStatus(r[4]).value for r in rows]),
            image_size=self.size,
        )
