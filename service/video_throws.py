"""Offline reading of a video: one result per throw, with its frame number and time.

:func:`throws_from_video` is the loop the live window runs, without the window:
every frame goes through the settle layer (:mod:`farklecam.vision.settle.detector`), the reader runs
only on still frames, and each throw comes out once as a :class:`ThrowResult`.
``farklecam read VIDEO`` prints those results as JSON (:meth:`ThrowResult.to_dict`)
or CSV (:data:`CSV_FIELDS`, :meth:`ThrowResult.to_row`), and with ``--out`` writes
the annotated video through the ``on_frame`` hook (:func:`annotated_writer`).

Example:
    >>> for throw in read_video("game.mp4", DiceReader(), out="annotated.mp4"):
    ...     print(throw.frame_index, throw.timestamp, throw.reading.faces)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.vision.camera.sources import Frame, VideoFileSource, VideoSink
from farklecam.vision.reading import Reading
from farklecam.vision.settle.detector import FrameReader, SettleConfig, SettleDetector, SettleState

__all__ = [
    "CSV_FIELDS",
    "FrameCallback",
    "ThrowResult",
    "annotate_state",
    "annotated_writer",
    "read_video",
    "throws_from_video",
]

#: Column order of :meth:`ThrowResult.to_row` (the CSV header of ``farklecam read --csv``).
CSV_FIELDS: tuple[str, ...] = ("throw", "frame", "time", "faces", "dice", "rethrow", "uncertain")

#: Called with every frame and its settle state (to draw, write or display it).
FrameCallback = Callable[[Frame, SettleState], None]


@dataclass(frozen=True, slots=True)
class ThrowResult:
    """One settled throw.

    Attributes:
        throw: 1-based number of the throw in the video.
        frame_index: frame at which it settled.
        timestamp: time of that frame in seconds.
        reading: the voted reading (``data["ambiguity"]`` says why a die is uncertain).
    """

    throw: int
    frame_index: int
    timestamp: float
    reading: Reading

    def to_dict(self) -> dict[str, Any]:
        """JSON form: throw, frame, time and the reading's dice, faces and rethrow count."""
        ambiguity = self.reading.data.get("ambiguity", np.full(len(self.reading), ""))
        dice = [
            d.to_dict() | ({"ambiguity": str(why)} if why else {})
            for d, why in zip(self.reading.dice(), ambiguity, strict=True)
        ]
        return {
            "throw": self.throw,
            "frame": self.frame_index,
            "time": round(self.timestamp, 3),
            "faces": list(self.reading.faces),
            "rethrow": self.reading.rethrow,
            "dice": dice,
        }

    def to_row(self) -> dict[str, Any]:
        """Flat CSV row (keys :data:`CSV_FIELDS`); faces are space-separated."""
        return {
            "throw": self.throw,
            "frame": self.frame_index,
            "time": round(self.timestamp, 3),
            "faces": " ".join(map(str, self.reading.faces)),
            "dice": len(self.reading),
            "rethrow": self.reading.rethrow,
            "uncertain": int(np.count_nonzero(self.reading.status == "uncertain")),
        }


def throws_from_video(
    source: Iterable[Frame],
    reader: FrameReader,
    settle_config: SettleConfig | None = None,
    *,
    on_frame: FrameCallback | None = None,
    progress: bool = False,
    total: int | None = None,
) -> Iterator[ThrowResult]:
    """Yield one :class:`ThrowResult` per throw in ``source``.

    Args:
        source: frames in order (an opened :class:`~farklecam.vision.camera.sources.FrameSource`, or any iterable).
        reader: reads the dice of a still frame.
        settle_config: thresholds of the settle layer (defaults: :class:`SettleConfig`).
        on_frame: called after every frame with its state, e.g. :func:`annotated_writer`.
        progress: show a tqdm progress bar on stderr.
        total: number of frames for the bar (default: the source's ``info.frame_count``).

    Raises:
        CameraError: the video cannot be read (raised by the source).
    """
    detector = SettleDetector(settle_config)
    frames: Iterable[Frame] = source
    bar = None
    if progress:
        from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

        info, stride = getattr(source, "info", None), getattr(source, "stride", 1)
        if total is None and info is not None and info.frame_count is not None:
            total = -(-info.frame_count // stride)
        bar = tqdm(total=total, unit="frame", desc="reading", leave=False)
    count = 0
    try:
        for frame in frames:
            state = detector.step(frame, reader)
            if on_frame is not None:
                on_frame(frame, state)
            if bar is not None:
                bar.update(1)
            if state.is_new and state.reading is not None:
                count += 1
                yield ThrowResult(count, frame.index, frame.timestamp, state.reading)
    finally:
        if bar is not None:
            bar.close()


def annotate_state(image: npt.NDArray[np.uint8], state: SettleState) -> npt.NDArray[np.uint8]:
    """A copy of ``image`` with the dice drawn: the voted reading when settled, else the latest read."""
    from farklecam.service.overlay import annotate_reading

    reading = state.reading or state.latest
    if reading is None or state.moving:
        reading = Reading.empty((image.shape[1], image.shape[0]))
    line = f"{state.phase.value.upper()}  frame {state.frame_index}  {state.timestamp:.2f} s"
    if state.reading is not None:
        line += f"  faces {' '.join(map(str, state.reading.faces)) or '-'}"
    return annotate_reading(image, reading, text_lines=[line])


def annotated_writer(
    sink: VideoSink, annotate: Callable[[npt.NDArray[np.uint8], SettleState], npt.NDArray[np.uint8]] = annotate_state
) -> FrameCallback:
    """An ``on_frame`` callback that writes every frame, annotated, to ``sink``."""

    def write(frame: Frame, state: SettleState) -> None:
        sink.write(annotate(frame.image, state))

    return write


def read_video(
    path: str | Path,
    reader: FrameReader,
    settle_config: SettleConfig | None = None,
    *,
    out: str | Path | None = None,
    stride: int = 1,
    progress: bool = True,
) -> Iterator[ThrowResult]:
    """Every throw of a video file, as it is found; optionally write the annotated video to ``out``.

    A generator, so ``farklecam read`` can print each throw as soon as it settles; the
    files stay open until it is exhausted (or closed).

    Raises:
        CameraError: the video cannot be read, or ``out`` cannot be written.
    """
    with VideoFileSource(path, stride=stride) as source:
        info = source.info
        assert info is not None
        if out is None:
            yield from throws_from_video(source, reader, settle_config, progress=progress)
            return
        with VideoSink(out, info.fps / stride, (info.width, info.height)) as sink:
            write = annotated_writer(sink)
            yield from throws_from_video(source, reader, settle_config, on_frame=write, progress=progress)
