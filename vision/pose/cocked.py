"""The cocked test: does a die lean? Decided on crops turned so that down is down.

The face classifier reads a crop in whatever orientation the die lies, so it cannot tell a
flat die seen obliquely from a leaning one. This small network answers only "flat or
cocked", from the crop turned so that the nadir (:mod:`farklecam.vision.pose.upright`) lies
straight below, plus a plane holding the sine of the camera's angle to the die: a flat die
then shows its side, if at all, at the bottom of the crop. Its metadata may hold a
``fusion`` (:class:`CockedFusion`) with the face classifier's own cocked call.

How far the test's word goes depends on where the vertical comes from (:class:`CockedJudge`):
a calibrated tray, a camera said to look straight down, or a vertical the dice clearly
agree on lets it decide; a vertical a camera's memory learned lets it decide alone at the
search's stricter threshold; a doubtful one lets it only veto the classifier's cocked calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.errors import ModelLoadError
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE, crops_to_tensor, extract_crops, neighbour_planes
from farklecam.vision.faces.classifier import FaceScores, softmax
from farklecam.vision.onnx_runtime import OnnxModel, load_onnx
from farklecam.vision.pose.upright import UprightView, upright_angles
from farklecam.vision.pose.view_search import VerticalMemory, ViewSearchConfig, search_view

__all__ = [
    "COCKED_TEST_NAMES",
    "DEFAULT_THRESHOLD",
    "FUSION_METADATA_KEY",
    "FUSION_TERMS",
    "CockedCall",
    "CockedEvidence",
    "CockedFusion",
    "CockedJudge",
    "CockedTest",
    "covered_fraction",
    "foreshortening",
    "upright_inputs",
]

#: The cocked test's classes, in order.
COCKED_TEST_NAMES = ("flat", "cocked")
#: Cocked probability above which a die is called cocked, when the model does not say.
DEFAULT_THRESHOLD = 0.5
#: Metadata key of the test's :class:`CockedFusion` with the face classifier.
FUSION_METADATA_KEY = "fusion"
#: Metadata key saying the test reads crops with the floor's foreshortening undone (:func:`foreshortening`).
UNDO_FORESHORTENING_KEY = "undo_foreshortening"
#: The steepest view whose foreshortening is undone in full: past it a crop would be squeezed to a sliver.
_MAX_UNDONE_VIEW_SINE = 0.95
#: Probabilities are clipped this far from 0 and 1 before taking logits.
_EPS = 1e-4


def logit(p: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """log(p / (1 - p)), with p clipped to [1e-4, 1 - 1e-4] so a saturated softmax stays finite."""
    q = np.clip(np.asarray(p, np.float64), _EPS, 1.0 - _EPS)
    return np.log(q / (1.0 - q))


def covered_fraction(xyxy: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """The largest fraction of each box (n,) that one other box covers; 0 for a lone die.

    A die half behind a nearer one shows that die's top where its side would be, and a die
    leaning on another overlaps it too: evidence either way, for the fusion to weigh.
    """
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    if len(boxes) < 2:
        return np.zeros(len(boxes), np.float32)
    lo = np.maximum(boxes[:, None, :2], boxes[None, :, :2])
    hi = np.minimum(boxes[:, None, 2:], boxes[None, :, 2:])
    w, h = np.clip(hi - lo, 0.0, None).transpose(2, 0, 1)
    area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-6)
    share = (w * h) / area[:, None]
    np.fill_diagonal(share, 0.0)
    covered: npt.NDArray[np.float32] = np.clip(share.max(axis=1), 0.0, 1.0).astype(np.float32)
    return covered


#: Evidence a fusion may weigh beyond the two logits (:class:`CockedEvidence`), by the names its metadata uses.
FUSION_TERMS = ("face", "covered", "view_sine", "test_x_view_sine")


@dataclass(frozen=True, slots=True)
class CockedEvidence:
    """What else the reader knows of each die when it decides whether it leans (one constructor for fit and reader).

    Per die: the classifier's best face probability, the share of its box another covers, and
    the sine of the camera's ray angle from the vertical (oblique crops show sides on flat dice).
    """

    face_prob: npt.NDArray[np.float32]
    covered: npt.NDArray[np.float32]
    view_sine: npt.NDArray[np.float32]

    @classmethod
    def of(cls, face_probs: npt.ArrayLike, xyxy: npt.ArrayLike, view: UprightView) -> CockedEvidence:
        """The evidence on the dice in ``xyxy`` from the classifier's face probabilities (n, 6) and the vertical."""
        boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
        probs = np.asarray(face_probs, np.float32).reshape(len(boxes), -1)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2.0
        return cls(
            face_prob=probs.max(axis=1, initial=0.0).astype(np.float32),
            covered=covered_fraction(boxes),
            view_sine=np.sin(view.view_tilt(centres)).astype(np.float32),
        )

    def term(self, name: str, test_logit: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The values of one of :data:`FUSION_TERMS`, given the test's logits."""
        if name == "face":
            return logit(self.face_prob)
        if name == "covered":
            return np.asarray(self.covered, np.float64)
        if name == "view_sine":
            return np.asarray(self.view_sine, np.float64)
        if name == "test_x_view_sine":
            return test_logit * np.asarray(self.view_sine, np.float64)
        raise ValueError(f"unknown fusion term {name!r}; expected one of {', '.join(FUSION_TERMS)}")

    def __getitem__(self, index: npt.NDArray[np.bool_] | npt.NDArray[np.int64]) -> CockedEvidence:
        """The evidence on some dice (a boolean mask or indices)."""
        return CockedEvidence(self.face_prob[index], self.covered[index], self.view_sine[index])

    @classmethod
    def concatenate(cls, parts: list[CockedEvidence]) -> CockedEvidence:
        """The evidence of several frames' dice, in order."""
        return cls(
            np.concatenate([p.face_prob for p in parts]).astype(np.float32),
            np.concatenate([p.covered for p in parts]).astype(np.float32),
            np.concatenate([p.view_sine for p in parts]).astype(np.float32),
        )


@dataclass(frozen=True, slots=True)
class CockedFusion:
    """The cocked test's and the face classifier's cocked probabilities, combined.

    ``sigmoid(test_weight * logit(test) + classifier_weight * logit(classifier) + sum(w * term) + bias)``
    at ``threshold``; ``terms`` names further evidence (:data:`FUSION_TERMS`). Valid only with the
    classifier whose ``train_config_sha`` is ``classifier_sha``.
    """

    test_weight: float
    classifier_weight: float
    bias: float
    threshold: float
    classifier_sha: str
    terms: tuple[tuple[str, float], ...] = ()

    def __call__(
        self, test_prob: npt.ArrayLike, classifier_prob: npt.ArrayLike, evidence: CockedEvidence | None = None
    ) -> npt.NDArray[np.float32]:
        """The fused cocked probability of each die.

        Raises:
            ValueError: the fusion weighs further terms and no ``evidence`` was given.
        """
        t = logit(test_prob)
        z = self.test_weight * t + self.classifier_weight * logit(classifier_prob) + self.bias
        if self.terms:
            if evidence is None:
                raise ValueError(f"this fusion weighs {[n for n, _ in self.terms]} and needs the dice's evidence")
            for name, weight in self.terms:
                z = z + weight * evidence.term(name, t)
        return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)

    def in_frame(
        self, test_prob: npt.ArrayLike, scores: FaceScores, xyxy: npt.ArrayLike, view: UprightView
    ) -> npt.NDArray[np.float32]:
        """The fused probability of the dice in ``xyxy``; the frame's evidence is gathered only where it is weighed."""
        evidence = CockedEvidence.of(scores.face_probs, xyxy, view) if self.terms else None
        return self(test_prob, scores.cocked_prob, evidence)

    def to_json(self) -> str:
        """The metadata value (JSON object); ``terms`` only where the fusion weighs some."""
        value: dict[str, Any] = {
            "test_weight": self.test_weight,
            "classifier_weight": self.classifier_weight,
            "bias": self.bias,
            "threshold": self.threshold,
            "classifier_sha": self.classifier_sha,
        }
        if self.terms:
            value["terms"] = dict(self.terms)
        return json.dumps(value)

    @classmethod
    def from_metadata(cls, value: Any, source: Path | str) -> CockedFusion:
        """Parse the metadata value (already decoded from JSON).

        Raises:
            ModelLoadError: not four finite numbers, a threshold in (0, 1), a hash and known ``terms``.
        """
        try:
            numbers = [float(value[k]) for k in ("test_weight", "classifier_weight", "bias", "threshold")]
            sha = str(value["classifier_sha"])
            terms = tuple((str(k), float(w)) for k, w in dict(value.get("terms", {})).items())
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ModelLoadError(f"ONNX model {source} has a malformed fusion {value!r}: {exc}") from exc
        weights = numbers + [w for _, w in terms]
        if not np.isfinite(weights).all() or not 0.0 < numbers[3] < 1.0:
            raise ModelLoadError(f"ONNX model {source} has a fusion out of range: {value!r}")
        unknown = sorted({k for k, _ in terms} - set(FUSION_TERMS))
        if unknown:
            raise ModelLoadError(f"ONNX model {source} has a fusion with unknown terms {unknown}")
        test_weight, classifier_weight, bias, threshold = numbers
        return cls(test_weight, classifier_weight, bias, threshold, classifier_sha=sha, terms=terms)


def foreshortening(view_sine: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """How much a flat face is foreshortened towards the nadir: the cosine of the camera's angle to it.

    A turned crop squeezed across by this factor shows every flat top face square and a
    leaning one not; views steeper than :data:`_MAX_UNDONE_VIEW_SINE` are squeezed as at it.
    """
    sine = np.clip(np.asarray(view_sine, np.float64), 0.0, _MAX_UNDONE_VIEW_SINE)
    return np.sqrt(1.0 - sine * sine).astype(np.float32)


def upright_inputs(
    crops: npt.NDArray[np.uint8], view_sine: npt.ArrayLike, neighbours: npt.NDArray[np.uint8] | None = None
) -> npt.NDArray[np.float32]:
    """The network's input (n, 4 or 5, s, s): RGB of the turned crops, each view's sine, and the neighbours' plane."""
    rgb = crops_to_tensor(crops)
    n, _, h, w = rgb.shape
    steep = np.broadcast_to(np.asarray(view_sine, np.float32).reshape(n, 1, 1, 1), (n, 1, h, w))
    planes = [rgb, steep]
    if neighbours is not None:
        planes.append(neighbours[:, None].astype(np.float32) / 255.0)
    return np.ascontiguousarray(np.concatenate(planes, axis=1))


class CockedTest:
    """Probability that each die leans, from the frame, its boxes and the camera's vertical."""

    def __init__(self, model: OnnxModel | str | Path, threads: int | None = None) -> None:
        self.model = model if isinstance(model, OnnxModel) else load_onnx(model, threads=threads)
        meta = self.model.metadata
        names = [str(n) for n in meta.get("names", [])]
        if tuple(names) != COCKED_TEST_NAMES:
            raise ModelLoadError(
                f"ONNX model {self.model.path} has classes {names}; expected {list(COCKED_TEST_NAMES)}"
            )
        planes = self.model.fixed_dim(1)
        if planes not in (None, 4, 5):
            raise ModelLoadError(f"ONNX model {self.model.path} takes {planes} planes; expected 4 or 5")
        #: Whether the test also reads where the other dice lie (a fifth plane, :func:`upright_inputs`).
        self.neighbours = planes == 5
        self.crop_size = int(meta.get("crop_size", CROP_SIZE))
        self.crop_context = float(meta.get("crop_context", CROP_CONTEXT))
        threshold = meta.get("threshold", DEFAULT_THRESHOLD)
        if not isinstance(threshold, (int, float)) or not 0.0 < float(threshold) < 1.0:
            raise ModelLoadError(
                f"ONNX model {self.model.path} has threshold {threshold!r}; expected a number in (0, 1)"
            )
        self.threshold = float(threshold)
        undo = meta.get(UNDO_FORESHORTENING_KEY, False)
        if not isinstance(undo, bool):
            raise ModelLoadError(
                f"ONNX model {self.model.path} has {UNDO_FORESHORTENING_KEY}={undo!r}; expected true or false"
            )
        #: Whether the test reads crops squeezed so that flat faces look square (:func:`foreshortening`).
        self.undo_foreshortening = undo
        fusion = meta.get(FUSION_METADATA_KEY)
        #: How to combine this test with the face classifier (None: the test alone decides).
        self.fusion = None if fusion is None else CockedFusion.from_metadata(fusion, self.model.path)

    def __call__(self, frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike, view: UprightView) -> npt.NDArray[np.float32]:
        """Cocked probability of the die in each box, shape (n,); the boxes are all the frame's dice."""
        boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2.0
        return self.probabilities(frame, boxes, upright_angles(view, centres), np.sin(view.view_tilt(centres)), boxes)

    def probabilities(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.ArrayLike,
        angles_deg: npt.ArrayLike,
        view_sine: npt.ArrayLike,
        dice: npt.ArrayLike | None = None,
    ) -> npt.NDArray[np.float32]:
        """Cocked probability of each box's die, its crop turned by ``angles_deg`` and seen at ``view_sine``.

        The boxes may repeat (one die under several views): one batch. ``dice`` are all the frame's
        boxes, marked in each crop by a test that reads its neighbours (default: ``xyxy``).
        """
        boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
        if len(boxes) == 0:
            return np.zeros(0, np.float32)
        angles = np.asarray(angles_deg, np.float32)
        squeeze = foreshortening(view_sine) if self.undo_foreshortening else None
        crops = extract_crops(frame, boxes, self.crop_size, self.crop_context, angles, squeeze)
        near = None
        if self.neighbours:
            others = boxes if dice is None else dice
            near = neighbour_planes(boxes, others, self.crop_size, self.crop_context, angles, squeeze)
        logits = self.model.run(upright_inputs(crops, view_sine, near))[0]
        if logits.shape != (len(boxes), len(COCKED_TEST_NAMES)):
            raise ModelLoadError(f"ONNX model {self.model.path} returned logits of shape {logits.shape}")
        return softmax(np.asarray(logits, np.float32))[:, 1]


@dataclass(frozen=True)
class CockedCall:
    """The cocked test's word on each die: its calls, probabilities and threshold, and whether it decides.

    ``view`` is the vertical a decisive call was made under; it also places the dice's bases.
    """

    cocked: npt.NDArray[np.bool_]
    probability: npt.NDArray[np.float32]
    threshold: float
    decisive: bool
    view: UprightView | None = None


@dataclass(frozen=True)
class CockedJudge:
    """The cocked test, its fusion with this classifier (None: the test alone) and the vertical search's settings.

    Without ``search`` no vertical is searched for; the classifier's own cocked call then stands.
    """

    test: CockedTest
    fusion: CockedFusion | None
    search: ViewSearchConfig | None

    def call(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        view: UprightView | None,
        scores: FaceScores,
        memory: VerticalMemory | None = None,
    ) -> CockedCall | None:
        """What the test says of each die, and with how much say; None where it cannot run.

        ``view`` is a known vertical; without one it is searched for or taken from ``memory``.
        """
        test, search = self.test, self.search
        if view is not None:
            return self.decisive(test(frame, xyxy, view), scores, xyxy, test.threshold, view)
        if search is None:
            return None
        veto = None
        if memory is not None:
            memory.observe(frame)
        if memory is None or memory.search_due():
            estimate = search_view(test, frame, xyxy, search)
            if estimate is not None and estimate.trusted(search):
                if memory is not None:
                    memory.learn(estimate.view)
                return self.decisive(estimate.probabilities, scores, xyxy, search.threshold, estimate.view)
            if memory is not None:
                memory.miss()
            if estimate is not None:
                prob = estimate.probabilities
                veto = CockedCall(prob >= test.threshold, prob, test.threshold, decisive=False)
        known = memory.view if memory is not None else None
        if known is None:
            return veto
        prob = test(frame, xyxy, known)
        if memory is not None and memory.doubted:
            # The camera seems to have moved and no search has confirmed the vertical: it only vetoes.
            return veto or CockedCall(prob >= test.threshold, prob, test.threshold, decisive=False)
        # A learned vertical judges frames no search would trust (a real die the test over-calls raises the
        # frame's score), so the test alone decides, at the search's strict threshold.
        return CockedCall(prob >= search.threshold, prob, search.threshold, decisive=True, view=known)

    def check_straight_down(
        self,
        frame: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        judged: CockedCall,
        scores: FaceScores,
        limit_deg: float | None,
    ) -> tuple[CockedCall, bool]:
        """The call under straight down, or under the searched vertical if the dice say the camera is tilted.

        Run where a die was called cocked under straight down, as a tilted camera does to flat
        dice; the search leaves the most cocked-looking die out, so a real lean does not overrule.
        Returns the call and whether the searched vertical, over ``limit_deg`` off, overruled.
        """
        search = self.search or ViewSearchConfig()
        if limit_deg is None or judged.view is None:
            return judged, False
        estimate = search_view(self.test, frame, xyxy, search)
        if estimate is None or not estimate.trusted(search) or estimate.view.angle_to(judged.view) <= limit_deg:
            return judged, False
        return self.decisive(estimate.probabilities, scores, xyxy, search.threshold, estimate.view), True

    def decisive(
        self,
        prob: npt.NDArray[np.float32],
        scores: FaceScores,
        xyxy: npt.NDArray[np.float32],
        threshold: float,
        view: UprightView,
    ) -> CockedCall:
        """The call under a vertical trusted for this frame: the fusion's where it fits, else at ``threshold``."""
        if self.fusion is not None:
            fused = self.fusion.in_frame(prob, scores, xyxy, view)
            return CockedCall(fused >= self.fusion.threshold, fused, self.fusion.threshold, decisive=True, view=view)
        return CockedCall(prob >= threshold, prob, threshold, decisive=True, view=view)
