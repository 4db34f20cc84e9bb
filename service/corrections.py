"""A player's word on one die of a settled throw, applied to the camera's reading of it.

The reader is good, not perfect: a 6 read where a 5 lies, a flat die called leaning, a
shadow taken for a die, a die it never saw. The players see the dice; one correction
(:data:`~farklecam.scoring.actions.CORRECTION_FIXES`) changes the reading the way the table
looks, and the table (:meth:`farklecam.service.table.TableSession.correct`) scores the throw
again from it. Dice keep their numbers (``#3`` is the reading's third die) except that a die
said to be no die leaves the reading and an added one comes last.

Everything here is pure: a reading in, a new reading out, and a :class:`ValueError` saying
what is wrong with a correction that does not fit the throw.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from farklecam.vision.reading import DieStatus, Reading

__all__ = ["CorrectionHook", "DieCorrection", "add_die", "added_box", "describe", "die_at", "fix_die"]

#: A die's side in frame pixels where a throw has no dice to take the size from and no picture size.
_DEFAULT_SIDE = 40.0
#: Without dice to measure, an added die is this share of the picture's shorter side.
_SIDE_SHARE = 0.06

_STATUS = {"cocked": DieStatus.COCKED, "off-tray": DieStatus.OFF_TRAY}
_WORDS = {"cocked": "leaning", "off-tray": "off the tray"}


@dataclass(frozen=True, slots=True)
class DieCorrection:
    """What a player said about one die of a settled throw, once the table took it.

    Handed to :attr:`farklecam.service.table.TableSession.on_correct`, so that what the reader got
    wrong can be learnt from (a profile of this table's dice, say): ``reading`` with ``index`` is
    the camera's die as it was drawn, ``box`` where it lies, and ``fix`` with ``face`` the truth.

    Attributes:
        fix: one of :data:`~farklecam.scoring.actions.CORRECTION_FIXES`.
        index: the die in ``reading``, counted from 0; None for a die added (``add``).
        face: the face told (``face``, ``add``), else None.
        box: ``(x1, y1, x2, y2)`` in frame pixels: the die's box, or the box given to an added die.
        reading: the throw as it stood before this correction (the camera's, or as corrected before).
        frame: the full-resolution BGR frame the throw settled on, where the camera saw it (None for a
            throw entered without one): a profile learns the die from its pixels, not from the reading.
    """

    fix: str
    index: int | None
    face: int | None
    box: tuple[float, float, float, float]
    reading: Reading
    frame: npt.NDArray[np.uint8] | None = dataclasses.field(default=None, compare=False, repr=False)


#: Called with every correction a table takes (after the game took it).
CorrectionHook = Callable[[DieCorrection], None]


def _check_index(reading: Reading, index: int) -> None:
    if not len(reading):
        raise ValueError("this throw has no dice: add the ones the camera missed")
    if isinstance(index, bool) or not isinstance(index, int):
        raise ValueError(f"a die is named by its place in the throw, got {index!r}")
    if not 0 <= index < len(reading):
        raise ValueError(f"no die #{index + 1}: this throw has dice #1-#{len(reading)}")


def _check_face(face: int | None) -> int:
    if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= 6:
        raise ValueError(f"a face is 1-6, got {face!r}")
    return face


def fix_die(reading: Reading, index: int, fix: str, face: int | None = None) -> Reading:
    """``reading`` with die ``index`` (from 0) corrected: it shows ``face``, leans, lies off the tray, or is no die.

    Args:
        reading: the throw as it stands.
        index: the die, counted from 0 (its tag says ``#index+1``).
        fix: ``"face"``, ``"cocked"``, ``"off-tray"`` or ``"not-a-die"``.
        face: for ``"face"``, what the die shows.

    Returns:
        The corrected reading: a told face is read ``ok`` with confidence 1; a die that is no die is gone.

    Raises:
        ValueError: no such die or face, an unknown fix, or a correction that changes nothing.
    """
    _check_index(reading, index)
    status, number = DieStatus(str(reading.status[index])), f"die #{index + 1}"
    if fix == "not-a-die":
        return reading[np.arange(len(reading)) != index]
    faces, sure, statuses = reading.face.copy(), reading.face_confidence.copy(), reading.status.copy()
    if fix == "face":
        told = _check_face(face)
        if status is DieStatus.OK and int(faces[index]) == told:
            raise ValueError(f"{number} already reads {told}")
        faces[index], sure[index], statuses[index] = told, 1.0, DieStatus.OK.value
    elif fix in _STATUS:
        if status is _STATUS[fix]:
            raise ValueError(f"{number} is already marked {_WORDS[fix]}")
        statuses[index], sure[index] = _STATUS[fix].value, 1.0
        if fix == "cocked":
            faces[index] = 0  # a leaning die shows no face (as the reader leaves it)
    else:
        raise ValueError(f"a die is corrected with face, cocked, off-tray or not-a-die, not {fix!r}")
    return dataclasses.replace(reading, face=faces, face_confidence=sure, status=statuses)


def die_at(reading: Reading, x: float, y: float) -> int | None:
    """The die whose box holds the point ``(x, y)`` (frame pixels), the nearest centre first; None for none."""
    boxes = reading.xyxy
    inside = (boxes[:, 0] <= x) & (x <= boxes[:, 2]) & (boxes[:, 1] <= y) & (y <= boxes[:, 3])
    if not inside.any():
        return None
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    distance = np.hypot(centres[:, 0] - x, centres[:, 1] - y)
    return int(np.argmin(np.where(inside, distance, np.inf)))


def added_box(reading: Reading, x: float, y: float) -> tuple[float, float, float, float]:
    """The box an added die centred on ``(x, y)`` gets: as large as the throw's other dice, the median."""
    if len(reading):
        side_x = float(np.median(reading.xyxy[:, 2] - reading.xyxy[:, 0]))
        side_y = float(np.median(reading.xyxy[:, 3] - reading.xyxy[:, 1]))
    else:
        side_x = side_y = _DEFAULT_SIDE if reading.image_size is None else _SIDE_SHARE * min(reading.image_size)
    return (x - side_x / 2, y - side_y / 2, x + side_x / 2, y + side_y / 2)


def add_die(reading: Reading, x: float, y: float, face: int) -> Reading:
    """``reading`` with one more die, read ``face`` (``ok``, confidence 1), centred where the player pointed.

    Raises:
        ValueError: a face outside 1-6, a point outside the picture, or a point on a die already read.
    """
    told = _check_face(face)
    if not (np.isfinite(x) and np.isfinite(y)):
        raise ValueError("a missed die is marked by a point in the picture")
    width, height = reading.image_size or (float("inf"), float("inf"))
    if not (0 <= x <= width and 0 <= y <= height):
        raise ValueError(f"({x:g}, {y:g}) is outside the picture ({width} x {height})")
    if (hit := die_at(reading, x, y)) is not None:
        raise ValueError(f"die #{hit + 1} lies there already: correct that die instead")
    data = {key: np.concatenate([column, np.zeros(1, column.dtype)]) for key, column in reading.data.items()}
    return dataclasses.replace(
        reading,
        xyxy=np.vstack([reading.xyxy, np.array([added_box(reading, x, y)], np.float32)]),
        confidence=np.append(reading.confidence, np.float32(1.0)),
        face=np.append(reading.face, told),
        face_confidence=np.append(reading.face_confidence, np.float32(1.0)),
        status=np.append(reading.status, DieStatus.OK.value),
        data=data,
    )


def describe(fix: str, index: int | None, face: int | None) -> str:
    """The correction in the players' words: ``"die #3 is a 5"``, ``"die #2 leans"``, ``"a missed 4 is added"``."""
    number = "" if index is None else f"#{index + 1}"
    return {
        "face": f"die {number} is a {face}",
        "cocked": f"die {number} leans",
        "off-tray": f"die {number} lies off the tray",
        "not-a-die": f"{number} is not a die",
        "add": f"a missed {face} is added",
    }[fix]
