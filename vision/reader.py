"""The dice reader: :class:`DiceReader` turns a frame into a :class:`Reading`; :class:`ReaderConfig` its settings.

Per frame: detection, face classification (which also vetoes boxes that are no die), the
tray and its off-tray calls, the cocked test under the camera's vertical, and one status
per die::

    DiceReader().read_path("examples/roll.jpg").faces  # (1, 5, 5)
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import importlib.resources
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import ImageError, ProfileError, VisionError
from farklecam.vision.detection.detector import CloserLook, DieDetector
from farklecam.vision.faces.classifier import VIEWS_SURE, FaceClassifier, FaceScores
from farklecam.vision.faces.symbols import symbol_faces
from farklecam.vision.images import decode_image, load_image
from farklecam.vision.onnx_runtime import OnnxModel, load_onnx
from farklecam.vision.pose.cocked import CockedFusion, CockedJudge, CockedTest
from farklecam.vision.pose.upright import UprightView, straight_down_view, upright_view
from farklecam.vision.pose.view_search import VerticalMemory, ViewSearchConfig
from farklecam.vision.profiles.adapter import ProfileAdapter
from farklecam.vision.profiles.profile import Profile
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.tray.detect import detect_tray, tray_from_aruco
from farklecam.vision.tray.memory import MarkedTrays
from farklecam.vision.tray.outline import TrayOutline, footprint_inside
from farklecam.vision.tray.trust import off_tray_calls

__all__ = [
    "CLASSIFIER_FILE",
    "COCKED_TEST_FILE",
    "CUT_DIE_MARGIN_PX",
    "DETECTOR_FILE",
    "MERGED_AREA",
    "MERGED_ASPECT",
    "DiceReader",
    "ReaderConfig",
    "as_bgr_frame",
    "config_override",
    "default_model_dir",
    "fusion_for",
    "looks_merged",
    "near_picture_edge",
]

#: File names of the models inside a model folder (see docs/model-contract.md); the cocked test is optional.
DETECTOR_FILE = "die_detector.onnx"
CLASSIFIER_FILE = "face_classifier.onnx"
COCKED_TEST_FILE = "cocked_test.onnx"
#: A die whose box comes within this many pixels of the picture's edge is cut by it.
CUT_DIE_MARGIN_PX = 2.0


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """What a user or a deployment may set about a read; the constants that tune each step live with their code."""

    det_conf: float | None = None  #: minimum detector score for a die; None: the model's own recommendation
    face_min_conf: float = 0.6  #: classifier confidence under which a face reads ``uncertain``
    cocked_min_conf: float = 0.5  #: confidence needed to call a die ``cocked`` (else ``uncertain``)
    off_tray_min_inside: float = 0.5  #: share of a die's footprint that must lie inside the tray
    face_views: int = 4  #: quarter turns of each crop the classifier averages (1, 2, 4 or 8)
    cocked_test: bool = True  #: judge leaning dice with the model folder's cocked test, where it has one
    vertical_search: bool = True  #: with no tray marked, find the camera's vertical from the dice themselves
    straight_down: bool = False  #: the camera looks straight down at the dice (an overhead rig)
    straight_down_check_deg: float | None = (
        10.0  #: doubt ``straight_down`` where the dice agree on a vertical this far off
    )
    auto_tray: bool = True  #: look for the tray in every frame when no outline was given
    aruco: bool = False  #: look for ArUco corner markers in every frame
    threads: int | None = None  #: onnxruntime intra-op threads (None: automatic)

    def __post_init__(self) -> None:
        for name in ("det_conf", "face_min_conf", "cocked_min_conf", "off_tray_min_inside"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in 0..1, but got {value!r}")
        if self.face_views not in (1, 2, 4, 8):
            raise ValueError(f"face_views must be 1, 2, 4 or 8, but got {self.face_views!r}")
        if self.straight_down_check_deg is not None and not 0.0 < self.straight_down_check_deg < 90.0:
            raise ValueError(f"straight_down_check_deg must be in (0, 90), but got {self.straight_down_check_deg!r}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be >= 1 or None, but got {self.threads!r}")


def config_override(text: str) -> tuple[str, object]:
    """``FIELD=VALUE`` (a :class:`ReaderConfig` field, a Python literal) -> ``(field, value)``, for ``--set``."""
    field, _, value = text.partition("=")
    names = {f.name for f in dataclasses.fields(ReaderConfig)}
    if field not in names:
        raise ValueError(f"{field!r} is no ReaderConfig field; one of {', '.join(sorted(names))}")
    try:
        return field, ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"{value!r} is not a Python literal (e.g. 0.9, None, True)") from exc


#: A box this many times longer than wide, and this many times the median area of the others, holds two dice.
MERGED_ASPECT = 1.6
MERGED_AREA = 1.5


def looks_merged(xyxy: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Which boxes look like two touching dice taken for one: elongated and larger than the rest.

    A die seen from above fills a near-square box whatever its face; two side by side fill one
    about twice as long as wide. Larger than the median of the other boxes, so that a frame of
    one die, or of dice all seen at a slant, is not doubted.
    """
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    n = len(boxes)
    if n < 2:
        return np.zeros(n, bool)
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    aspect = np.maximum(w, h) / np.maximum(np.minimum(w, h), 1e-6)
    area = w * h
    others = np.array([np.median(np.delete(area, i)) for i in range(n)])
    return np.asarray((aspect >= MERGED_ASPECT) & (area >= MERGED_AREA * others), bool)


@functools.lru_cache(maxsize=16)
def _tray_view(corners: bytes, image_size: tuple[int, int], corner_sigma_px: float) -> UprightView | None:
    """The view a calibrated tray gives (its corners as float32 bytes), cached: the corners stay frame after frame."""
    return upright_view(np.frombuffer(corners, np.float32).reshape(-1, 2), image_size, corner_sigma_px)


def fusion_for(test: CockedTest | None, classifier: object) -> CockedFusion | None:
    """The cocked test's fusion where it was fitted with this very classifier (same ``train_config_sha``), else None."""
    if test is None or test.fusion is None:
        return None
    model = getattr(classifier, "model", None)
    metadata = getattr(model, "metadata", None)
    sha = metadata.get("train_config_sha") if isinstance(metadata, dict) else None
    return test.fusion if sha == test.fusion.classifier_sha else None


def near_picture_edge(
    xyxy: npt.ArrayLike, image_size: tuple[int, int], margin: float | npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Which boxes (n, 4) come within ``margin`` pixels (one, or one per box) of the picture's edge: cut dice."""
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    pad = np.broadcast_to(np.asarray(margin, np.float32), (len(boxes),))
    width, height = image_size
    return np.asarray(
        (boxes[:, 0] <= pad) | (boxes[:, 1] <= pad) | (boxes[:, 2] >= width - pad) | (boxes[:, 3] >= height - pad),
        dtype=bool,
    )


def default_model_dir() -> Path:
    """The folder of the models shipped as package data in :mod:`farklecam.models`."""
    return Path(str(importlib.resources.files("farklecam.models")))


def as_bgr_frame(frame: npt.NDArray[np.generic]) -> npt.NDArray[np.uint8]:
    """Accept a BGR, BGRA or grey uint8 frame; return contiguous BGR.

    Raises:
        ImageError: not a uint8 image array.
    """
    if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8:
        raise ImageError(f"frame must be a uint8 np.ndarray, but got {type(frame).__name__}")
    image = np.asarray(frame, dtype=np.uint8)
    if image.ndim == 2:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
    if image.ndim == 3 and image.shape[2] == 4:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2BGR), dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) == 0:
        raise ImageError(f"frame must have shape (h, w, 3), but got shape {image.shape}")
    return np.ascontiguousarray(image)


class DiceReader:
    """Reads every die in a frame: face, box, confidence and status.

    ``model_dir`` holds the models (None: the installed ones); ``tray`` is a calibrated outline
    (or its corners) for every frame, None to find one per frame. ``detector``, ``classifier``
    and ``cocked_test`` replace the folder's models. ``profile`` is a table's profile: its
    taught dice vote on every face and leaning call (:meth:`with_profile`).

    Raises:
        ModelLoadError: a model file is missing, corrupt or breaks the model contract.
        ProfileError: a profile with a classifier that gives no features.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        tray: TrayOutline | Sequence[Sequence[float]] | None = None,
        config: ReaderConfig | None = None,
        detector: Callable[[npt.NDArray[np.uint8]], Reading] | None = None,
        classifier: Callable[[npt.NDArray[np.uint8], npt.NDArray[np.float32]], FaceScores] | None = None,
        cocked_test: CockedTest | None = None,
        profile: Profile | None = None,
    ) -> None:
        self.config = config or ReaderConfig()
        root = Path(model_dir) if model_dir is not None else default_model_dir()
        cfg = self.config

        def open_model(name: str) -> OnnxModel:
            return load_onnx(root / name, threads=cfg.threads)

        self.detector: Callable[[npt.NDArray[np.uint8]], Reading] = detector or DieDetector(
            open_model(DETECTOR_FILE),
            conf=cfg.det_conf,
            closer=CloserLook(),
        )
        self.classifier: Callable[[npt.NDArray[np.uint8], npt.NDArray[np.float32]], FaceScores] = (
            classifier
            or FaceClassifier(
                open_model(CLASSIFIER_FILE),
                views=cfg.face_views,
                sure=VIEWS_SURE,
            )
        )
        if cocked_test is None and cfg.cocked_test and (root / COCKED_TEST_FILE).is_file():
            cocked_test = CockedTest(open_model(COCKED_TEST_FILE))
        self.cocked_test = cocked_test if cfg.cocked_test else None
        #: The test's fitted fusion with this classifier's cocked probability (None: the test decides alone).
        self.fusion = fusion_for(self.cocked_test, self.classifier)
        self.tray = tray if isinstance(tray, TrayOutline) or tray is None else TrayOutline.from_corners(tray)
        #: Marked trays' snaps to the picture's edges and watches for a moved camera, shared by this reader's copies.
        self._marked = MarkedTrays()
        #: Whether the last read set the calibrated tray aside because the picture moved since its first frame.
        self.tray_moved = False
        self.vertical_memory: VerticalMemory | None = None
        #: The table's profile bound to this reader's classifier (None: the classifier's own calls).
        self.profile: ProfileAdapter | None = None
        if profile is not None:
            self.profile = self.bind_profile(profile)

    def bind_profile(self, profile: Profile) -> ProfileAdapter:
        """``profile`` bound to this reader's classifier: what corrections go through and reads consult.

        Raises:
            ProfileError: the classifier is a stand-in, or its model gives no features.
        """
        if not isinstance(self.classifier, FaceClassifier):
            raise ProfileError("a profile needs the reader's own ONNX face classifier, not a stand-in")
        return ProfileAdapter(profile, self.classifier)

    def with_profile(self, profile: Profile | ProfileAdapter | None) -> DiceReader:
        """The same reader (same loaded models) whose face and leaning calls heed a table's profile (None: none).

        Raises:
            ProfileError: the classifier gives no features to compare.
        """
        other = copy.copy(self)
        other.profile = (
            profile if isinstance(profile, ProfileAdapter) or profile is None else self.bind_profile(profile)
        )
        return other

    def with_vertical_memory(self, memory: VerticalMemory | None) -> DiceReader:
        """The same reader, learning one fixed camera's vertical in ``memory`` (one memory per camera)."""
        other = copy.copy(self)
        other.vertical_memory = memory
        return other

    def with_tray(self, tray: TrayOutline | Sequence[Sequence[float]] | None) -> DiceReader:
        """The same reader (same loaded models) with another calibrated tray outline."""
        other = copy.copy(self)
        other.tray = tray if isinstance(tray, TrayOutline) or tray is None else TrayOutline.from_corners(tray)
        return other

    def with_straight_down(self, on: bool) -> DiceReader:
        """The same reader (same loaded models) for a camera that does, or does not, look straight down."""
        if on == self.config.straight_down:
            return self
        other = copy.copy(self)
        other.config = dataclasses.replace(self.config, straight_down=on)
        return other

    def with_detector(self, detector: Callable[[npt.NDArray[np.uint8]], Reading]) -> DiceReader:
        """The same reader with another detector (e.g. labelled boxes, to measure the rest alone)."""
        other = copy.copy(self)
        other.detector = detector
        return other

    @property
    def cocked_judge(self) -> CockedJudge | None:
        """The cocked test with this reader's fusion and search settings (None without a test), made per read."""
        if self.cocked_test is None:
            return None
        search = ViewSearchConfig() if self.config.vertical_search else None
        return CockedJudge(self.cocked_test, self.fusion, search)

    def calibrate(self, frame: npt.NDArray[np.uint8]) -> DiceReader:
        """A reader whose tray is found once, in this frame (ArUco markers, else the picture), and then kept.

        Raises:
            ImageError: ``frame`` is not an image array.
            VisionError: no tray could be found in the frame.
        """
        frame = as_bgr_frame(frame)
        outline = tray_from_aruco(frame) or detect_tray(frame, self.detector(frame).xyxy, find_sides=True)
        if outline is None:
            raise VisionError("no tray found in the calibration frame; give its four corners instead")
        return self.with_tray(outline)

    def find_tray(self, frame: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32]) -> TrayOutline | None:
        """The tray for this frame: the calibrated one (clicks snapped to its edges), else markers, else the picture.

        A calibrated tray is set aside while the picture has moved since its first frame (:attr:`tray_moved`).
        """
        self.tray_moved = self.tray is not None and self._marked.moved(self.tray, frame)
        if self.tray is not None and not self.tray_moved:
            if self.tray.source == "corners":
                return self._marked.snapped(self.tray, frame)
            return self.tray
        outline = tray_from_aruco(frame) if self.config.aruco else None
        if outline is None and self.config.auto_tray:
            if self.vertical_memory is not None:  # one camera's stream: its tray does not move between reads
                return self.vertical_memory.tray.outline(frame, lambda: detect_tray(frame, xyxy, find_sides=True))
            outline = detect_tray(frame, xyxy, find_sides=True)
        return outline

    def read(
        self, frame: npt.NDArray[np.uint8], *, frame_index: int | None = None, timestamp: float | None = None
    ) -> Reading:
        """Read every die in one BGR (or grey, or BGRA) frame, in detector order.

        Raises:
            ImageError: ``frame`` is not an image array.
            ModelLoadError: a model rejected its input.
        """
        frame = as_bgr_frame(frame)
        if self.vertical_memory is not None and isinstance(self.detector, DieDetector):
            found = self.detector(frame, self.vertical_memory.look)  # one camera's stream: its dice's size
        else:
            found = self.detector(frame)
        scores = self.classifier(frame, found.xyxy)
        if self.profile is not None:
            scores = self.profile.adapt(scores)
        keep = ~scores.not_die
        if not keep.all():
            found, scores = found[keep], scores[keep]
        vouched = self.profile.vouched_faces(scores) if self.profile is not None else None
        tray = self.find_tray(frame, found.xyxy)
        size = (frame.shape[1], frame.shape[0])
        corners = tray.vertical_corners if tray is not None else None
        view = None
        if tray is not None and corners is not None:
            view = _tray_view(corners.tobytes(), size, tray.corner_sigma_px)
            if view is not None and self.vertical_memory is not None:
                self.vertical_memory.learn(view)  # the camera's vertical, for its frames where the tray is not found
        straight_down = view is None and self.config.straight_down
        if straight_down:
            view = straight_down_view(size)
        cocked_min_conf = self.config.cocked_min_conf
        judge = self.cocked_judge
        judged = judge.call(frame, found.xyxy, view, scores, self.vertical_memory) if judge and len(found) else None
        doubted = False
        if judge is not None and straight_down and judged is not None and judged.cocked.any():
            limit = self.config.straight_down_check_deg
            judged, doubted = judge.check_straight_down(frame, found.xyxy, judged, scores, limit)
        if view is None and judged is not None and judged.decisive:
            view = judged.view  # a searched or learned vertical the test decided under also places the bases
        inside = (
            footprint_inside(found.xyxy, tray.base_bound, view=view)
            if tray is not None
            else np.ones(len(found), np.float32)
        )
        trust, off = off_tray_calls(frame, tray, found.xyxy, inside, self.config.off_tray_min_inside)
        if judged is not None and judged.decisive:
            # The test's threshold decides; its probability is the cocked confidence.
            scores = scores.with_cocked(judged.cocked, judged.probability)
            cocked_min_conf = min(cocked_min_conf, judged.threshold)
        elif judged is not None:
            # Under a vertical the dice do not clearly agree on, the test only vetoes: a die the
            # classifier calls cocked and the test does not back is read as lying flat.
            scores = scores.flat(scores.cocked & ~judged.cocked)
        cut = near_picture_edge(found.xyxy, size, CUT_DIE_MARGIN_PX)
        face, face_conf, status, data = self._decide(
            frame, found.xyxy, scores, inside, off, cocked_min_conf, cut, vouched
        )
        return dataclasses.replace(
            found,
            face=face,
            face_confidence=face_conf,
            status=status,
            tray=None if tray is None else tray.polygon,
            tray_set_aside=self.tray_moved,
            tray_state=trust.value,
            straight_down_doubted=doubted,
            frame_index=frame_index,
            timestamp=timestamp,
            data=data,
        )

    def _decide(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        scores: FaceScores,
        inside: npt.NDArray[np.float32],
        off: npt.NDArray[np.bool_],
        cocked_min_conf: float,
        cut: npt.NDArray[np.bool_],
        vouched: npt.NDArray[np.int64] | None = None,
    ) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.str_], dict[str, npt.NDArray[np.generic]]
    ]:
        """Combine the classifier's scores and the tray into faces, confidences and statuses.

        A die the picture's edge cuts may lean on something out of view: not cocked, ``uncertain``.
        """
        n = len(xyxy)
        data: dict[str, npt.NDArray[np.generic]] = {"cocked": scores.cocked.copy(), "in_tray": inside}
        doubted = scores.cocked & cut
        if doubted.any():
            scores = scores.flat(doubted)
            data["cocked"] = scores.cocked.copy()
        face, face_conf = scores.face.copy(), scores.confidence.copy()
        status = np.full(n, DieStatus.OK.value, dtype="<U9")
        status[face_conf < self.config.face_min_conf] = DieStatus.UNCERTAIN.value
        cocked = scores.cocked & (face_conf >= cocked_min_conf)
        status[cocked] = DieStatus.COCKED.value
        status[scores.cocked & ~cocked] = DieStatus.UNCERTAIN.value
        status[doubted] = DieStatus.UNCERTAIN.value
        status[off] = DieStatus.OFF_TRAY.value
        # A symbol face (a logo 6, a skull 1) is no number: a person must look at it.
        symbol = np.zeros(n, bool)
        scored = status == DieStatus.OK.value
        if scored.any():
            symbol[scored] = symbol_faces(frame, xyxy[scored])
        if vouched is not None:  # a face this table taught is a number here, however it is drawn
            symbol &= vouched != face
        status[symbol] = DieStatus.UNCERTAIN.value
        data["symbol"] = symbol
        # A flat die's box is near square; one twice as long as wide and larger than its fellows
        # most likely holds two touching dice, which are never scored as one.
        merged = (status == DieStatus.OK.value) & looks_merged(xyxy)
        status[merged] = DieStatus.UNCERTAIN.value
        data["merged"] = merged
        return face, face_conf.astype(np.float32), status, data

    def read_path(self, path: str | Path) -> Reading:
        """Load an image file and read it (:class:`ImageError` for a bad file)."""
        return self.read(load_image(path))

    def read_bytes(self, data: bytes, source: str = "<upload>") -> Reading:
        """Decode image bytes (an upload) and read them (:class:`ImageError` for bad bytes)."""
        return self.read(decode_image(data, source))
