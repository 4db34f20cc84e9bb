"""The one result type of the reader: every die in a frame, as parallel arrays.

A :class:`Reading` is frozen and validated once when built; it is filtered with boolean
masks (``reading[reading.status == DieStatus.OK]``) and changed with :func:`dataclasses.replace`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["RETHROW_STATUSES", "Die", "DieStatus", "Reading", "TrayState"]

_STATUS_DTYPE = "<U9"


class DieStatus(StrEnum):
    """What the reader concluded about one die."""

    OK = "ok"
    """Flat on the tray and read with confidence: it scores."""
    COCKED = "cocked"
    """Leaning, no face flat up: the rules say throw it again."""
    OFF_TRAY = "off_tray"
    """Came to rest outside the tray: the rules say throw it again."""
    UNCERTAIN = "uncertain"
    """Found but not read with confidence: a person must confirm or rethrow it."""


class TrayState(StrEnum):
    """Where the tray outline of a reading came from, and whether it may call dice off the tray."""

    MARKED = "marked"
    """Given: clicked corners, ArUco markers, or a generated scene's labels. Its off-tray calls stand."""
    FOUND = "found"
    """Found in the picture, and nothing in the picture speaks against it. Its off-tray calls stand."""
    UNSURE = "unsure"
    """Found in the picture, but the picture speaks against it: no die is called off."""
    NONE = "none"
    """No tray: no die is called off."""


#: Statuses of dice the rules send back to the throw: a die leaning with no face up, a die off the tray.
#: A die the reader cannot tell (``uncertain``: cut by the picture's edge, hidden, blurred) is no
#: rethrow: it lies as it fell, and a player looks at it and says its face.
RETHROW_STATUSES: frozenset[DieStatus] = frozenset({DieStatus.COCKED, DieStatus.OFF_TRAY})


@dataclass(frozen=True, slots=True)
class Die:
    """One die of a reading, as plain Python values (what a scorer or JSON wants)."""

    face: int | None  #: top face 1-6, or None when no face could be read (a cocked die)
    box: tuple[float, float, float, float]  #: ``(x1, y1, x2, y2)`` in frame pixels
    confidence: float  #: detector confidence that this is a die, 0..1
    status: DieStatus
    face_confidence: float  #: classifier confidence in ``face`` (or in "cocked"), 0..1

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"face", "box", "confidence", "status"}`` with rounded numbers."""
        return {
            "face": self.face,
            "box": [round(v, 1) for v in self.box],
            "confidence": round(self.confidence, 3),
            "status": self.status.value,
        }


def _column(name: str, value: npt.ArrayLike, dtype: npt.DTypeLike | None, n: int) -> npt.NDArray[Any]:
    """``value`` as a fresh 1D array of length ``n`` (the number of boxes), or a shape-explicit error."""
    arr = np.array(value, dtype=dtype)
    if arr.size == 0 and n == 0:
        arr = arr.reshape(0)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a 1D np.ndarray with shape ({n},) to match xyxy, but got shape {arr.shape}")
    return arr


@dataclass(frozen=True, eq=False)
class Reading:
    """Every die found in one frame, as parallel arrays of length n.

    Inputs are converted to the dtypes of the annotations and checked; a wrong shape raises ``ValueError``.
    """

    xyxy: npt.NDArray[np.float32]  #: boxes (n, 4), ``x1, y1, x2, y2`` in frame pixels
    confidence: npt.NDArray[np.float32]  #: detector confidence (n,), 0..1
    face: npt.NDArray[np.int64]  #: top face (n,): 1-6, or 0 for unknown (cocked, unread)
    face_confidence: npt.NDArray[np.float32]  #: classifier confidence (n,), 0..1
    status: npt.NDArray[np.str_]  #: :class:`DieStatus` values (n,)
    image_size: tuple[int, int] | None = None  #: ``(width, height)`` of the frame
    tray: npt.NDArray[np.float32] | None = None  #: the tray outline (k, 2) used for the off-tray test
    frame_index: int | None = None  #: index of the frame in a video stream
    timestamp: float | None = None  #: capture time in seconds
    data: Mapping[str, npt.NDArray[Any]] = field(default_factory=dict)  #: extra per-die columns, e.g. ``"in_tray"``
    tray_set_aside: bool = False  #: a tray was marked, but the camera moved since: read without it
    straight_down_doubted: bool = False  #: said to look straight down, the dice agreed on a tilt: read under theirs
    tray_state: str = TrayState.NONE.value  #: a :class:`TrayState` value

    def __post_init__(self) -> None:
        xyxy = np.array(self.xyxy, dtype=np.float32)
        if xyxy.size == 0:
            xyxy = xyxy.reshape(0, 4)  # empty readings may be built from plain []
        if xyxy.ndim != 2 or xyxy.shape[1] != 4:
            raise ValueError(f"xyxy must be a 2D np.ndarray with shape (_, 4), but got shape {xyxy.shape}")
        n = xyxy.shape[0]
        columns: dict[str, npt.NDArray[Any]] = {
            "xyxy": xyxy,
            "confidence": _column("confidence", self.confidence, np.float32, n),
            "face": _column("face", self.face, np.int64, n),
            "face_confidence": _column("face_confidence", self.face_confidence, np.float32, n),
            "status": _column("status", self.status, _STATUS_DTYPE, n),
        }
        face = columns["face"]
        if np.any((face < 0) | (face > 6)):
            raise ValueError(f"face must hold 0 (unknown) or 1-6, but got {sorted(set(face.tolist()))}")
        unknown = set(columns["status"].tolist()) - {s.value for s in DieStatus}
        if unknown:
            raise ValueError(f"status must hold {[s.value for s in DieStatus]}, but got {sorted(unknown)}")
        data = {str(k): _column(f"data[{k!r}]", v, None, n) for k, v in self.data.items()}
        if self.tray is not None:
            tray = np.array(self.tray, dtype=np.float32)
            if tray.ndim != 2 or tray.shape[1] != 2 or tray.shape[0] < 3:
                raise ValueError(f"tray must be a 2D np.ndarray with shape (k>=3, 2), but got shape {tray.shape}")
            columns["tray"] = tray
        if self.tray_state not in {s.value for s in TrayState}:
            raise ValueError(f"tray_state must be one of {[s.value for s in TrayState]}, but got {self.tray_state!r}")
        object.__setattr__(self, "tray_state", TrayState(self.tray_state).value)
        if self.image_size is not None and (len(self.image_size) != 2 or min(self.image_size) <= 0):
            raise ValueError(f"image_size must be (width, height) > 0, but got {self.image_size}")
        # Frozen means frozen: the arrays are read-only, so a reading cannot change under a consumer.
        for name, value in columns.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        for value in data.values():
            value.setflags(write=False)
        object.__setattr__(self, "data", data)

    @classmethod
    def empty(cls, image_size: tuple[int, int] | None = None) -> Reading:
        """A reading with no dice (of a frame of the given ``(width, height)``)."""
        return cls(
            xyxy=np.empty((0, 4), np.float32),
            confidence=np.empty(0, np.float32),
            face=np.empty(0, np.int64),
            face_confidence=np.empty(0, np.float32),
            status=np.empty(0, _STATUS_DTYPE),
            image_size=image_size,
        )

    def __len__(self) -> int:
        return int(self.xyxy.shape[0])

    def __getitem__(self, index: int | slice | list[int] | npt.NDArray[Any]) -> Reading:
        """Select dice by int, slice, list of ints or boolean mask; returns a new Reading."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        if isinstance(index, np.ndarray) and index.dtype == bool and index.shape != (len(self),):
            raise IndexError(f"boolean mask must have shape ({len(self)},), but got shape {index.shape}")
        return dataclasses.replace(
            self,
            xyxy=self.xyxy[index],
            confidence=self.confidence[index],
            face=self.face[index],
            face_confidence=self.face_confidence[index],
            status=self.status[index],
            data={k: v[index] for k, v in self.data.items()},
        )

    def with_face(self, index: int, face: int) -> Reading:
        """A copy where the ``uncertain`` die ``index`` reads ``face`` (``ok``, confidence 1): a player said so.

        Raises:
            ValueError: no such die, a die that is not ``uncertain``, or a face outside 1-6.
        """
        if not 0 <= index < len(self):
            raise ValueError(f"no die {index}: this throw has dice 0..{len(self) - 1}")
        if self.status[index] != DieStatus.UNCERTAIN:
            raise ValueError(f"die {index} is read {self.status[index]}, not uncertain: only an unread die is told")
        if not 1 <= face <= 6:
            raise ValueError(f"a face is 1-6, got {face}")
        faces, sure, status = self.face.copy(), self.face_confidence.copy(), self.status.copy()
        faces[index], sure[index], status[index] = face, 1.0, DieStatus.OK.value
        return dataclasses.replace(self, face=faces, face_confidence=sure, status=status)

    def dice(self) -> tuple[Die, ...]:
        """The dice as :class:`Die` values, in array order."""
        out = []
        for i in range(len(self)):
            x1, y1, x2, y2 = (float(v) for v in self.xyxy[i])
            face = int(self.face[i])
            out.append(
                Die(
                    face=face or None,
                    box=(x1, y1, x2, y2),
                    confidence=float(self.confidence[i]),
                    status=DieStatus(str(self.status[i])),
                    face_confidence=float(self.face_confidence[i]),
                )
            )
        return tuple(out)

    @property
    def faces(self) -> tuple[int, ...]:
        """Faces of the dice that score (status ok), sorted: the roll a scorer sees."""
        ok = (self.status == DieStatus.OK) & (self.face > 0)
        return tuple(sorted(int(f) for f in self.face[ok]))

    @property
    def rethrow_mask(self) -> npt.NDArray[np.bool_]:
        """Boolean mask of the dice to throw again: leaning (cocked) or off the tray."""
        return np.isin(self.status, [s.value for s in RETHROW_STATUSES])

    @property
    def rethrow(self) -> int:
        """How many dice must be thrown again: leaning (cocked) or off the tray."""
        return int(self.rethrow_mask.sum())

    @property
    def unclear(self) -> int:
        """How many dice the reader could not tell (``uncertain``): a player must look and say their faces."""
        return int(np.count_nonzero(self.status == DieStatus.UNCERTAIN))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form: ``{"dice": [...], "rethrow": int, "unclear": int, "faces": [...], "tray": str}``.

        ``tray`` is the :class:`TrayState`: ``"marked"``, ``"found"``, ``"unsure"`` or ``"none"``.
        """
        return {
            "dice": [d.to_dict() for d in self.dice()],
            "rethrow": self.rethrow,
            "unclear": self.unclear,
            "faces": list(self.faces),
            "tray": self.tray_state,
        }
