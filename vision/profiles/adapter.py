"""A profile bound to the reader's face classifier: takes corrections and adapts each read's scores.

The features a profile holds are one classifier's; binding computes them again from the stored
crops where they came from another. Corrections made through :meth:`ProfileAdapter.correct`
count from the next read; those another process writes are looked for at most every
:data:`REFRESH_S` seconds, so a correction takes effect within a second wherever it was made. A
profile folder that becomes unreadable under a running reader (forgotten meanwhile) leaves it
reading with the corrections it already holds: a read never fails for the profile's files.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from farklecam.errors import ProfileError
from farklecam.vision.faces.classifier import FaceClassifier, FaceScores
from farklecam.vision.profiles.head import NeighbourVotes
from farklecam.vision.profiles.profile import Correction, Profile

__all__ = ["FEATURE_TURNS", "REFRESH_S", "ProfileAdapter", "classifier_identity"]

#: A correction's features are kept at this many quarter turns: a die taught once is known any way up.
FEATURE_TURNS = 4
#: Seconds between looks for corrections written by another process.
REFRESH_S = 0.5


@functools.lru_cache(maxsize=8)
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def classifier_identity(classifier: FaceClassifier) -> str:
    """A name for the classifier's weights (a hash of its file): features of one are comparable only with its own."""
    path = classifier.model.path
    stat = path.stat()
    return _file_digest(path.resolve(), stat.st_size, stat.st_mtime_ns)


class ProfileAdapter:
    """One profile and the classifier whose features it compares.

    Raises:
        ProfileError: the classifier gives no features (a model without the ``embedding`` output).
    """

    def __init__(self, profile: Profile, classifier: FaceClassifier) -> None:
        if not isinstance(classifier, FaceClassifier) or not classifier.has_embedding:
            raise ProfileError(
                "a profile needs the face classifier's 'embedding' output; add it with "
                "`python -m farklecam.models.training.embedding_output MODEL`"
            )
        self.profile = profile
        self.classifier = classifier
        self.identity = classifier_identity(classifier)
        self._lock = threading.Lock()
        self._votes: NeighbourVotes | None = None
        self._built_version = -1
        self._checked = time.monotonic()
        if len(profile) and profile.embedding_source != self.identity:
            profile.recompute(self._embed, self.identity)

    def _embed(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        return self.classifier.embed_crops(crops, FEATURE_TURNS)

    def correct(
        self,
        frame: npt.NDArray[np.uint8],
        boxes: npt.ArrayLike,
        truths: Sequence[str],
        *,
        faces: Sequence[int | None] | None = None,
        source: str | None = None,
    ) -> list[Correction]:
        """Store that the dice in ``boxes`` (n, 4) of this BGR frame are ``truths`` (one of ``TRUTHS`` each).

        ``faces`` gives the face of a die off the tray where it is known. The next read uses them.

        Raises:
            ValueError: a truth or face that is not one, or as many truths as boxes.
            ProfileError: the profile cannot be written.
        """
        xyxy = np.asarray(boxes, np.float32).reshape(-1, 4)
        if len(truths) != len(xyxy) or (faces is not None and len(faces) != len(xyxy)):
            raise ValueError(f"{len(xyxy)} boxes need as many truths (and faces), got {len(truths)}")
        if not len(xyxy):
            return []
        crops = self.classifier.crops(frame, xyxy)[: len(xyxy)]  # the classifier's own context
        features = self._embed(crops)
        size = (int(frame.shape[1]), int(frame.shape[0]))
        added = [
            self.profile.add(
                crops[i],
                features[i],
                truth=truths[i],
                face=None if faces is None else faces[i],
                box=xyxy[i].tolist(),
                frame_size=size,
                crop_context=self.classifier.contexts[0],
                classifier=self.identity,
                source=source,
            )
            for i in range(len(xyxy))
        ]
        return added

    def _current(self) -> NeighbourVotes:
        """The taught dice's votes as of now: rebuilt when the profile changed, another process's changes included."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked >= REFRESH_S:
                self._checked = now
                with contextlib.suppress(ProfileError):  # a folder gone under a running table: keep what is known
                    self.profile.refresh()
            if self._votes is None or self._built_version != self.profile.version:
                if len(self.profile) and self.profile.embedding_source != self.identity:
                    self.profile.recompute(self._embed, self.identity)
                version = self.profile.version
                self._votes = NeighbourVotes.build(*self.profile.features())
                self._built_version = version
            return self._votes

    def vouched_faces(self, scores: FaceScores) -> npt.NDArray[np.int64]:
        """Per die, the face this table's taught dice speak for strongly (0 where they do not)."""
        n = len(scores.face)
        if scores.embedding is None or not n:
            return np.zeros(n, np.int64)
        votes = self._current()
        return votes.vouched_faces(scores.embedding) if len(votes) else np.zeros(n, np.int64)

    def adapt(self, scores: FaceScores) -> FaceScores:
        """The classifier's scores with this table's taught dice voting (as they are where they carry no features)."""
        if scores.embedding is None or not len(scores.face):
            return scores
        votes = self._current()
        if not len(votes):
            return scores
        mixed = votes.mix(scores.class_probs(), scores.embedding)
        # A die taught as no die is dropped even by a classifier that has no such class.
        has_not_die = scores.not_die_prob is not None or bool(mixed[:, -1].any())
        return FaceScores.from_class_probs(mixed, has_not_die=has_not_die, embedding=scores.embedding)
