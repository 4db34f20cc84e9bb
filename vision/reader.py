"""The dice reader: one object, built once, that turns a frame into a :class:`Reading`.

``DiceReader`` loads the models once (opening an ONNX session costs far more
than a read) and then runs, per frame: detection, crops from the full
resolution frame, face classification (which also vetoes detections that are
no die), the tray outline (one found in the picture calls no die off where the
picture speaks against it: :mod:`farklecam.vision.tray.trust`), the cocked test
on crops turned upright under the camera's vertical (from the marked tray, the
tray's sides, or the dice themselves), and finally one status per die.

Example:
    >>> reader = DiceReader()
    >>> reading = reader.read_path("examples/roll.jpg")
    >>> reading.faces, reading.rethrow
    ((1, 5, 5), 0)
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib.resources
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import ImageError, VisionError
from farklecam.vision.detection.detector import DieDetector, SmallDiceLook
from farklecam.vision.faces.classifier import VIEWS_SURE, FaceClassifier, FaceScores
from farklecam.vision.faces.symbols import symbol_faces
from farklecam.vision.images import decode_image, load_image
from farklecam.vision.onnx_runtime import OnnxModel, load_onnx
from farklecam.vision.pose.cocked import CockedFusion, CockedTest
from farklecam.vision.pose.cocked_call import CockedJudge
from farklecam.vision.pose.support import CUT_DIE_MARGIN_PX, near_picture_edge
from farklecam.vision.pose.upright import UprightView, straight_down_view, upright_view
from farklecam.vision.pose.view_search import VerticalMemory, ViewSearchConfig
from farklecam.vision.reader_config import ReaderConfig, config_override
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.tray.detect import detect_tray, tray_from_aruco
from farklecam.vision.tray.marked import MarkedTrays
from farklecam.vision.tray.outline import TrayOutline, footprint_inside
from farklecam.vision.tray.trust import off_tray_calls

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

#: File names of the models inside a model folder (see docs/model-contract.md); the cocked test is optional.
DETECTOR_FILE = "die_detector.onnx"
CLASSIFIER_FILE = "face_classifier.onnx"
COCKED_TEST_FILE = "cocked_test.onnx"


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
            return load_onnx(root / name, threads=cfg.threads)

        self.detector: Callable[[npt.NDArray[np.uint8]], Reading] = detector or DieDetector(
            open_model(DETECTOR_FILE),
            conf=cfg.det_conf,
            small_dice=SmallDiceLook(),
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

    def with_vertical_memory(self, memory: VerticalMemory | None) -> DiceReader:
        """The same reader, learning one fixed camera's vertical in ``memory`` (one memory per camera).

        Without a calibrated tray, reads then search for the vertical only until it is known
        and judge leaning dice under it after (:class:`farklecam.vision.pose.view_search.VerticalMemory`).
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

    @property
    def cocked_judge(self) -> CockedJudge | None:
        """The cocked test with this reader's fusion and search settings; None without a test.

        Made per read (a small frozen record) so that a copy with other settings
        (:meth:`with_straight_down`) or a test swapped in by a measuring tool is judged by
        what it holds now.
        """
        if self.cocked_test is None:
            return None
        search = ViewSearchConfig() if self.config.vertical_search else None
        return CockedJudge(self.cocked_test, self.fusion, search)

    def calibrate(self, frame: npt.NDArray[np.uint8]) -> DiceReader:
        """A reader whose tray is found once, in this frame, and then kept for every frame.

        For a fixed camera: ArUco corner markers are tried first, then the picture itself
        (around the dice found in it).

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

        A calibrated tray is set aside while the picture has moved since its first frame
        (:attr:`tray_moved`): a bumped camera puts the marked corners in the wrong place.
        """
        self.tray_moved = self.tray is not None and self._marked.moved(self.tray, frame)
        if self.tray is not None and not self.tray_moved:
            if self.tray.source == "corners":
                return self._marked.snapped(self.tray, frame)
            return self.tray
        outline = tray_from_aruco(frame) if self.config.aruco else None
        if outline is None and self.config.auto_tray:
            outline = detect_tray(frame, xyxy, find_sides=True)
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
        keep = ~scores.not_die
        if not keep.all():
            found, scores = found[keep], scores[keep]
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
        # An outline found in the picture calls a die off only where the picture backs it (farklecam.vision.tray.trust).
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
        face, face_conf, status, data = self._decide(frame, found.xyxy, scores, inside, off, cocked_min_conf, cut)
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
    ) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.str_], dict[str, npt.NDArray[np.generic]]
    ]:
        """Combine the classifier's scores and the tray into faces, confidences and statuses.

        ``inside`` is each die's footprint inside the tray (kept as ``data["in_tray"]``), ``off``
        the dice called off the tray (:func:`farklecam.vision.tray.trust.off_tray_calls`).
        ``cut`` marks the dice the picture's edge cuts: part of such a die, and whatever it may
        lean on, is out of view, so where it would be called cocked it reads ``uncertain`` with
        its best face instead, for the player to look at.
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
        status[symbol] = DieStatus.UNCERTAIN.value
        data["symbol"] = symbol
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
