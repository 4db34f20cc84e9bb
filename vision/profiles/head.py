"""How a profile's corrections change a die's class probabilities: its nearest taught dice vote.

The classifier's own probabilities count as :data:`PRIOR_VOTES` votes; each of the
:data:`NEIGHBOURS` taught dice most like the die (cosine similarity of the classifier's pooled
features, at the quarter turn that matches best) adds ``exp((similarity - 1) / SIMILARITY_SCALE)``
votes for the class it was taught. A die much like some taught ones takes their word; a die
like none keeps the classifier's, so a profile taught only a few faces leaves the others alone.
A nearest-prototype head and a logistic head, mixed with the classifier at a fixed weight,
speak for the taught classes everywhere and cost faces no correction spoke for; the head and
its three constants were chosen with ``bench/profile_heads.py`` on the real photos' validation
slice (figures in ``models/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from farklecam.vision.faces.classifier import CLASSES

__all__ = ["NEIGHBOURS", "PRIOR_VOTES", "SIMILARITY_SCALE", "VOUCH_VOTES", "NeighbourVotes"]

#: The classifier's probabilities weigh as much as this many votes.
PRIOR_VOTES = 0.3
#: Taught dice that vote on each die.
NEIGHBOURS = 5
#: A neighbour at cosine similarity s votes exp((s - 1) / SIMILARITY_SCALE): 0.37 at 0.96, 0.08 at 0.9.
SIMILARITY_SCALE = 0.04
#: Taught dice whose votes for one face add up to this (one taught die at cosine similarity 0.91) speak
#: for it: that face is a number at this table.
VOUCH_VOTES = 0.1


def _unit(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), np.float32)


@dataclass(frozen=True, eq=False)
class NeighbourVotes:
    """The taught dice that can vote: unit features (m, turns, dim), classes (m,) as indices into CLASSES.

    ``prior``, ``neighbours`` and ``scale`` are :data:`PRIOR_VOTES`, :data:`NEIGHBOURS` and
    :data:`SIMILARITY_SCALE` unless a measurement asks for others.
    """

    features: npt.NDArray[np.float32]
    classes: npt.NDArray[np.int64]
    prior: float = PRIOR_VOTES
    neighbours: int = NEIGHBOURS
    scale: float = SIMILARITY_SCALE

    @classmethod
    def build(
        cls,
        features: npt.NDArray[np.float32],
        classes: npt.NDArray[np.int64],
        *,
        prior: float = PRIOR_VOTES,
        neighbours: int = NEIGHBOURS,
        scale: float = SIMILARITY_SCALE,
    ) -> NeighbourVotes:
        """From a profile's features (n, turns, dim) and the class each correction speaks for (-1: none)."""
        speaks = np.asarray(classes) >= 0
        taught = np.asarray(features, np.float32)[speaks] if speaks.any() else np.empty((0, 1, 1), np.float32)
        return cls(_unit(taught), np.asarray(classes, np.int64)[speaks], prior, neighbours, scale)

    def __len__(self) -> int:
        return len(self.classes)

    def votes(self, embedding: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Votes (n, len(CLASSES)) the taught dice cast on dice with these features (n, dim)."""
        queries = _unit(np.asarray(embedding, np.float32).reshape(len(embedding), -1))
        votes = np.zeros((len(queries), len(CLASSES)), np.float32)
        if not len(self) or not len(queries):
            return votes
        m = len(self.features)
        # einsum, not a BLAS product: a threaded BLAS woke its threads for this tiny product and, beside
        # onnxruntime's, took milliseconds on two busy cores instead of a tenth of one.
        similarity = np.einsum("qd,mtd->qmt", queries, self.features).max(axis=2)
        k = min(self.neighbours, m)
        if k < m:
            nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        else:
            nearest = np.broadcast_to(np.arange(m), (len(queries), m))
        weight = np.exp((np.take_along_axis(similarity, nearest, axis=1) - 1.0) / self.scale)
        rows = np.repeat(np.arange(len(queries)), k)
        np.add.at(votes, (rows, self.classes[nearest].reshape(-1)), weight.reshape(-1).astype(np.float32))
        return votes

    def vouched_faces(self, embedding: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        """The face (1-6) the taught dice speak for on each die with at least :data:`VOUCH_VOTES` votes; else 0.

        A face the table taught (a skull for its one, an emblem for its six) is a number there, not a
        symbol for a person to look at.
        """
        votes = self.votes(embedding)
        if not len(votes):
            return np.zeros(0, np.int64)
        best = votes.argmax(axis=1)
        strong = (votes.max(axis=1) >= VOUCH_VOTES) & (best < 6)
        return np.where(strong, best + 1, 0).astype(np.int64)

    def mix(self, probs: npt.NDArray[np.float32], embedding: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The classifier's probabilities (n, len(CLASSES)) with the taught dice's votes: still probabilities."""
        votes = self.votes(embedding)
        mixed = self.prior * np.asarray(probs, np.float32) + votes
        return np.asarray(mixed / (self.prior + votes.sum(axis=1, keepdims=True)), np.float32)
