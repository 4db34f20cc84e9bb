"""The dice reader: one object, built once, that turns a frame into a :class:`Reading`.

``DiceReader`` loads the models once (opening an ONNX session costs far more
than a read) and then runs, per frame: detection, crops from the full
resolution frame, face classification (which also vetoes detections that are
no die), the tray outline, the cocked test on crops turned upright (where the
tray is known and the model folder has ``cocked_test.onnx``), the pip
counter's second opinion, and finally one status per die.

Example:
    >>> reader = DiceReader()
    >>> reading = reader.read_path("examples/roll.jpg")
    >>> reading.faces, reading.rethrow
    ((1, 5, 5), 0)
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import ImageError, ModelLoadError, VisionError
from vision.camera_motion import CameraMotion
from vision.cocked import CockedFusion, CockedTest
from vision.detector import DieDetector, SmallDiceLook
from vision.faces import FaceClassifier, FaceScores
from vision.images import decode_image, load_image
from vision.onnx_runtime import OnnxModel, load_onnx
from vision.pips import count_pips_in_boxes, pip_posterior
from vision.reading import DieStatus, Reading
from vision.support import may_lean, near_picture_edge
from vision.tray import TrayOutline, footprint_inside
from vision.tray_detect import detect_tray, tray_from_aruco
from vision.tray_sides import snap
from vision.upright import UprightView, straight_down_view, upright_view
from vision.view_search import VerticalMemory, ViewSearchConfig, search_view

__all__ = [
    "CLASSIFIER_FILE",
    "COCKED_TEST_FILE",
    "DETECTOR_FILE",
    "DiceReader",
    "ReaderConfig",
    "as_bgr_frame",
    "config_override",
    "default_model_dir",
    "fusion_for",
]

#: Frames on which clicked corners are tried against the picture's edges before they are used as clicked.
_SNAP_TRIES = 5
#: Trays whose snapping a reader remembers (a server sees a few tables' corners).
_SNAP_CACHE = 64
#: Calibrated trays that come from a frame of the camera and go stale when it moves.
_WATCHED_SOURCES = ("corners", "aruco")
#: A marked tray's watch looks at one read in this many (:class:`_TrayWatch`).
_WATCH_EVERY = 4

#: File names of the models inside a model folder (see docs/model-contract.md); the cocked test is optional.
DETECTOR_FILE = "die_detector.onnx"
CLASSIFIER_FILE = "face_classifier.onnx"
COCKED_TEST_FILE = "cocked_test.onnx"


class _TrayWatch:
    """A marked tray's watch for a bumped camera, looking every :data:`_WATCH_EVERY` reads.

    Comparing a frame with the tray's first one costs about 1.5 ms (thumbnails, two phase
    correlations, a log-polar spectrum), a tenth of a read; a bump is still caught within a
    few reads, and a table reads only a few times per throw. The reads in between keep the
    last verdict.
    """

    def __init__(self, motion: CameraMotion) -> None:
        self.motion, self.reads, self.verdict = motion, 0, False

    def moved(self, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether the picture has moved since the first frame, as last looked at."""
        if self.reads % _WATCH_EVERY == 0:
            self.verdict = self.motion.moved(frame)
        self.reads += 1
        return self.verdict


@functools.lru_cache(maxsize=16)
def _tray_view(corners: bytes, image_size: tuple[int, int], corner_sigma_px: float) -> UprightView | None:
    """The view a calibrated tray gives, from its corners' float32 bytes and how far they may be off.

    The corners are the same frame after frame, so the vanishing-point algebra
    runs once per tray and picture size instead of once per read.
    """
    return upright_view(np.frombuffer(corners, np.float32).reshape(-1, 2), image_size, corner_sigma_px)


def fusion_for(test: CockedTest | None, classifier: object) -> CockedFusion | None:
    """The cocked test's fusion, where it was fitted with this very classifier (same ``train_config_sha``).

    A fusion's weights describe one classifier's cocked probabilities; under a retrained one
    they would be wrong, so the test then decides alone (as before the fusion existed).
    """
    if test is None or test.fusion is None:
        return None
    model = getattr(classifier, "model", None)
    metadata = getattr(model, "metadata", None)
    sha = metadata.get("train_config_sha") if isinstance(metadata, dict) else None
    return test.fusion if sha == test.fusion.classifier_sha else None


def default_model_dir() -> Path:
    """The installed ``models/`` package folder, found without importing it.

    Importing ``models`` could pull in training code; only its location is needed.
    """
    spec = importlib.util.find_spec("models")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError("the 'models' package is not installed; pass model_dir explicitly")
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class _CockedCall:
    """The cocked test's word on each die: its calls, probabilities and threshold, and whether it decides.

    ``view`` is the vertical a decisive call was made under; it also places each die's
    base for the off-tray test (:func:`vision.tray.footprint_inside`).
    """

    cocked: npt.NDArray[np.bool_]
    probability: npt.NDArray[np.float32]
    threshold: float
    decisive: bool
    view: UprightView | None = None


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """Thresholds of the reader, in one validated place.

    Attributes:
        det_conf: minimum detector score for a die; None for the model's recommendation
            (see :class:`vision.detector.DieDetector`).
        det_iou: NMS overlap above which two boxes are one die.
        small_dice_imgsz: where the dice the detector finds have a median side under
            ``small_dice_side_px`` at its own input size (320), read the frame again with
            the detector at this size and keep what it finds there
            (:class:`vision.detector.SmallDiceLook`); None reads each frame once. Chosen by a
            rule written first (``models/HISTORY.md``): on the calibration scenes it found
            more dice (recall 0.9946 against 0.9933) and read them better (exact 0.884
            against 0.881, cocked F1 0.850 against 0.836), and it found the one real
            validation die missed at 320 (``python -m models.candidate --set
            small_dice_imgsz=None --no-gate`` measures it again). Frames of larger dice
            (a webcam over a tray) pay nothing; those it reads again pay a second detector
            run on 1.7 times the pixels.
        small_dice_side_px: that median side, in the detector's input pixels (24: about a
            third of generated scenes and most phone photos of a whole box).
        face_min_conf: classifier confidence below which a face is ``uncertain``.
        cocked_min_conf: confidence needed to call a die ``cocked`` (else ``uncertain``).
        use_pips: run the pip counter as a second opinion on every die (about 0.5-1 ms a
            die). Off by default: with classifiers trained on real and generated dice it
            gave no net gain on held-out real photos (``python -m vision.evaluate --pips on``
            measures it again for a new model).
        pip_reliability: how often a fully confident pip count is right (see
            :func:`vision.pips.pip_posterior`).
        off_tray_min_inside: share of a die's footprint that must lie inside the tray.
        auto_tray: look for the tray in every frame when no outline was given.
        tray_sides: fit a found tray's sides at full resolution and, where they can be
            trusted, draw the camera's vertical from them as from calibrated corners
            (:mod:`vision.tray_sides`). Off by default: the vertical is right (0.25 degrees
            from the true corners' at the median), but under it the cocked test called real
            flat dice cocked (``models/HISTORY.md``).
        corner_sigma_px: how far the tray's corners may be off, in pixels, when the camera's
            vertical is drawn from them (:func:`vision.upright.focal_from_corners`); None takes
            it from where the outline came from (:data:`vision.tray.CORNER_SIGMA_PX`: 2 px for
            clicked corners, 0 for a generated scene's labels).
        snap_corners: fit the sides of a tray given by its corners to the picture's edges near
            them (:func:`vision.tray_sides.snap`, tried on the first few frames until it holds)
            and draw the camera's vertical from those: clicks are a few pixels off.
        watch_tray: compare each frame with the first one read with a calibrated tray (clicked
            corners or ArUco markers) and, while the picture has shifted or turned since (a
            bumped camera, :mod:`vision.camera_motion`), read as if no tray had been given
            (found in the picture, the vertical searched) rather than with corners in the
            wrong place; :attr:`DiceReader.tray_moved` says so, for a notice to mark them again.
        aruco: look for ArUco corner markers in every frame when no outline was given
            (about 5 ms a frame; :meth:`DiceReader.calibrate` looks once instead).
        threads: onnxruntime intra-op threads (None: automatic).
        ort_spin: onnxruntime's worker threads busy-wait between operators while a model
            runs, and sleep once it returns (:func:`vision.onnx_runtime.load_onnx`'s ``spin``).
        face_views: views of each crop the classifier averages (1, 2, 4 or 8; see
            :meth:`vision.faces.FaceClassifier.classify_crops`). Four quarter turns cost
            about 1 ms for three dice; they were chosen with the cocked offset on the
            calibration scenes (``python -m models.calibrate``: cocked F1 0.365 against
            0.349 with one view). On the held-out real photos no die they marked ok had a
            wrong face (one view: 98.1 % and 99.6 % of them right).
        face_views_sure: a die whose first view the classifier reads as a face with this
            probability or more skips the other views (None: every die gets them all). They
            only change the read where the first view is unsure, and cost most of its time:
            at 0.9 (the classifier, trained with label smoothing, tops out near 0.96) the
            calibration scenes and the real validation photos read exactly as with every
            view, and a calibrated read of the two-dice webcam example took 14.3 against
            15.8 ms (``python bench/read_speed.py --compare-config face_views_sure=None``).
        face_context_offsets: also cut each die with this much more (or less) context
            around its box than the classifier was trained with, and average, as with
            views. Off by default: offsets of -0.05, 0 and +0.05 read the calibration
            scenes no better (face accuracy 0.9655 against 0.9660, exact 0.895 against
            0.893) and cost three times the classifier's time; on the held-out real
            photos they read two more byler dice right (``python -m vision.evaluate
            --context-offsets=-0.05,0,0.05``), which the held-out sets alone cannot choose.
        cocked_needs_support: let a die on the tray's floor be cocked only where something
            could hold it tilted (another die, the tray's wall, the picture's edge; see
            :mod:`vision.support`); elsewhere it reads as its best face.
        cut_die_margin_px: a die whose box comes within this many pixels of the picture's
            edge is never called cocked: part of it, and whatever it may lean on, is out of
            view, so it reads ``uncertain`` (its best face kept) for the player to look at;
            None lets the cocked test decide on what is in view. Chosen by a rule written
            first (``models/HISTORY.md``): on the calibration scenes cocked precision 0.825
            against 0.800 and recall 0.883 against 0.906 (F1 0.853 against 0.850; three cut
            leaning dice now read uncertain), the validation photos read the same
            (``python -m models.candidate --set cut_die_margin_px=None --no-gate``).
        drop_not_die: drop detections the classifier reads as "not a die" (only for a
            classifier with that class; see :mod:`vision.faces`).
        cocked_test: let the cocked test (:mod:`vision.cocked`) decide which dice lean,
            where the camera's vertical is known from the tray (its corners given, snapped to
            its edges or from ArUco markers, or with ``tray_sides`` the fitted sides of an
            outline found in the picture: see :attr:`TrayOutline.vertical_corners`) and the
            model folder has one.
        cocked_fusion: where the cocked test decides under a calibrated vertical, or a
            searched one the frame's dice agree on, combine
            it with the face classifier's cocked probability as the test's fitted
            :class:`vision.cocked.CockedFusion` says (if it has one for this classifier).
        straight_down: the camera looks straight down at the dice (an overhead rig): where no
            calibrated tray gives the vertical, the picture's centre is the nadir
            (:func:`vision.upright.straight_down_view`) and the cocked test decides under it,
            with no search. Only for a camera within about 5 degrees of straight down: on the
            calibration scenes it called 1.4 % of flat dice cocked where the camera was 0-5
            degrees off, 3 % at 5-10, 5 % at 10-15 and 21-69 % beyond (a tilted camera
            should have its tray's corners marked instead; ``straight_down_check_deg``
            catches most of those).
        straight_down_check_deg: with ``straight_down``, where the test calls a die cocked
            under the picture's centre, search the vertical as for an unmarked tray
            (:func:`vision.view_search.search_view`); if the dice clearly agree on one more
            than this many degrees off straight down, the camera is not looking straight
            down and the frame is read under the searched vertical
            (:attr:`Reading.straight_down_doubted` says so). None trusts the setting. At 10
            degrees, on the calibration scenes (``python bench/straight_down.py
            data/calib_synth --check 8 10 12 15``), it called 170 of 1684 flat dice cocked
            under cameras more than 10 degrees off, against 639 as said, and under cameras
            within 10 degrees 34 of 1934 (36) while finding 59 of 71 leaning dice (60). On the
            byler validation photos (a phone held over the dice) it called the same 2 of 213
            flat dice cocked as the setting alone.
        view_search: where the tray's corners are not known, find the camera's vertical
            from the dice themselves (:mod:`vision.view_search`) and run the cocked test
            under it; None keeps the face classifier's own cocked call there.
    """

    det_conf: float | None = None
    det_iou: float = 0.5
    small_dice_imgsz: int | None = 416
    small_dice_side_px: float = 24.0
    face_min_conf: float = 0.6
    cocked_min_conf: float = 0.5
    use_pips: bool = False
    pip_reliability: float = 0.6
    off_tray_min_inside: float = 0.5
    auto_tray: bool = True
    tray_sides: bool = False
    corner_sigma_px: float | None = None
    snap_corners: bool = True
    watch_tray: bool = True
    aruco: bool = False
    threads: int | None = None
    ort_spin: bool = True
    drop_not_die: bool = True
    face_views: int = 4
    face_views_sure: float | None = 0.9
    face_context_offsets: tuple[float, ...] = (0.0,)
    cocked_needs_support: bool = True
    cut_die_margin_px: float | None = 2.0
    cocked_test: bool = True
    cocked_fusion: bool = True
    straight_down: bool = False
    straight_down_check_deg: float | None = 10.0
    view_search: ViewSearchConfig | None = dataclasses.field(default_factory=ViewSearchConfig)

    def __post_init__(self) -> None:
        for name in (
            "det_conf",
            "det_iou",
            "face_min_conf",
            "cocked_min_conf",
            "pip_reliability",
            "off_tray_min_inside",
        ):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in 0..1, but got {value!r}")
        if self.face_views not in (1, 2, 4, 8):
            raise ValueError(f"face_views must be 1, 2, 4 or 8, but got {self.face_views!r}")
        if self.straight_down_check_deg is not None and not 0.0 < self.straight_down_check_deg < 90.0:
            raise ValueError(f"straight_down_check_deg must be in (0, 90), but got {self.straight_down_check_deg!r}")
        if self.cut_die_margin_px is not None and self.cut_die_margin_px < 0:
            raise ValueError(f"cut_die_margin_px must be >= 0 or None, but got {self.cut_die_margin_px!r}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be >= 1 or None, but got {self.threads!r}")
        _ = self.small_dice_look  # raises ValueError when out of range

    @property
    def small_dice_look(self) -> SmallDiceLook | None:
        """The detector's second look these settings ask for, or None (``small_dice_imgsz`` None)."""
        if self.small_dice_imgsz is None:
            return None
        return SmallDiceLook(self.small_dice_imgsz, self.small_dice_side_px)


def config_override(text: str) -> tuple[str, object]:
    """``FIELD=VALUE`` (a :class:`ReaderConfig` field, a Python literal) -> ``(field, value)``.

    The one parser behind every tool's ``--set`` (measurement scripts change one setting
    at a time); a ``ValueError`` names the fields or the literal expected.
    """
    field, _, value = text.partition("=")
    names = {f.name for f in dataclasses.fields(ReaderConfig)}
    if field not in names:
        raise ValueError(f"{field!r} is no ReaderConfig field; one of {', '.join(sorted(names))}")
    try:
        return field, ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"{value!r} is not a Python literal (e.g. 0.9, None, True)") from exc


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

    Args:
        model_dir: folder holding ``die_detector.onnx`` and ``face_classifier.onnx``;
            None for the installed ``models/`` package.
        tray: a calibrated tray outline (or its four corners in pixels) used for every
            frame; None to look for markers or the tray itself in each frame.
        config: thresholds; see :class:`ReaderConfig`.
        detector: a detector to use instead of the model file (tests inject fakes here).
        classifier: a face classifier to use instead of the model file.
        cocked_test: a cocked test to use instead of the model file (None: the file's,
            if the folder has one and ``config.cocked_test`` is on).

    Raises:
        ModelLoadError: a model file is missing, corrupt or breaks the model contract.
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
    ) -> None:
        self.config = config or ReaderConfig()
        root = Path(model_dir) if model_dir is not None else default_model_dir()
        cfg = self.config

        def open_model(name: str) -> OnnxModel:
            return load_onnx(root / name, threads=cfg.threads, spin=cfg.ort_spin)

        self.detector: Callable[[npt.NDArray[np.uint8]], Reading] = detector or DieDetector(
            open_model(DETECTOR_FILE),
            conf=cfg.det_conf,
            iou=cfg.det_iou,
            small_dice=cfg.small_dice_look,
        )
        self.classifier: Callable[[npt.NDArray[np.uint8], npt.NDArray[np.float32]], FaceScores] = (
            classifier
            or FaceClassifier(
                open_model(CLASSIFIER_FILE),
                views=cfg.face_views,
                sure=cfg.face_views_sure,
                context_offsets=cfg.face_context_offsets,
            )
        )
        if cocked_test is None and cfg.cocked_test and (root / COCKED_TEST_FILE).is_file():
            cocked_test = CockedTest(open_model(COCKED_TEST_FILE))
        self.cocked_test = cocked_test if cfg.cocked_test else None
        self.fusion = fusion_for(self.cocked_test, self.classifier) if cfg.cocked_fusion else None
        self.tray = tray if isinstance(tray, TrayOutline) or tray is None else TrayOutline.from_corners(tray)
        #: Clicked corners snapped to a picture's edges, shared by this reader's copies (see :meth:`_snapped`).
        self._snaps: dict[tuple[bytes, int, int], tuple[int, TrayOutline]] = {}
        #: Each calibrated tray's watch for a moved camera, shared by this reader's copies (see :meth:`_tray_moved`).
        self._watches: dict[bytes, _TrayWatch] = {}
        #: Whether the last read set the calibrated tray aside because the picture moved since its first frame.
        self.tray_moved = False
        self.vertical_memory: VerticalMemory | None = None

    def with_vertical_memory(self, memory: VerticalMemory | None) -> DiceReader:
        """The same reader, learning one fixed camera's vertical in ``memory`` (one memory per camera).

        Without a calibrated tray, reads then search for the vertical only until it is known
        and judge leaning dice under it after (:class:`vision.view_search.VerticalMemory`).
        """
        other = copy.copy(self)
        other.vertical_memory = memory
        return other

    def with_tray(self, tray: TrayOutline | Sequence[Sequence[float]] | None) -> DiceReader:
        """The same reader (same loaded models) with another calibrated tray outline."""
        other = copy.copy(self)
        other.tray = tray if isinstance(tray, TrayOutline) or tray is None else TrayOutline.from_corners(tray)
        return other

    def with_straight_down(self, on: bool) -> DiceReader:
        """The same reader (same loaded models) for a camera that does, or does not, look straight down.

        A server's tables share one reader; each table's page says how its own camera looks
        (:attr:`ReaderConfig.straight_down`).
        """
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

    def calibrate(self, frame: npt.NDArray[np.uint8]) -> DiceReader:
        """A reader whose tray is found once, in this frame, and then kept for every frame.

        For a fixed camera: ArUco corner markers are tried first, then the picture itself
        (around the dice found in it).

        Raises:
            ImageError: ``frame`` is not an image array.
            VisionError: no tray could be found in the frame.
        """
        frame = as_bgr_frame(frame)
        outline = tray_from_aruco(frame) or detect_tray(
            frame, self.detector(frame).xyxy, find_sides=self.config.tray_sides
        )
        if outline is None:
            raise VisionError("no tray found in the calibration frame; give its four corners instead")
        return self.with_tray(outline)

    def find_tray(self, frame: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32]) -> TrayOutline | None:
        """The tray for this frame: the calibrated one (clicks snapped to its edges), else markers, else the picture.

        A calibrated tray is set aside while the picture has moved since its first frame
        (:attr:`tray_moved`): a bumped camera puts the marked corners in the wrong place.
        """
        self.tray_moved = self.tray is not None and self._tray_moved(self.tray, frame)
        if self.tray is not None and not self.tray_moved:
            if self.config.snap_corners and self.tray.source == "corners":
                return self._snapped(self.tray, frame)
            return self.tray
        outline = tray_from_aruco(frame) if self.config.aruco else None
        if outline is None and self.config.auto_tray:
            outline = detect_tray(frame, xyxy, find_sides=self.config.tray_sides)
        return outline

    def _tray_moved(self, tray: TrayOutline, frame: npt.NDArray[np.uint8]) -> bool:
        """Whether the picture moved since the first frame read with this calibrated tray (a bumped camera).

        The watch (:class:`vision.camera_motion.CameraMotion` keeping its first frame) is kept
        per corners in a cache this reader's copies share, like the snap, so that a server
        making a reader per frame still compares each frame with the tray's first one.
        Labelled trays (generated scenes) and found ones are not watched.
        """
        if not self.config.watch_tray or tray.source not in _WATCHED_SOURCES:
            return False
        key = tray.polygon.tobytes()
        watch = self._watches.get(key)
        if watch is None:
            if len(self._watches) >= _SNAP_CACHE:
                self._watches.clear()
            watch = self._watches[key] = _TrayWatch(CameraMotion(keep_first=True))
        return watch.moved(frame)

    def _snapped(self, tray: TrayOutline, frame: npt.NDArray[np.uint8]) -> TrayOutline:
        """``tray`` snapped to the edges of the first frames it is used with (:func:`vision.tray_sides.snap`).

        The answer is kept per corners and picture size in a cache that copies of this reader
        share, so a server that makes a reader per request (:meth:`with_tray`) snaps once, not
        on every frame; after :data:`_SNAP_TRIES` frames without a fit the clicks stand as given.
        """
        key = (tray.polygon.tobytes(), frame.shape[1], frame.shape[0])
        tries, outline = self._snaps.get(key, (0, tray))
        if outline.sides is not None or tries >= _SNAP_TRIES:
            return outline
        outline = snap(tray, frame)
        if len(self._snaps) >= _SNAP_CACHE:
            self._snaps.clear()
        self._snaps[key] = (tries + 1, outline)
        return outline

    def read(
        self, frame: npt.NDArray[np.uint8], *, frame_index: int | None = None, timestamp: float | None = None
    ) -> Reading:
        """Read every die in one frame.

        Args:
            frame: BGR uint8 image (grey and BGRA are converted).
            frame_index: index in a video stream, kept in the reading.
            timestamp: capture time in seconds, kept in the reading.

        Returns:
            The reading, dice in detector order (best first).

        Raises:
            ImageError: ``frame`` is not an image array.
            ModelLoadError: a model rejected its input (a model of the wrong shape).
        """
        frame = as_bgr_frame(frame)
        if self.vertical_memory is not None and isinstance(self.detector, DieDetector):
            found = self.detector(frame, self.vertical_memory.look)  # one camera's stream: its dice's size
        else:
            found = self.detector(frame)
        scores = self.classifier(frame, found.xyxy)
        if self.config.drop_not_die:
            keep = ~scores.not_die
            if not keep.all():
                found, scores = found[keep], scores[keep]
        tray = self.find_tray(frame, found.xyxy)
        size = (frame.shape[1], frame.shape[0])
        corners = tray.vertical_corners if tray is not None else None
        view = None
        if tray is not None and corners is not None:
            sigma = tray.corner_sigma_px if self.config.corner_sigma_px is None else self.config.corner_sigma_px
            view = _tray_view(corners.tobytes(), size, sigma)
        straight_down = view is None and self.config.straight_down
        if straight_down:
            view = straight_down_view(size)
        cocked_min_conf = self.config.cocked_min_conf
        judged = self._cocked_test(frame, found.xyxy, view, scores) if len(found) else None
        doubted = False
        if straight_down and judged is not None and judged.cocked.any():
            judged, doubted = self._check_straight_down(frame, found.xyxy, judged, scores)
        if view is None and judged is not None and judged.decisive:
            view = judged.view  # a searched or learned vertical the test decided under also places the bases
        inside = footprint_inside(found.xyxy, tray, view=view) if tray is not None else np.ones(len(found), np.float32)
        if judged is not None and judged.decisive:
            # The test's threshold decides; its probability is the cocked confidence.
            scores = scores.with_cocked(judged.cocked, judged.probability)
            cocked_min_conf = min(cocked_min_conf, judged.threshold)
        elif judged is not None:
            # Under a vertical the dice do not clearly agree on, the test only vetoes: a die the
            # classifier calls cocked and the test does not back is read as lying flat.
            scores = scores.flat(scores.cocked & ~judged.cocked)
        if self.config.cocked_needs_support and scores.cocked.any():
            # Only on the tray's floor is it known what lies around a die; off it, anything may prop it up.
            on_floor = inside >= self.config.off_tray_min_inside
            scores = scores.flat(on_floor & ~may_lean(found.xyxy, tray, size))
        cut = None
        if self.config.cut_die_margin_px is not None:
            cut = near_picture_edge(found.xyxy, size, self.config.cut_die_margin_px)
        face, face_conf, status, data = self._decide(frame, found.xyxy, scores, inside, cocked_min_conf, cut=cut)
        return dataclasses.replace(
            found,
            face=face,
            face_confidence=face_conf,
            status=status,
            tray=None if tray is None else tray.polygon,
            tray_set_aside=self.tray_moved,
            straight_down_doubted=doubted,
            frame_index=frame_index,
            timestamp=timestamp,
            data=data,
        )

    def _cocked_test(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        view: UprightView | None,
        scores: FaceScores,
    ) -> _CockedCall | None:
        """What the cocked test says of each die, and with how much say; None where it cannot run.

        Under the calibrated tray's vertical (``view``), or one searched for in this frame
        where the dice agree on it, it decides combined with the classifier's ``scores``
        (and the evidence of :class:`vision.cocked.CockedEvidence`, where the fusion weighs
        it) where the test carries a fusion fitted with this classifier
        (:class:`vision.cocked.CockedFusion`), else alone: at its own threshold under the
        calibrated vertical, at the search's stricter one under a searched one. Under
        the vertical this camera's memory has learned it decides alone, at the search's
        threshold. Under the best vertical of a search the dice do not clearly agree on, or
        a learned one the memory doubts (the camera seems to have moved since), it only vetoes,
        at its own threshold (``decisive`` false).
        """
        test, search = self.cocked_test, self.config.view_search
        if test is None:
            return None
        if view is not None:
            return self._decisive(test(frame, xyxy, view), scores, xyxy, test.threshold, view)
        if search is None:
            return None
        memory = self.vertical_memory
        veto = None
        if memory is not None:
            memory.observe(frame)
        if memory is None or memory.search_due():
            estimate = search_view(test, frame, xyxy, search)
            if estimate is not None and estimate.trusted(search):
                if memory is not None:
                    memory.learn(estimate.view)
                return self._decisive(estimate.probabilities, scores, xyxy, search.threshold, estimate.view)
            if memory is not None:
                memory.miss()
            if estimate is not None:
                prob = estimate.probabilities
                veto = _CockedCall(prob >= test.threshold, prob, test.threshold, decisive=False)
        known = memory.view if memory is not None else None
        if known is None:
            return veto
        prob = test(frame, xyxy, known)
        if memory is not None and memory.doubted:
            # The camera seems to have moved and no search has confirmed the vertical: it only vetoes.
            return veto or _CockedCall(prob >= test.threshold, prob, test.threshold, decisive=False)
        # A learned vertical judges frames no search would trust (a real die the test over-calls raises the
        # frame's score), so the test alone decides, at the search's strict threshold.
        return _CockedCall(prob >= search.threshold, prob, search.threshold, decisive=True, view=known)

    def _check_straight_down(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        judged: _CockedCall,
        scores: FaceScores,
    ) -> tuple[_CockedCall, bool]:
        """The call under straight down, or under the searched vertical if the dice say the camera is tilted.

        Only run where a die was called cocked under straight down: that is what a tilted
        camera does to flat dice, and what needs to be right. A camera that does look
        straight down keeps its call, leaning die and all, since the search leaves the most
        cocked-looking die out when it scores a vertical. Returns the call and whether the
        setting was overruled.
        """
        limit, search = self.config.straight_down_check_deg, self.config.view_search or ViewSearchConfig()
        if limit is None or self.cocked_test is None or judged.view is None:
            return judged, False
        estimate = search_view(self.cocked_test, frame, xyxy, search)
        if estimate is None or not estimate.trusted(search) or estimate.view.angle_to(judged.view) <= limit:
            return judged, False
        return self._decisive(estimate.probabilities, scores, xyxy, search.threshold, estimate.view), True

    def _decisive(
        self,
        prob: npt.NDArray[np.float32],
        scores: FaceScores,
        xyxy: npt.NDArray[np.float32],
        threshold: float,
        view: UprightView,
    ) -> _CockedCall:
        """The test's call under a vertical trusted for this frame: fused with the classifier where a fusion fits it.

        The evidence a fusion may weigh beyond the two logits is taken under ``view``,
        the vertical the call is made under.

        The fusion decides at its own threshold, also under a searched vertical the
        frame's dice agree on: of the real validation photos' flat dice it called none
        cocked there (``python -m models.view_search --real validation``); else the
        test decides at ``threshold``.
        """
        if self.fusion is not None:
            fused = self.fusion.in_frame(prob, scores, xyxy, view)
            return _CockedCall(fused >= self.fusion.threshold, fused, self.fusion.threshold, decisive=True, view=view)
        return _CockedCall(prob >= threshold, prob, threshold, decisive=True, view=view)

    def _decide(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        scores: FaceScores,
        inside: npt.NDArray[np.float32],
        cocked_min_conf: float,
        cut: npt.NDArray[np.bool_] | None = None,
    ) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.str_], dict[str, npt.NDArray[np.generic]]
    ]:
        """Combine classifier, pips and tray into faces, confidences and statuses.

        ``cut`` marks the dice the picture's edge cuts (``ReaderConfig.cut_die_margin_px``):
        where one would be called cocked, it reads ``uncertain`` with its best face instead.
        """
        cfg = self.config
        n = len(xyxy)
        face = scores.face.copy()
        face_conf = scores.confidence.copy()
        data: dict[str, npt.NDArray[np.generic]] = {"cocked": scores.cocked.copy(), "in_tray": inside}
        if cfg.use_pips and n:
            # A second opinion folded in by Bayes' rule: disagreement lowers the confidence
            # (often below face_min_conf: uncertain) and a clear count settles a face the
            # classifier hesitates over. Agreement is fine but proves little (both err on
            # the same blurred die), so it never lifts the classifier's own confidence:
            # measured, lifting it let more wrong faces pass as ok.
            pips, pip_conf = count_pips_in_boxes(frame, xyxy)
            post = pip_posterior(scores.face_probs, scores.cocked_prob, pips, pip_conf, cfg.pip_reliability)
            best = post.argmax(axis=1)
            new_face = np.where(best < 6, best + 1, 0).astype(np.int64)
            new_conf = post[np.arange(n), best]
            new_conf = np.where(new_face == scores.face, np.minimum(new_conf, scores.confidence), new_conf)
            scores = dataclasses.replace(scores, face=new_face, cocked=best == 6, confidence=new_conf)
            face, face_conf = scores.face.copy(), scores.confidence.copy()
            data.update(cocked=scores.cocked.copy(), pips=pips, pip_confidence=pip_conf)
        doubted = np.zeros(n, bool) if cut is None else scores.cocked & cut
        if doubted.any():
            scores = scores.flat(doubted)
            face, face_conf = scores.face.copy(), scores.confidence.copy()
            data["cocked"] = scores.cocked.copy()
        status = np.full(n, DieStatus.OK.value, dtype="<U9")
        status[face_conf < cfg.face_min_conf] = DieStatus.UNCERTAIN.value
        cocked = scores.cocked & (face_conf >= cocked_min_conf)
        status[cocked] = DieStatus.COCKED.value
        status[scores.cocked & ~cocked] = DieStatus.UNCERTAIN.value
        status[doubted] = DieStatus.UNCERTAIN.value
        status[inside < cfg.off_tray_min_inside] = DieStatus.OFF_TRAY.value
        return face, face_conf.astype(np.float32), status, data

    def read_path(self, path: str | Path) -> Reading:
        """Load an image file and read it.

        Raises:
            ImageError: missing, not an image, truncated, empty or too large.
        """
        return self.read(load_image(path))

    def read_bytes(self, data: bytes, source: str = "<upload>") -> Reading:
        """Decode image bytes (an upload) and read them.

        Raises:
            ImageError: not an image, truncated, empty or too large.
        """
        return self.read(decode_image(data, source))
