"""Which way is down when the tray is not calibrated: the camera's vertical that lays the dice flat.

Under the right vertical most dice look flat to the cocked test, under a wrong one their
visible sides point the wrong way. So :func:`search_view` tries candidate nadirs (straight
down, tilted cameras in several directions, then a finer grid around the best) and keeps
the one under which the dice look flattest, leaving the most cocked-looking die out. The
focal length is assumed (:data:`farklecam.vision.pose.upright.DEFAULT_FOCAL`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.motion import CameraMotion
from farklecam.vision.detection.detector import LookMemory
from farklecam.vision.pose.upright import DEFAULT_FOCAL, UprightView, upright_angles
from farklecam.vision.tray.memory import FoundTray

if TYPE_CHECKING:
    from farklecam.vision.pose.cocked import CockedTest

__all__ = ["VerticalMemory", "ViewEstimate", "ViewSearchConfig", "candidate_views", "search_view"]


@dataclass(frozen=True, slots=True)
class ViewSearchConfig:
    """How the camera's vertical is searched for."""

    tilts_deg: tuple[float, ...] = (0.0, 15.0, 30.0)  #: camera tilts of the coarse grid (0: straight down), degrees
    azimuths: int = 8  #: directions of the coarse grid's tilted cameras, evenly spaced
    refine: int = 1  #: rounds of a 3 x 3 grid around the best view, each half as far apart as the last
    refine_step: float = 0.15  #: the first round's spacing, in the nadir's offset from the centre in focal lengths
    trim: float = 0.9  #: share of the dice, least cocked-looking first, whose mean scores a view
    min_dice: int = 3  #: fewest dice to search with (two would leave one to fit the view to)
    max_dice: int = 4  #: most dice (the detector's surest) that score the views
    focal: float = DEFAULT_FOCAL  #: focal length, in multiples of the picture's longer side
    max_score: float = 0.03  #: the estimate is trusted only when its score is at most this
    threshold: float = 0.9  #: cocked probability above which a die is cocked under a trusted estimate

    def __post_init__(self) -> None:
        if not self.tilts_deg or not all(0.0 <= t < 80.0 for t in self.tilts_deg):
            raise ValueError(f"tilts_deg must be angles in [0, 80), but got {self.tilts_deg!r}")
        if self.azimuths < 1 or self.refine < 0 or self.refine_step <= 0 or not 3 <= self.min_dice <= self.max_dice:
            raise ValueError("azimuths must be >= 1, refine >= 0, refine_step > 0 and 3 <= min_dice <= max_dice")
        if not 0.0 < self.threshold < 1.0 or self.max_score < 0.0:
            raise ValueError(f"threshold must be in (0, 1), max_score >= 0: got {self.threshold!r}, {self.max_score!r}")
        if not 0.0 < self.trim <= 1.0 or self.focal <= 0.0:
            raise ValueError(f"trim must be in (0, 1] and focal > 0, but got {self.trim!r}, {self.focal!r}")


@dataclass(frozen=True)
class ViewEstimate:
    """The vertical chosen, its ``score`` (mean cocked probability of the ``trim`` flattest dice), every die's."""

    view: UprightView
    score: float
    probabilities: npt.NDArray[np.float32]
    views_tried: int

    def trusted(self, cfg: ViewSearchConfig) -> bool:
        """Whether the dice agree clearly enough on this vertical to judge them under it (``max_score``)."""
        return self.score <= cfg.max_score


def _view(offset: npt.NDArray[np.float64], size: tuple[int, int], focal: float) -> UprightView:
    """The view whose nadir lies at ``offset`` (in focal lengths) from the picture's centre."""
    w, h = size
    principal = np.array([w / 2.0, h / 2.0])
    f = focal * max(w, h)
    return UprightView(nadir=principal + f * offset, focal=f, principal=principal)


def _coarse_offsets(cfg: ViewSearchConfig) -> list[npt.NDArray[np.float64]]:
    """Nadir offsets (tan tilt times direction) of the coarse grid."""
    offsets = []
    for tilt in cfg.tilts_deg:
        for k in range(cfg.azimuths if tilt > 0 else 1):
            a = 2.0 * math.pi * k / cfg.azimuths
            offsets.append(math.tan(math.radians(tilt)) * np.array([math.cos(a), math.sin(a)]))
    return offsets


def candidate_views(size: tuple[int, int], cfg: ViewSearchConfig | None = None) -> list[UprightView]:
    """The coarse grid's views for a picture of ``size`` = ``(width, height)``."""
    cfg = cfg or ViewSearchConfig()
    return [_view(o, size, cfg.focal) for o in _coarse_offsets(cfg)]


def search_view(
    test: CockedTest, frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike, cfg: ViewSearchConfig | None = None
) -> ViewEstimate | None:
    """The candidate view under which the dice (surest first) look flattest; None with fewer than ``min_dice``."""
    cfg = cfg or ViewSearchConfig()
    every = np.asarray(xyxy, np.float32).reshape(-1, 4)
    if len(every) < cfg.min_dice:
        return None
    boxes = every[: cfg.max_dice]
    n = len(boxes)
    size = (frame.shape[1], frame.shape[0])
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2.0
    keep = n - max(1, round((1.0 - cfg.trim) * n))  # at least one die may lean without steering the view
    tried: dict[tuple[float, float], tuple[float, npt.NDArray[np.float32]]] = {}

    def score(offsets: list[npt.NDArray[np.float64]]) -> None:
        new = [o for o in offsets if (round(o[0], 6), round(o[1], 6)) not in tried]
        if not new:
            return
        views = [_view(o, size, cfg.focal) for o in new]
        angles = np.concatenate([upright_angles(v, centres) for v in views])
        sines = np.concatenate([np.sin(v.view_tilt(centres)) for v in views])
        tiled = np.tile(boxes, (len(views), 1))
        probs = test.probabilities(frame, tiled, angles, sines, every).reshape(len(views), n)
        flattest = np.sort(probs, axis=1)[:, :keep].mean(axis=1)
        for o, s, p in zip(new, flattest, probs, strict=True):
            tried[(round(o[0], 6), round(o[1], 6))] = (float(s), p)

    score(_coarse_offsets(cfg))
    step = 2.0 * cfg.refine_step
    for _ in range(cfg.refine):
        step /= 2.0
        (bx, by), _best = min(tried.items(), key=lambda kv: kv[1][0])
        grid = [np.array([bx + dx * step, by + dy * step]) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
        score(grid)
    (bx, by), (best_score, best_probs) = min(tried.items(), key=lambda kv: kv[1][0])
    view = _view(np.array([bx, by]), size, cfg.focal)
    if len(every) > n:
        best_probs = np.concatenate([best_probs, test(frame, every[n:], view)])
    return ViewEstimate(view, best_score, best_probs, len(tried))


def _down_direction(view: UprightView) -> npt.NDArray[np.float64]:
    """The vertical as a unit vector in camera coordinates (x right, y down, z forward)."""
    d = np.append(view.nadir - view.principal, view.focal)
    unit: npt.NDArray[np.float64] = d / np.linalg.norm(d)
    return unit


class VerticalMemory:
    """One fixed camera's vertical, learned from its frames' dice or its tray; not thread-safe.

    A fixed camera's vertical does not change, so after ``needed`` trusted estimates agreeing
    within ``tolerance_deg`` (or one a tray gave) the memory holds their mean, used like a
    calibrated one. It searches again every ``recheck``-th read, starts over when one
    disagrees, doubts itself after a bump (:meth:`observe`), and after ``patience`` failed
    searches searches every ``retry``-th read only. :attr:`look` sizes this camera's dice.
    """

    def __init__(
        self,
        needed: int = 3,
        recheck: int = 30,
        tolerance_deg: float = 8.0,
        patience: int = 10,
        retry: int = 5,
        motion: CameraMotion | None = None,
    ) -> None:
        if min(needed, recheck, patience, retry) < 1 or not 0.0 < tolerance_deg < 90.0:
            raise ValueError("needed, recheck, patience and retry must be >= 1 and tolerance_deg in (0, 90)")
        self.needed, self.recheck, self.tolerance_deg = needed, recheck, tolerance_deg
        self.patience, self.retry = patience, retry
        self._agreeing: list[UprightView] = []
        self._known: UprightView | None = None
        self._reads = 0
        self._misses = 0
        self.motion = motion or CameraMotion()
        self._doubted = False
        #: Whether this camera's last frame with dice needed the detector's small-dice look.
        self.look = LookMemory()
        #: The tray the picture last gave, used again while the camera stays put.
        self.tray = FoundTray()

    @property
    def view(self) -> UprightView | None:
        """The learned vertical, or None while it is not known yet."""
        return self._known

    @property
    def doubted(self) -> bool:
        """Whether the camera seems to have moved since the vertical was learned, and no search has confirmed it."""
        return self._doubted

    def observe(self, frame: npt.NDArray[np.uint8]) -> None:
        """Show the memory the frame about to be read: a camera that moved puts the learned vertical in doubt."""
        if self.motion.moved(frame) and self._known is not None:
            self._doubted = True

    def search_due(self) -> bool:
        """Whether this read should search for the vertical (then :meth:`learn` or :meth:`miss`); counts reads."""
        self._reads += 1
        if self._known is not None:
            return self._doubted or self._reads % self.recheck == 0
        return self._misses < self.patience or self._reads % self.retry == 0

    def miss(self) -> None:
        """A search of this camera gave no trusted estimate."""
        self._misses += 1

    def learn(self, view: UprightView) -> None:
        """A trusted estimate from one frame."""
        self._misses, self._doubted = 0, False
        if self._agreeing and not self._agrees(view, self._agreeing[0]):
            self._agreeing, self._known = [], None  # the camera moved: start over
        self._agreeing = [*self._agreeing[-(self.needed - 1) :], view] if self.needed > 1 else [view]
        if len(self._agreeing) >= self.needed:
            self._known = self._mean(self._agreeing)

    def forget(self) -> None:
        """Start over (a new camera, or one that was moved)."""
        self._agreeing, self._known, self._reads, self._misses, self._doubted = [], None, 0, 0, False
        self.motion.reset()

    def _agrees(self, a: UprightView, b: UprightView) -> bool:
        cos = float(np.clip(_down_direction(a) @ _down_direction(b), -1.0, 1.0))
        return math.degrees(math.acos(cos)) <= self.tolerance_deg

    @staticmethod
    def _mean(views: Sequence[UprightView]) -> UprightView:
        """The view whose vertical is the mean of theirs (same picture, focal and principal point)."""
        d = np.mean([_down_direction(v) for v in views], axis=0)
        f, c = views[0].focal, views[0].principal
        return UprightView(nadir=c + f * d[:2] / d[2], focal=f, principal=c)
