"""One table's profile on disk: the corrections a user gave, each with its crop and the classifier's features.

A profile is a folder. Each correction is one line of ``corrections.jsonl`` (the truth, the box,
the frame's size, when, the picture it came from), its crop a small PNG under ``crops/`` (so
the features can be computed again for another classifier), and its features, one vector per
quarter turn, a row of ``embeddings.f32``. A correction is committed by its line, written
last; another process's new lines are picked up by :meth:`Profile.refresh`, so a reader
follows corrections made elsewhere while it runs.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import ProfileError
from farklecam.vision.faces.classifier import CLASSES, COCKED_NAME, NOT_DIE_NAME

__all__ = [
    "CORRECTIONS_FILE",
    "CROPS_DIR",
    "EMBEDDINGS_FILE",
    "FORMAT",
    "META_FILE",
    "OFF_TRAY",
    "TRUTHS",
    "Correction",
    "Profile",
    "vote_class",
]

#: What a correction may say a die is: a face, leaning with no face up, off the tray, or no die at all.
OFF_TRAY = "off_tray"
TRUTHS: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", COCKED_NAME, OFF_TRAY, NOT_DIE_NAME)
#: The files of a profile folder.
META_FILE, CORRECTIONS_FILE, EMBEDDINGS_FILE, CROPS_DIR = "profile.json", "corrections.jsonl", "embeddings.f32", "crops"
#: Version of the folder's layout, written into ``profile.json``.
FORMAT = 1


def vote_class(truth: str, face: int | None) -> int:
    """The classifier class (index into :data:`CLASSES`) a correction speaks for; -1 where it says nothing of one.

    A die off the tray still shows its face where the correction gives one.
    """
    if truth == OFF_TRAY:
        return face - 1 if face is not None else -1
    return CLASSES.index(truth)


@dataclass(frozen=True, slots=True)
class Correction:
    """One die a user said the truth of.

    Attributes:
        id: unique within the profile; names the crop file.
        truth: one of :data:`TRUTHS`.
        face: the top face 1-6 where known (a face's own truth, or a die off the tray whose face was given).
        box: the die's box ``x1, y1, x2, y2`` in the frame's pixels.
        frame_size: the frame's ``(width, height)``.
        when: ISO 8601 time (UTC) the correction was made.
        crop: the crop's path inside the profile folder.
        crop_context: context around the box the crop was cut with (a share of its longer side, each side).
        embedding: row of the correction's features in ``embeddings.f32``.
        source: the picture it came from, where known.
    """

    id: str
    truth: str
    face: int | None
    box: tuple[float, float, float, float]
    frame_size: tuple[int, int]
    when: str
    crop: str
    crop_context: float
    embedding: int
    source: str | None = None

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Correction:
        """A correction from its line in ``corrections.jsonl`` (ValueError, KeyError or TypeError if malformed)."""
        x1, y1, x2, y2 = (float(v) for v in row["box"])
        width, height = (int(v) for v in row["frame_size"])
        correction = cls(
            id=str(row["id"]),
            truth=str(row["truth"]),
            face=None if row.get("face") is None else int(row["face"]),
            box=(x1, y1, x2, y2),
            frame_size=(width, height),
            when=str(row["when"]),
            crop=str(row["crop"]),
            crop_context=float(row["crop_context"]),
            embedding=int(row["embedding"]),
            source=None if row.get("source") is None else str(row["source"]),
        )
        if correction.truth not in TRUTHS:
            raise ValueError(f"not a correction: {row!r}")
        return correction

    def to_json(self) -> dict[str, Any]:
        """The correction's line in ``corrections.jsonl``."""
        row = asdict(self)
        row["box"], row["frame_size"] = [round(v, 2) for v in self.box], list(self.frame_size)
        return row

    @property
    def vote(self) -> int:
        """The class this correction speaks for (:func:`vote_class`)."""
        return vote_class(self.truth, self.face)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Profile:
    """One table's corrections and their features, kept in memory and in its folder.

    Use :class:`farklecam.service.profiles.store.ProfileStore` to find or create one by name.
    Thread-safe: a live window's reads and a player's corrections may come from two threads.

    Raises:
        ProfileError: the folder is not a readable profile.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.name = self.folder.name
        self._lock = threading.RLock()
        try:
            meta = json.loads((self.folder / META_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise ProfileError(f"profile {self.name!r} in {self.folder} cannot be read: {exc}") from exc
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ProfileError(f"profile {self.name!r} in {self.folder} is not a format {FORMAT} profile")
        self._meta: dict[str, Any] = meta
        self._corrections: list[Correction] = []
        self._rows = np.empty((0, 0, 0), np.float32)  # features in correction order: (n, turns, dim)
        self._read_offset = 0
        #: Bumped by every change, so that whatever is built from the corrections knows to rebuild.
        self.version = 0
        self.refresh()

    @classmethod
    def create(cls, folder: Path) -> Profile:
        """A new, empty profile in ``folder`` (which must not hold one yet)."""
        try:
            (folder / CROPS_DIR).mkdir(parents=True, exist_ok=True)
            meta = {"format": FORMAT, "name": folder.name, "created": _now(), "embedding": None}
            (folder / META_FILE).write_text(json.dumps(meta, indent=1) + "\n")
            (folder / CORRECTIONS_FILE).touch()
        except OSError as exc:
            raise ProfileError(f"cannot create profile {folder.name!r} in {folder}: {exc}") from exc
        return cls(folder)

    @property
    def corrections(self) -> tuple[Correction, ...]:
        """Every correction, oldest first."""
        with self._lock:
            return tuple(self._corrections)

    def __len__(self) -> int:
        return len(self._corrections)

    @property
    def embedding_source(self) -> str | None:
        """The :func:`~farklecam.vision.profiles.adapter.classifier_identity` of the features' classifier."""
        found = self._meta.get("embedding")
        return str(found["classifier"]) if isinstance(found, dict) else None

    def features(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The features (n, turns, dim) of every correction and the class each speaks for (n,), -1 for none."""
        with self._lock:
            votes = np.array([c.vote for c in self._corrections], np.int64)
            return self._rows, votes

    def _embedding_shape(self) -> tuple[int, int] | None:
        found = self._meta.get("embedding")
        return (int(found["turns"]), int(found["dim"])) if isinstance(found, dict) else None

    def refresh(self) -> bool:
        """Take in corrections written since the last look (by this process or another); whether there were any.

        Raises:
            ProfileError: the folder became unreadable.
        """
        path = self.folder / CORRECTIONS_FILE
        with self._lock:
            try:
                size = path.stat().st_size
                if size == self._read_offset:
                    return False
                if size < self._read_offset:  # rewritten (features computed again): read it all afresh
                    self._corrections, self._read_offset = [], 0
                    self._rows = np.empty((0, 0, 0), np.float32)
                with path.open("rb") as handle:
                    handle.seek(self._read_offset)
                    tail = handle.read()
                meta = json.loads((self.folder / META_FILE).read_text())
            except (OSError, ValueError) as exc:
                raise ProfileError(f"profile {self.name!r} in {self.folder} cannot be read: {exc}") from exc
            complete = tail[: tail.rfind(b"\n") + 1]  # a line still being written waits for the next look
            new = []
            for line in complete.decode().splitlines():
                if not line.strip():
                    continue
                try:
                    new.append(Correction.from_json(json.loads(line)))
                except (ValueError, KeyError, TypeError) as exc:
                    raise ProfileError(f"{path}: a line is no correction ({exc}): {line[:80]!r}") from exc
            self._meta = meta
            self._read_offset += len(complete)
            if not new:
                return False
            rows = self._load_rows(new)
            self._corrections.extend(new)
            self._rows = rows if not len(self._rows) else np.concatenate([self._rows, rows])
            self.version += 1
            return True

    def _load_rows(self, corrections: Sequence[Correction]) -> npt.NDArray[np.float32]:
        """The features (n, turns, dim) of ``corrections``, read from ``embeddings.f32``."""
        shape = self._embedding_shape()
        if shape is None:
            return np.empty((len(corrections), 0, 0), np.float32)
        row_size = shape[0] * shape[1]
        path = self.folder / EMBEDDINGS_FILE
        rows = path.stat().st_size // (4 * row_size) if path.exists() else 0
        index = np.array([c.embedding for c in corrections], np.int64)
        if index.max(initial=-1) >= rows:
            raise ProfileError(f"profile {self.name!r}: {EMBEDDINGS_FILE} is shorter than its corrections")
        table = np.memmap(path, np.float32, mode="r", shape=(rows, *shape))
        return np.array(table[index], np.float32)

    def add(
        self,
        crop: npt.NDArray[np.uint8],
        features: npt.NDArray[np.float32],
        *,
        truth: str,
        box: Sequence[float],
        frame_size: tuple[int, int],
        crop_context: float,
        classifier: str,
        face: int | None = None,
        source: str | None = None,
    ) -> Correction:
        """Store one correction: the die's crop (BGR), its features (turns, dim) by ``classifier``, and the truth.

        Raises:
            ValueError: a truth not in :data:`TRUTHS`, a face outside 1-6 or disagreeing with the truth,
                or features of another shape or classifier than the profile's.
            ProfileError: the folder cannot be written.
        """
        if truth not in TRUTHS:
            raise ValueError(f"a correction's truth is one of {', '.join(TRUTHS)}; got {truth!r}")
        if truth.isdigit():
            if face not in (None, int(truth)):
                raise ValueError(f"truth {truth!r} with face {face}: a face's truth is that face")
            face = int(truth)
        elif face is not None and (truth != OFF_TRAY or not 1 <= face <= 6):
            raise ValueError(f"only a die off the tray carries a face beside its truth; got {truth!r} with {face!r}")
        vectors = np.ascontiguousarray(features, np.float32)
        with self._lock:
            self.refresh()
            shape = self._embedding_shape()
            if vectors.ndim != 2 or (shape is not None and vectors.shape != shape):
                raise ValueError(f"features must have shape {shape or '(turns, dim)'}; got {vectors.shape}")
            if shape is not None and classifier != self.embedding_source:
                raise ValueError(f"profile {self.name!r} holds features of classifier {self.embedding_source}")
            ident = uuid.uuid4().hex[:12]
            crop_name = f"{CROPS_DIR}/{ident}.png"
            try:
                if shape is None:
                    turns, dim = vectors.shape
                    self._meta["embedding"] = {"classifier": classifier, "turns": int(turns), "dim": int(dim)}
                    self._write_meta()
                ok, png = cv2.imencode(".png", crop)
                if not ok:
                    raise ProfileError(f"cannot encode the crop of a correction for profile {self.name!r}")
                (self.folder / crop_name).write_bytes(png.tobytes())
                with (self.folder / EMBEDDINGS_FILE).open("ab") as handle:
                    end = handle.seek(0, os.SEEK_END)
                    row, cut = divmod(end, vectors.nbytes)
                    if cut:  # a row a crash cut short is written over, so that every row stays aligned
                        handle.truncate(end - cut)
                    handle.write(vectors.tobytes())
                correction = Correction(
                    id=ident,
                    truth=truth,
                    face=face,
                    box=(float(box[0]), float(box[1]), float(box[2]), float(box[3])),
                    frame_size=(int(frame_size[0]), int(frame_size[1])),
                    when=_now(),
                    crop=crop_name,
                    crop_context=float(crop_context),
                    embedding=int(row),
                    source=source,
                )
                with (self.folder / CORRECTIONS_FILE).open("a") as handle:
                    handle.write(json.dumps(correction.to_json()) + "\n")
            except OSError as exc:
                raise ProfileError(f"cannot write to profile {self.name!r} in {self.folder}: {exc}") from exc
            self.refresh()
            return correction

    def crop(self, correction: Correction) -> npt.NDArray[np.uint8]:
        """A correction's crop, BGR (ProfileError if its file is gone or unreadable)."""
        image = cv2.imread(str(self.folder / correction.crop), cv2.IMREAD_COLOR)
        if image is None:
            raise ProfileError(f"profile {self.name!r}: crop {correction.crop} is missing or unreadable")
        return np.asarray(image, np.uint8)

    def recompute(self, embed: Callable[[npt.NDArray[np.uint8]], npt.NDArray[np.float32]], classifier: str) -> None:
        """Compute every correction's features again from its crop with another classifier, ``embed``.

        ``embed`` takes crops (n, s, s, 3) to features (n, turns, dim); ``classifier`` is its identity.

        Features of one network mean nothing to another; the crops keep a profile usable when the
        shipped classifier changes.

        Raises:
            ProfileError: a crop is missing, or the folder cannot be written.
        """
        with self._lock:
            self.refresh()
            crops = [self.crop(c) for c in self._corrections]
            vectors = embed(np.stack(crops)) if crops else np.empty((0, 0, 0), np.float32)
            vectors = np.ascontiguousarray(vectors, np.float32)
            renumbered = [
                Correction.from_json({**c.to_json(), "embedding": i}) for i, c in enumerate(self._corrections)
            ]
            try:
                embeddings = self.folder / f"{EMBEDDINGS_FILE}.new"
                embeddings.write_bytes(vectors.tobytes())
                lines = self.folder / f"{CORRECTIONS_FILE}.new"
                lines.write_text("".join(json.dumps(c.to_json()) + "\n" for c in renumbered))
                shape = vectors.shape[1:] if crops else (0, 0)
                self._meta["embedding"] = (
                    {"classifier": classifier, "turns": int(shape[0]), "dim": int(shape[1])} if crops else None
                )
                os.replace(embeddings, self.folder / EMBEDDINGS_FILE)
                os.replace(lines, self.folder / CORRECTIONS_FILE)
                self._write_meta()
            except OSError as exc:
                raise ProfileError(f"cannot write to profile {self.name!r} in {self.folder}: {exc}") from exc
            self._corrections = renumbered
            self._rows = vectors
            self._read_offset = (self.folder / CORRECTIONS_FILE).stat().st_size
            self.version += 1

    def _write_meta(self) -> None:
        path = self.folder / f"{META_FILE}.new"
        path.write_text(json.dumps(self._meta, indent=1) + "\n")
        os.replace(path, self.folder / META_FILE)
