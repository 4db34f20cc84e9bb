"""The reader's settings: :class:`ReaderConfig`, every threshold and switch in one validated place.

Each field's docstring says why it has its default and which measurement chose it
(most were chosen by a rule written before measuring: ``models/HISTORY.md``), so a
setting is changed by measuring again, not by taste. :func:`config_override` is the
one parser of ``FIELD=VALUE`` that every measuring tool's ``--set`` shares.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

from farklecam.vision.detection.detector import SmallDiceLook
from farklecam.vision.pose.tilt import COCKED_TILT_DEG, TILT_BAND_DEG, TiltCall
from farklecam.vision.pose.view_search import ViewSearchConfig

__all__ = ["ReaderConfig", "config_override"]


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """Thresholds of the reader, in one validated place.

    Attributes:
        det_conf: minimum detector score for a die; None for the model's recommendation
            (see :class:`farklecam.vision.detection.detector.DieDetector`).
        det_iou: NMS overlap above which two boxes are one die.
        small_dice_imgsz: where the dice the detector finds have a median side under
            ``small_dice_side_px`` at its own input size (320), read the frame again with
            the detector at this size and keep what it finds there
            (:class:`farklecam.vision.detection.detector.SmallDiceLook`); None reads each frame once. Chosen by a
            rule written first (``models/HISTORY.md``): on the calibration scenes it found
            more dice (recall 0.9946 against 0.9933) and read them better (exact 0.884
            against 0.881, cocked F1 0.850 against 0.836), and it found the one real
            validation die missed at 320 (``python -m farklecam.models.thresholds.candidate --set
            small_dice_imgsz=None --no-gate`` measures it again). Frames of larger dice
            (a webcam over a tray) pay nothing; those it reads again pay a second detector
            run on 1.7 times the pixels.
        small_dice_side_px: that median side, in the detector's input pixels (24: about a
            third of generated scenes and most phone photos of a whole box).
        face_min_conf: classifier confidence below which a face is ``uncertain``.
        cocked_min_conf: confidence needed to call a die ``cocked`` (else ``uncertain``).
        use_pips: run the pip counter as a second opinion on every die (about 0.5-1 ms a
            die). Off by default: with classifiers trained on real and generated dice it
            gave no net gain on held-out real photos (``python -m farklecam.vision.evaluate --pips on``
            measures it again for a new model).
        pip_reliability: how often a fully confident pip count is right (see
            :func:`farklecam.vision.faces.pips.pip_posterior`).
        off_tray_min_inside: share of a die's footprint that must lie inside the tray.
        auto_tray: look for the tray in every frame when no outline was given.
        tray_sides: fit a found tray's sides at full resolution and, where they can be
            trusted, draw the camera's vertical from them as from calibrated corners
            (:mod:`farklecam.vision.tray.sides`) instead of searching for it. On the renderer no model
            trained on, nothing marked, it raised cocked recall / precision from 0.528 / 0.942
            to 0.654 / 0.929, and called no real flat die cocked (``docs/experiments/out_of_world.md``).
        corner_sigma_px: how far the tray's corners may be off, in pixels, when the camera's
            vertical is drawn from them (:func:`farklecam.vision.pose.upright.focal_from_corners`); None takes
            it from where the outline came from (:data:`farklecam.vision.tray.outline.CORNER_SIGMA_PX`: 2 px for
            clicked corners, 0 for a generated scene's labels).
        snap_corners: fit the sides of a tray given by its corners to the picture's edges near
            them (:func:`farklecam.vision.tray.sides.snap`, tried on the first few frames until it holds)
            and draw the camera's vertical from those: clicks are a few pixels off.
        watch_tray: compare each frame with the first one read with a calibrated tray (clicked
            corners or ArUco markers) and, while the picture has shifted or turned since (a
            bumped camera, :mod:`farklecam.vision.camera.motion`), read as if no tray had been given
            (found in the picture, the vertical searched) rather than with corners in the
            wrong place; :attr:`DiceReader.tray_moved` says so, for a notice to mark them again.
        aruco: look for ArUco corner markers in every frame when no outline was given
            (about 5 ms a frame; :meth:`DiceReader.calibrate` looks once instead).
        threads: onnxruntime intra-op threads (None: automatic).
        ort_spin: onnxruntime's worker threads busy-wait between operators while a model
            runs, and sleep once it returns (:func:`farklecam.vision.onnx_runtime.load_onnx`'s ``spin``).
        face_views: views of each crop the classifier averages (1, 2, 4 or 8; see
            :meth:`farklecam.vision.faces.classifier.FaceClassifier.classify_crops`). Four quarter turns cost
            about 1 ms for three dice; they were chosen with the cocked offset on the
            calibration scenes (``python -m farklecam.models.thresholds.calibrate``: cocked F1 0.365 against
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
            photos they read two more byler dice right (``python -m farklecam.vision.evaluate
            --context-offsets=-0.05,0,0.05``), which the held-out sets alone cannot choose.
        cut_die_margin_px: a die whose box comes within this many pixels of the picture's
            edge is never called cocked: part of it, and whatever it may lean on, is out of
            view, so it reads ``uncertain`` (its best face kept) for the player to look at;
            None lets the cocked test decide on what is in view. Chosen by a rule written
            first (``models/HISTORY.md``): on the calibration scenes cocked precision 0.825
            against 0.800 and recall 0.883 against 0.906 (F1 0.853 against 0.850; three cut
            leaning dice now read uncertain), the validation photos read the same
            (``python -m farklecam.models.thresholds.candidate --set cut_die_margin_px=None --no-gate``).
        drop_not_die: drop detections the classifier reads as "not a die" (only for a
            classifier with that class; see :mod:`farklecam.vision.faces.classifier`).
        cocked_test: let the cocked test (:mod:`farklecam.vision.pose.cocked`) decide which dice lean,
            where the camera's vertical is known from the tray (its corners given, snapped to
            its edges or from ArUco markers, or with ``tray_sides`` the fitted sides of an
            outline found in the picture: see :attr:`TrayOutline.vertical_corners`) and the
            model folder has one.
        cocked_fusion: where the cocked test decides under a calibrated vertical, or a
            searched one the frame's dice agree on, combine
            it with the face classifier's cocked probability as the test's fitted
            :class:`farklecam.vision.pose.cocked.CockedFusion` says (if it has one for this classifier).
        straight_down: the camera looks straight down at the dice (an overhead rig): where no
            calibrated tray gives the vertical, the picture's centre is the nadir
            (:func:`farklecam.vision.pose.upright.straight_down_view`) and the cocked test decides under it,
            with no search. Only for a camera within about 5 degrees of straight down: on the
            calibration scenes it called 1.4 % of flat dice cocked where the camera was 0-5
            degrees off, 3 % at 5-10, 5 % at 10-15 and 21-69 % beyond (a tilted camera
            should have its tray's corners marked instead; ``straight_down_check_deg``
            catches most of those).
        straight_down_check_deg: with ``straight_down``, where the test calls a die cocked
            under the picture's centre, search the vertical as for an unmarked tray
            (:func:`farklecam.vision.pose.view_search.search_view`); if the dice clearly agree on one more
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
            from the dice themselves (:mod:`farklecam.vision.pose.view_search`) and run the cocked test
            under it; None keeps the face classifier's own cocked call there.
        pose_model: the pose network (an ONNX file in the model folder, or a path) whose
            measured tilt decides which dice are cocked in place of the cocked test, the
            vertical search and ``straight_down`` (:mod:`farklecam.vision.pose.tilt_scores`): the table's
            normal is the marked tray's, else the one the frame's dice agree on
            (:func:`farklecam.vision.pose.tilt.consensus`), and every die's ``tilt_deg`` is reported.
            None (the default) keeps the cocked test, until the tilt path is measured to beat it
            in worlds its network never trained in (``docs/experiments/out_of_world.md``).
        tilt_cocked_deg: with ``pose_model``, a die is cocked past this tilt plus ``tilt_band_deg``
            (:class:`farklecam.vision.pose.tilt.TiltCall`; why 12: :data:`farklecam.vision.pose.tilt.COCKED_TILT_DEG`).
        tilt_band_deg: half-width of the band around ``tilt_cocked_deg`` read ``uncertain``.
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
    tray_sides: bool = True
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
    cut_die_margin_px: float | None = 2.0
    cocked_test: bool = True
    cocked_fusion: bool = True
    straight_down: bool = False
    straight_down_check_deg: float | None = 10.0
    view_search: ViewSearchConfig | None = dataclasses.field(default_factory=ViewSearchConfig)
    pose_model: str | None = None
    tilt_cocked_deg: float = COCKED_TILT_DEG
    tilt_band_deg: float = TILT_BAND_DEG

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
        _ = self.tilt_call  # raises ValueError when out of range

    @property
    def tilt_call(self) -> TiltCall:
        """The call from a measured tilt these settings ask for (used with ``pose_model``)."""
        return TiltCall(self.tilt_cocked_deg, self.tilt_band_deg)

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
