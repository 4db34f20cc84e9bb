"""The face classifier: reads the top face (1-6), "cocked" or "not_die" from a crop of each die.

Class names, crop size and context come from the model's metadata, with an optional
``logit_bias`` added to the logits: the logit adjustment for a class training over-sampled
(Menon et al., "Long-tail learning via logit adjustment", 2021). The reader drops a box the
classifier calls ``not_die``: the second stage's veto on the detector.

A model with a second output, ``embedding`` (the pooled features its linear head reads; added by
``python -m farklecam.models.training.embedding_output``), also gives each crop's features, which a
table's profile (:mod:`farklecam.vision.profiles`) compares with the dice it was taught.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from farklecam.errors import ModelLoadError
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE, crops_to_tensor, extract_crops
from farklecam.vision.onnx_runtime import OnnxModel, load_onnx

__all__ = [
    "CLASSES",
    "COCKED_NAME",
    "EMBEDDING_OUTPUT",
    "LOGITS_OUTPUT",
    "NOT_DIE_NAME",
    "VIEWS_SURE",
    "FaceClassifier",
    "FaceScores",
    "softmax",
]

#: Class name of a die with no face flat up.
COCKED_NAME = "cocked"
#: A die whose first view reads as a face with this probability skips the other views: they
#: only change a read whose first view is unsure, and cost most of its time.
VIEWS_SURE = 0.9
#: Class name of a detection that is not a die at all (optional in a model).
NOT_DIE_NAME = "not_die"
#: Every class a die's crop can be, in the order of :meth:`FaceScores.class_probs`.
CLASSES: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", COCKED_NAME, NOT_DIE_NAME)
#: Output names of the classifier: its class logits, and the optional pooled features.
LOGITS_OUTPUT, EMBEDDING_OUTPUT = "logits", "embedding"
#: Face value given to the classes that are not a face.
_COCKED_FACE, _NOT_DIE_FACE = 0, -1


def softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Row-wise softmax, stable for large logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)


@dataclass(frozen=True, eq=False)
class FaceScores:
    """The classifier's verdict on n crops."""

    face: npt.NDArray[np.int64]  #: best face 1-6 (n,); 0 where the best die class is "cocked"
    cocked: npt.NDArray[np.bool_]  #: whether the best die class is "cocked" (n,)
    confidence: npt.NDArray[np.float32]  #: probability of the best die class (n,)
    face_probs: npt.NDArray[np.float32]  #: probability of faces 1-6 (n, 6)
    cocked_prob: npt.NDArray[np.float32]  #: probability of "cocked" (n,)
    not_die_prob: npt.NDArray[np.float32] | None = None  #: probability of no die (n,); None without that class
    #: pooled features of each crop as cut, first view (n, d); None for a model without an ``embedding`` output
    embedding: npt.NDArray[np.float32] | None = None

    @classmethod
    def from_class_probs(
        cls, probs: npt.ArrayLike, *, has_not_die: bool, embedding: npt.NDArray[np.float32] | None = None
    ) -> FaceScores:
        """Scores from probabilities (n, 8) over faces 1-6, ``cocked`` and ``not_die`` (the order of :attr:`CLASSES`).

        The inverse of :meth:`class_probs`: the best *die* class and its own probability, as the
        classifier reads them (``has_not_die`` False: the model had no such class).
        """
        p = np.asarray(probs, np.float32).reshape(-1, len(CLASSES))
        best = p[:, :7].argmax(axis=1)
        face = np.where(best == 6, _COCKED_FACE, best + 1).astype(np.int64)
        return cls(
            face=face,
            cocked=best == 6,
            confidence=p[np.arange(len(p)), best].astype(np.float32),
            face_probs=np.ascontiguousarray(p[:, :6]),
            cocked_prob=np.ascontiguousarray(p[:, 6]),
            not_die_prob=np.ascontiguousarray(p[:, 7]) if has_not_die else None,
            embedding=embedding,
        )

    def class_probs(self) -> npt.NDArray[np.float32]:
        """Probabilities (n, 8) over faces 1-6, ``cocked`` and ``not_die`` (0 without that class): :attr:`CLASSES`."""
        not_die = self.not_die_prob if self.not_die_prob is not None else np.zeros(len(self.face), np.float32)
        return np.column_stack([self.face_probs, self.cocked_prob, not_die]).astype(np.float32)

    @property
    def not_die(self) -> npt.NDArray[np.bool_]:
        """Crops whose most likely class is "not a die" (what the reader drops)."""
        if self.not_die_prob is None:
            return np.zeros(len(self.face), bool)
        best_die = np.maximum(self.face_probs.max(axis=1, initial=0.0), self.cocked_prob)
        return np.asarray(self.not_die_prob > best_die, dtype=bool)

    def flat(self, mask: npt.NDArray[np.bool_]) -> FaceScores:
        """The same scores with the dice in ``mask`` read flat: their best face, at that face's own probability."""
        mask = np.asarray(mask, bool) & self.cocked
        if not mask.any():
            return self
        face, confidence = self.face.copy(), self.confidence.copy()
        face[mask] = self.face_probs[mask].argmax(axis=1) + 1
        confidence[mask] = self.face_probs[mask].max(axis=1)
        return dataclasses.replace(self, face=face, cocked=self.cocked & ~mask, confidence=confidence)

    def with_cocked(self, cocked: npt.NDArray[np.bool_], prob: npt.NDArray[np.float32]) -> FaceScores:
        """The same reads with the cocked test's call: ``cocked`` dice at ``prob``, the rest as :meth:`flat`."""
        cocked = np.asarray(cocked, bool)
        prob = np.asarray(prob, np.float32)
        flat = self.flat(~cocked)  # the classifier's cocked calls the test overrules
        face, confidence = flat.face.copy(), flat.confidence.copy()
        face[cocked] = _COCKED_FACE
        confidence[cocked] = prob[cocked]
        return dataclasses.replace(flat, face=face, cocked=cocked, confidence=confidence, cocked_prob=prob)

    def __getitem__(self, index: npt.NDArray[np.bool_] | npt.NDArray[np.int64]) -> FaceScores:
        """The scores of some crops (a boolean mask or indices), to follow a filtered reading."""
        return FaceScores(
            face=self.face[index],
            cocked=self.cocked[index],
            confidence=self.confidence[index],
            face_probs=self.face_probs[index],
            cocked_prob=self.cocked_prob[index],
            not_die_prob=None if self.not_die_prob is None else self.not_die_prob[index],
            embedding=None if self.embedding is None else self.embedding[index],
        )


def _class_faces(names: list[str], path: Path) -> npt.NDArray[np.int64]:
    """Face value of each class index (0 for "cocked", -1 for "not_die"), checked against the contract."""
    faces = []
    for name in names:
        if name == COCKED_NAME:
            faces.append(_COCKED_FACE)
        elif name == NOT_DIE_NAME:
            faces.append(_NOT_DIE_FACE)
        elif name.isdigit() and 1 <= int(name) <= 6:
            faces.append(int(name))
        else:
            raise ModelLoadError(f"ONNX model {path} has class name {name!r}; expected '1'..'6', 'cocked' or 'not_die'")
    if sorted(f for f in faces if f > 0) != [1, 2, 3, 4, 5, 6]:
        raise ModelLoadError(f"ONNX model {path} has classes {names}; expected each face '1'..'6' once")
    return np.asarray(faces, dtype=np.int64)


def _quarter_turns(tensor: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """View ``k`` of 4: the crops (n, 3, s, s) turned by k quarter turns."""
    return np.ascontiguousarray(np.rot90(tensor, k, axes=(2, 3)))


def _turns_and_mirrors(tensor: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """View ``k`` of 8: the four quarter turns, then the same mirrored."""
    turned = _quarter_turns(tensor, k % 4)
    return np.ascontiguousarray(turned[..., ::-1]) if k >= 4 else turned


#: Test-time views per setting of ``views``.
_VIEWS = {1: _quarter_turns, 2: _quarter_turns, 4: _quarter_turns, 8: _turns_and_mirrors}


class FaceClassifier:
    """Reads the top face of each die from the frame and its boxes."""

    def __init__(
        self,
        model: OnnxModel | str | Path,
        threads: int | None = None,
        views: int = 1,
        logit_bias: Sequence[float] | None = None,
        context_offsets: Sequence[float] = (0.0,),
        sure: float | None = None,
    ) -> None:
        if views not in _VIEWS:
            raise ValueError(f"views must be one of {sorted(_VIEWS)}, but got {views!r}")
        if sure is not None and not 0.0 < sure <= 1.0:
            raise ValueError(f"sure must be a probability in (0, 1], or None; got {sure!r}")
        #: A die whose first view reads a face at this probability or more skips the other views (None: never).
        self.sure = sure
        if not context_offsets or not all(-0.5 < float(o) < 1.0 for o in context_offsets):
            raise ValueError(f"context_offsets must be numbers in (-0.5, 1), at least one; got {context_offsets!r}")
        self.views = views
        self.model = model if isinstance(model, OnnxModel) else load_onnx(model, threads=threads)
        meta = self.model.metadata
        names = meta.get("names", ["1", "2", "3", "4", "5", "6", COCKED_NAME])
        if isinstance(names, dict):
            names = [names[k] for k in sorted(names)]
        self.names: list[str] = [str(n) for n in names]
        self.class_faces = _class_faces(self.names, self.model.path)
        bias = logit_bias if logit_bias is not None else meta.get("logit_bias", [0.0] * len(self.names))
        if not isinstance(bias, (list, tuple)) or len(bias) != len(self.names):
            raise ModelLoadError(
                f"ONNX model {self.model.path} has logit_bias {bias!r}; expected {len(self.names)} numbers"
            )
        self.logit_bias = np.asarray(bias, np.float32)
        self.crop_size = int(meta.get("crop_size", self.model.fixed_dim(2) or CROP_SIZE))
        self.crop_context = float(meta.get("crop_context", CROP_CONTEXT))
        #: Crop contexts each die is cut at (the model's own, plus any offsets asked for): averaged like views.
        self.contexts = tuple(max(0.0, self.crop_context + float(o)) for o in context_offsets)
        # A model exported with a fixed batch of one is run crop by crop.
        self.batch = self.model.fixed_dim(0)
        outputs = self.model.output_names
        self._logits_at = outputs.index(LOGITS_OUTPUT) if LOGITS_OUTPUT in outputs else 0
        self._embedding_at = outputs.index(EMBEDDING_OUTPUT) if EMBEDDING_OUTPUT in outputs else None

    @property
    def has_embedding(self) -> bool:
        """Whether the model gives each crop's pooled features (its ``embedding`` output)."""
        return self._embedding_at is not None

    def crops(self, frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike) -> npt.NDArray[np.uint8]:
        """The classifier's crops of each box, (k * n, s, s, 3) BGR uint8: all n dice at each of the k contexts."""
        return np.concatenate([extract_crops(frame, xyxy, self.crop_size, c) for c in self.contexts])

    def _run(self, tensor: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32] | None]:
        """Logits (n, k) of a tensor of crops, and their embeddings (n, d) where the model has them."""
        n = len(tensor)
        if n == 0:
            return np.empty((0, len(self.names)), np.float32), None
        step = self.batch or n
        runs = [self.model.run(tensor[i : i + step]) for i in range(0, n, step)]
        logits = np.concatenate([r[self._logits_at] for r in runs])
        if logits.ndim != 2 or logits.shape != (n, len(self.names)):
            raise ModelLoadError(
                f"ONNX model {self.model.path} returned logits of shape {logits.shape}; "
                f"expected ({n}, {len(self.names)})"
            )
        embedding = None
        if self._embedding_at is not None:
            embedding = np.concatenate([r[self._embedding_at] for r in runs]).reshape(n, -1).astype(np.float32)
        return np.asarray(logits, np.float32), embedding

    def embed_crops(self, crops: npt.NDArray[np.uint8], turns: int = 4) -> npt.NDArray[np.float32]:
        """Each crop's features at ``turns`` quarter turns, (n, turns, d): a taught die as every way up.

        Raises:
            ModelLoadError: the model has no ``embedding`` output.
        """
        if not self.has_embedding:
            raise ModelLoadError(
                f"ONNX model {self.model.path} has no {EMBEDDING_OUTPUT!r} output; add it with "
                "`python -m farklecam.models.training.embedding_output`"
            )
        if not 1 <= turns <= 4:
            raise ValueError(f"turns must be 1-4, but got {turns!r}")
        n = len(crops)
        tensor = crops_to_tensor(crops)
        views = np.concatenate([_quarter_turns(tensor, k) for k in range(turns)]) if n else tensor
        embedding = self._run(views)[1]
        if embedding is None:
            return np.empty((0, turns, 0), np.float32)
        return np.ascontiguousarray(embedding.reshape(turns, n, -1).transpose(1, 0, 2))

    def classify_crops(self, crops: npt.NDArray[np.uint8], copies: int = 1) -> FaceScores:
        """Classify ready-cut crops of shape (copies * n, s, s, 3), BGR uint8.

        With ``views`` > 1 each crop is also read turned by quarter turns (and mirrored, for 8)
        and the probabilities averaged: a highlight or a neighbour's pip misleads only some views.
        ``copies`` blocks of the same n dice (several contexts, :meth:`crops`) are averaged too.
        """
        if copies < 1 or len(crops) % copies:
            raise ValueError(f"{len(crops)} crops cannot be {copies} copies of the same dice")
        n = len(crops) // copies
        tensor = crops_to_tensor(crops)
        embedding: npt.NDArray[np.float32] | None
        if self.sure is not None and self.views > 1 and copies == 1 and n:
            probs, embedding = self._sure_first(tensor)
        else:
            views = [_VIEWS[self.views](tensor, k) for k in range(self.views)] if n else [tensor]
            logits, embedding = self._run(np.concatenate(views))
            probs = softmax(logits + self.logit_bias)
            probs = probs.reshape(len(views) * copies, n, len(self.names)).mean(axis=0)
        if embedding is not None:
            embedding = embedding[:n]  # the first view of the first context: every die's crop as cut
        is_die = self.class_faces != _NOT_DIE_FACE
        # The best *die* class: a crop the reader keeps is read as a die even when "not_die"
        # came close; its confidence stays the unrenormalised probability, so a crop that
        # might be no die reads as uncertain rather than as a sure face.
        best = np.flatnonzero(is_die)[probs[:, is_die].argmax(axis=1)] if n else np.zeros(0, np.int64)
        face_probs = np.zeros((n, 6), np.float32)
        for cls, face in enumerate(self.class_faces):
            if face > 0:
                face_probs[:, face - 1] = probs[:, cls]
        cocked_prob = probs[:, self.class_faces == _COCKED_FACE].sum(axis=1).astype(np.float32)
        not_die_prob = probs[:, ~is_die].sum(axis=1).astype(np.float32) if not is_die.all() else None
        best_face = self.class_faces[best]
        return FaceScores(
            face=best_face,
            cocked=best_face == _COCKED_FACE,
            confidence=probs[np.arange(n), best].astype(np.float32),
            face_probs=face_probs,
            cocked_prob=cocked_prob,
            not_die_prob=not_die_prob,
            embedding=embedding,
        )

    def _sure_first(
        self, tensor: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32] | None]:
        """Class probabilities (n, k): the first view alone where it reads a face at ``sure`` or more.

        The other dice get every view averaged; only they are run through the other views. The
        first view's embeddings come along.
        """
        logits, embedding = self._run(tensor)
        first = softmax(logits + self.logit_bias)
        best = first.argmax(axis=1)
        unsure = np.flatnonzero((first.max(axis=1) < (self.sure or 1.0)) | (self.class_faces[best] <= 0))
        if len(unsure) == 0:
            return first, embedding
        rest = np.concatenate([_VIEWS[self.views](tensor[unsure], k) for k in range(1, self.views)])
        others = softmax(self._run(rest)[0] + self.logit_bias).reshape(self.views - 1, len(unsure), -1)
        probs = first.copy()
        probs[unsure] = (first[unsure] + others.sum(axis=0)) / self.views
        return probs, embedding

    def __call__(self, frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike) -> FaceScores:
        """Classify the die in each box of a BGR frame."""
        return self.classify_crops(self.crops(frame, xyxy), copies=len(self.contexts))
