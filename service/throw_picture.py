"""The picture behind a scored throw: the settled frame, made small, with the reading as the camera read it.

When a score is disputed (a tournament with a prize), the players' memory of a throw is not
enough: each throw the camera scores keeps the frame it settled on. A webcam frame is 1280 x
720; one picture per throw for a whole tournament must stay small, so the frame is scaled to
fit :data:`PICTURE_SIDE` pixels on its longer side and encoded as JPEG at
:data:`PICTURE_QUALITY`, lower (then smaller) only where it would pass :data:`MAX_PICTURE_BYTES`,
a hard cap the store also holds every picture to.

Beside the pixels goes the reading as read, in the picture's own pixels (:func:`reading_record`):
the boxes, faces and statuses the overlay is drawn from (:func:`draw_reading`), so that anyone
can see what the camera saw and what it made of it. What the players said of its dice before the
game took the throw (a die told, a die said to lean) goes with it as ``told``; a correction made
after is in the game's log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.service.overlay import annotate_reading
from farklecam.vision.reading import Reading

__all__ = [
    "MAX_PICTURE_BYTES",
    "MAX_TOLD",
    "PICTURE_QUALITY",
    "PICTURE_SIDE",
    "ThrowPicture",
    "draw_reading",
    "make_picture",
    "reading_from_record",
    "reading_in_frame",
    "reading_record",
]

#: The longest side of a kept picture, in pixels: a 1280 x 720 webcam frame becomes 640 x 360, which still
#: shows every die's pips (a die about 40 px wide in the frame is about 20 px here).
PICTURE_SIDE = 640
#: JPEG quality of a kept picture: the pips stay sharp, and a tray's frame takes a few tens of kilobytes.
PICTURE_QUALITY = 80
#: The most bytes one picture may take, whatever the frame: a noisy one is encoded at a lower quality, then
#: smaller, until it fits.
MAX_PICTURE_BYTES = 150_000
#: What the players may have said of one throw's dice before it was scored, at most (each line is short).
MAX_TOLD = 32
#: Each step tried in turn until the JPEG fits: (share of :data:`PICTURE_SIDE`, quality).
_STEPS = tuple((share, quality) for share in (1.0, 0.75, 0.5, 0.25) for quality in (PICTURE_QUALITY, 60, 40))


@dataclass(frozen=True, slots=True)
class ThrowPicture:
    """One throw's picture, ready to keep.

    Attributes:
        jpeg: the settled frame, scaled and encoded (at most :data:`MAX_PICTURE_BYTES`).
        width: the picture's width in pixels.
        height: the picture's height in pixels.
        reading: the reading as read, in the picture's pixels (:func:`reading_record`).
        told: what the players said of its dice before the game took the throw ("die #3 is a 5").
    """

    jpeg: bytes
    width: int
    height: int
    reading: Mapping[str, Any]
    told: tuple[str, ...] = ()

    def with_told(self, told: Sequence[str]) -> ThrowPicture:
        """The same picture with what the players said of its dice (the first :data:`MAX_TOLD` lines)."""
        return dataclasses.replace(self, told=tuple(told)[:MAX_TOLD])


def make_picture(image: npt.NDArray[np.uint8], reading: Reading) -> ThrowPicture:
    """The picture to keep of a settled throw: ``image`` (the BGR frame it was read from) small, and ``reading``.

    Raises:
        ValueError: an empty frame, or one OpenCV cannot encode.
    """
    height, width = image.shape[:2]
    if not height or not width:
        raise ValueError(f"an empty frame ({width}x{height}) has no picture to keep")
    fit = min(1.0, PICTURE_SIDE / max(width, height))
    for share, quality in _STEPS:
        scale = fit * share
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = image if size == (width, height) else cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        ok, encoded = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            raise ValueError("the frame could not be encoded as JPEG")
        if encoded.size <= MAX_PICTURE_BYTES:
            shown = reading_record(reading, (size[0] / width, size[1] / height), size, (width, height))
            return ThrowPicture(encoded.tobytes(), size[0], size[1], shown)
    raise ValueError(f"the frame does not fit in {MAX_PICTURE_BYTES} bytes even at {size[0]}x{size[1]}")


def reading_record(
    reading: Reading, scale: tuple[float, float], size: tuple[int, int], frame_size: tuple[int, int]
) -> dict[str, Any]:
    """``reading`` as JSON, moved into a picture scaled by ``scale`` (x, y) from its frame.

    The report's form of a reading (``dice``, ``faces``, ``rethrow``, ``unclear``, ``tray``) plus what
    the overlay needs to draw it again: each die's ``face_confidence``, the tray's outline
    (``tray_outline``, or None), the picture's size (``image_size``) and the frame's (``frame_size``).
    """
    sx, sy = scale
    factors = np.array([sx, sy, sx, sy], np.float32)
    outline = None if reading.tray is None else reading.tray * np.array([sx, sy], np.float32)
    moved = dataclasses.replace(reading, xyxy=reading.xyxy * factors, tray=outline, image_size=size)
    record = moved.to_dict()
    for die, sure in zip(record["dice"], moved.face_confidence.tolist(), strict=True):
        die["face_confidence"] = round(float(sure), 3)
    record["tray_outline"] = None if outline is None else [[round(float(v), 1) for v in p] for p in outline]
    record["image_size"] = list(size)
    record["frame_size"] = list(frame_size)
    return record


def reading_from_record(record: Mapping[str, Any]) -> Reading:
    """The :class:`Reading` a record of :func:`reading_record` holds, to draw it again.

    Raises:
        ValueError: a record that is not one (a key missing, a wrong shape, an unknown status).
    """
    try:
        dice = list(record["dice"])
        width, height = record["image_size"]
        return Reading(
            xyxy=np.array([d["box"] for d in dice], np.float32).reshape(-1, 4),
            confidence=np.array([d["confidence"] for d in dice], np.float32),
            face=np.array([d["face"] or 0 for d in dice], np.int64),
            face_confidence=np.array([d.get("face_confidence", d["confidence"]) for d in dice], np.float32),
            status=np.array([str(d["status"]) for d in dice], np.str_),
            image_size=(int(width), int(height)),
            tray=None if record.get("tray_outline") is None else np.array(record["tray_outline"], np.float32),
            tray_state=str(record.get("tray", "none")),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a reading record: {exc!r}") from exc


def reading_in_frame(record: Mapping[str, Any]) -> Reading:
    """The reading a record of :func:`reading_record` holds, moved back into its frame's pixels.

    Raises:
        ValueError: a record that is not one.
    """
    reading = reading_from_record(record)
    try:
        frame_w, frame_h = (int(v) for v in record["frame_size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a reading record: {exc!r}") from exc
    width, height = reading.image_size or (frame_w, frame_h)  # reading_from_record always sets it
    sx, sy = frame_w / max(width, 1), frame_h / max(height, 1)
    tray = None if reading.tray is None else reading.tray * np.array([sx, sy], np.float32)
    xyxy = reading.xyxy * np.array([sx, sy, sx, sy], np.float32)
    return dataclasses.replace(reading, xyxy=xyxy, tray=tray, image_size=(frame_w, frame_h))


def draw_reading(jpeg: bytes, record: Mapping[str, Any]) -> bytes:
    """``jpeg`` (a kept picture) with its reading drawn over it, every die numbered, as JPEG.

    The dice are numbered as the game's log names them (``correct 3 face 5`` is the die tagged ``#3``).

    Raises:
        ValueError: ``jpeg`` does not decode, or ``record`` is no reading record.
    """
    decoded = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if decoded is None:
        raise ValueError("the kept picture does not decode")
    drawn = annotate_reading(decoded.astype(np.uint8, copy=False), reading_from_record(record), number_all=True)
    ok, encoded = cv2.imencode(".jpg", drawn, [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise ValueError("the picture with its reading could not be encoded as JPEG")
    return encoded.tobytes()
