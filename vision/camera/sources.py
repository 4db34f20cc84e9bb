"""Where frames come from: a webcam, a video file or a folder of images, all alike.

Every source is a context manager that opens its device or file on ``__enter__`` and
yields :class:`Frame` values. OpenCV's failures leave as one
:class:`~farklecam.errors.CameraError` with a message a player can act on
(:func:`map_cv2_errors`), so a caller can catch it and keep the game.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import CameraError

__all__ = [
    "REQUESTED_SIZE",
    "CameraSource",
    "Frame",
    "FrameSource",
    "ImageFolderSource",
    "VideoFileSource",
    "VideoInfo",
    "VideoSink",
    "answering_cameras",
    "map_cv2_errors",
    "request_size",
]

#: Consecutive failed grabs after which a live camera counts as unplugged (about a second at 30 fps).
_MAX_FAILED_GRABS = 30


@dataclass(frozen=True, slots=True)
class Frame:
    """One picture of the tray."""

    image: npt.NDArray[np.uint8]  #: BGR uint8 pixels, shape (height, width, 3)
    index: int  #: position in the stream (a live camera that dropped stale frames skips numbers)
    timestamp: float  #: seconds since the source opened (video: from the file's frame rate)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])


@dataclass(frozen=True, slots=True)
class VideoInfo:
    """What a stream promises: frame size, rate (30 if it claims none) and, for a file, its length."""

    width: int
    height: int
    fps: float
    frame_count: int | None = None

    @classmethod
    def from_capture(cls, capture: cv2.VideoCapture, live: bool) -> VideoInfo:
        """Read size, rate and length from an opened ``cv2.VideoCapture``."""
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        return cls(
            width=int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
            height=int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)),
            fps=fps if 0.0 < fps < 1000.0 else 30.0,
            frame_count=None if live or count <= 0 else count,
        )


@contextlib.contextmanager
def map_cv2_errors(what: str) -> Iterator[None]:
    """Turn ``cv2.error`` and OS errors raised inside the block into :class:`CameraError` prefixed by ``what``."""
    try:
        yield
    except CameraError:
        raise
    except (cv2.error, OSError) as exc:
        raise CameraError(f"{what}: {exc}".strip()) from exc


class FrameSource:
    """Base of every source: a context manager and iterator of frames that enforces opening and always closes."""

    name: str = "source"

    def __init__(self) -> None:
        self._opened = False
        self.info: VideoInfo | None = None

    def __enter__(self) -> Self:
        with map_cv2_errors(self.name):
            self._open()
        self._opened = True
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the device or file (safe to call twice)."""
        if self._opened:
            self._opened = False
            self._close()

    def __iter__(self) -> Iterator[Frame]:
        if not self._opened:
            raise CameraError(f"{self.name} is not open: use it in a `with` block")
        with map_cv2_errors(self.name):
            yield from self._frames()

    def _open(self) -> None:
        raise NotImplementedError

    def _frames(self) -> Iterator[Frame]:
        raise NotImplementedError

    def _close(self) -> None:  # nothing to release by default
        pass


class VideoFileSource(FrameSource):
    """Every ``stride``-th frame of a video file (anything FFmpeg reads).

    Raises:
        CameraError: on enter, the file is missing or cannot be decoded.
    """

    def __init__(self, path: str | Path, stride: int = 1) -> None:
        super().__init__()
        if stride < 1:
            raise ValueError(f"stride must be >= 1, but got {stride!r}")
        self.path = Path(path)
        self.stride = stride
        self.name = f"video {str(self.path)!r}"
        self._capture: cv2.VideoCapture | None = None

    def _open(self) -> None:
        if not self.path.is_file():
            raise CameraError(f"{self.name} does not exist")
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            capture.release()
            raise CameraError(f"{self.name} cannot be read (not a video, or a codec FFmpeg lacks)")
        self._capture = capture
        self.info = VideoInfo.from_capture(capture, live=False)

    def _frames(self) -> Iterator[Frame]:
        assert self._capture is not None and self.info is not None
        fps, index = self.info.fps, 0
        while True:
            ok = self._capture.grab()
            if not ok:
                if index == 0:
                    raise CameraError(f"{self.name} has no readable frames")
                return
            if index % self.stride == 0:
                ok, image = self._capture.retrieve()
                if not ok or image is None:
                    raise CameraError(f"{self.name}: frame {index} cannot be decoded")
                yield Frame(np.asarray(image, dtype=np.uint8), index, index / fps)
            index += 1

    def _close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class ImageFolderSource(FrameSource):
    """Still images played as a stream at ``fps``, in order (a folder is expanded to its sorted images).

    Raises:
        CameraError: on enter, no image was given; while iterating, a file cannot be read.
    """

    _SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"})

    def __init__(self, paths: Sequence[str | Path] | str | Path, fps: float = 30.0) -> None:
        super().__init__()
        items = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
        files: list[Path] = []
        for item in items:
            if item.is_dir():
                files.extend(sorted(p for p in item.iterdir() if p.suffix.lower() in self._SUFFIXES))
            else:
                files.append(item)
        self.paths = files
        self.fps = fps
        self.name = f"images ({len(files)} files)"

    def _open(self) -> None:
        if not self.paths:
            raise CameraError("no image files were given")
        first = self._load(self.paths[0])
        self.info = VideoInfo(first.shape[1], first.shape[0], self.fps, len(self.paths))

    def _load(self, path: Path) -> npt.NDArray[np.uint8]:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise CameraError(f"image {str(path)!r} is missing or not an image")
        return np.asarray(image, dtype=np.uint8)

    def _frames(self) -> Iterator[Frame]:
        for index, path in enumerate(self.paths):
            yield Frame(self._load(path), index, index / self.fps)


#: Camera indices :func:`answering_cameras` tries: laptops number a built-in and one or two USB webcams 0-3.
_PROBED_INDICES = range(6)


def _quiet_capture(index: int) -> cv2.VideoCapture:
    """Open camera ``index`` without OpenCV's own log lines for a missing one (the caller's error says it once)."""
    previous = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        return cv2.VideoCapture(index)
    finally:
        cv2.utils.logging.setLogLevel(previous)


def answering_cameras(exclude: int | None = None) -> list[int]:
    """The camera indices in 0-5 that open, to name one that works when the asked-for camera did not."""
    found = []
    for index in _PROBED_INDICES:
        if index == exclude:
            continue
        capture = _quiet_capture(index)
        if capture.isOpened():
            found.append(index)
        capture.release()
    return found


def _missing_camera_message(index: int, answering: Sequence[int]) -> str:
    """What to tell a player whose camera ``index`` did not open, given the ones that do."""
    if not answering:
        return (
            f"camera {index} is not available and no camera answers at {_PROBED_INDICES.start}-"
            f"{_PROBED_INDICES.stop - 1} (is one plugged in and free? --video FILE or --demo work without one)"
        )
    listed = ", ".join(str(i) for i in answering)
    return f"camera {index} is not available; cameras that answer: {listed} (try --camera {answering[0]})"


#: The least frame size a webcam is asked for: dice twice as many pixels across as at 640x480.
REQUESTED_SIZE = (1280, 720)


def _size(capture: cv2.VideoCapture) -> tuple[int, int]:
    return int(capture.get(cv2.CAP_PROP_FRAME_WIDTH) or 0), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)


def request_size(capture: cv2.VideoCapture, width: int | None, height: int | None) -> tuple[int, int]:
    """Ask an opened webcam for at least ``width`` x ``height``; returns the size it then gives.

    A camera whose default is as large keeps it; one that then delivers no frame at the size
    asked goes back to its default. Either dimension None keeps the default.
    """
    before = _size(capture)
    if not width or not height or before[0] * before[1] >= width * height:
        return before
    try:
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        ok, _image = capture.read()
    except cv2.error:
        ok = False
    if not ok and before[0] and before[1]:
        with contextlib.suppress(cv2.error):
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, before[0])
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, before[1])
    return _size(capture)


class CameraSource(FrameSource):
    """A live webcam that never falls behind.

    A background thread grabs frames as fast as the camera delivers them and keeps only the
    newest, so a slow consumer sees the tray as it is now (with gaps in ``Frame.index``). The
    camera ``index`` is asked for at least ``width`` x ``height`` (:func:`request_size`; None
    keeps its default); no new frame for ``stall_seconds`` means it is gone.

    Raises:
        CameraError: on enter, the camera is not there; while iterating, it stopped delivering.
    """

    def __init__(
        self,
        index: int = 0,
        width: int | None = REQUESTED_SIZE[0],
        height: int | None = REQUESTED_SIZE[1],
        stall_seconds: float = 3.0,
    ) -> None:
        super().__init__()
        self.index = index
        self.size = (width, height)
        self.stall_seconds = stall_seconds
        self.name = f"camera {index}"
        self._capture: cv2.VideoCapture | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._fresh = threading.Condition()
        self._latest: tuple[npt.NDArray[np.uint8], int, float] | None = None
        self._failure: str | None = None

    def _open(self) -> None:
        capture = _quiet_capture(self.index)
        if not capture.isOpened():
            capture.release()
            raise CameraError(_missing_camera_message(self.index, answering_cameras(exclude=self.index)))
        request_size(capture, *self.size)
        self._capture = capture
        self.info = VideoInfo.from_capture(capture, live=True)
        self._stop.clear()
        self._failure = None
        self._thread = threading.Thread(target=self._grab_loop, name=f"farklecam-{self.name}", daemon=True)
        self._thread.start()

    def _grab_loop(self) -> None:
        """Keep the newest frame; record why the camera stopped, if it did."""
        assert self._capture is not None
        start, index, failures = time.monotonic(), 0, 0
        while not self._stop.is_set():
            try:
                ok, image = self._capture.read()
            except cv2.error as exc:
                ok, image, self._failure = False, None, str(exc)
            if not ok or image is None:
                failures += 1
                if failures >= _MAX_FAILED_GRABS or self._failure:
                    self._failure = self._failure or "stopped delivering frames"
                    break
                time.sleep(0.01)
                continue
            failures = 0
            with self._fresh:
                self._latest = (np.asarray(image, dtype=np.uint8), index, time.monotonic() - start)
                self._fresh.notify_all()
            index += 1
        with self._fresh:
            self._fresh.notify_all()

    def _frames(self) -> Iterator[Frame]:
        while True:
            with self._fresh:
                if self._latest is None and self._failure is None:
                    self._fresh.wait(timeout=self.stall_seconds)
                latest, self._latest = self._latest, None
                failure = self._failure
            if latest is None:
                detail = failure or f"no frame for {self.stall_seconds:g} s"
                raise CameraError(f"camera {self.index} {detail} (was it unplugged?); the game is kept")
            image, index, timestamp = latest
            yield Frame(image, index, timestamp)

    def _close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class VideoSink:
    """Write frames of ``size`` = ``(width, height)`` to a video file (``.mp4`` as ``mp4v``, else ``MJPG``).

    Raises:
        CameraError: on enter, the file cannot be created.
    """

    def __init__(self, path: str | Path, fps: float, size: tuple[int, int]) -> None:
        self.path = Path(path)
        self.fps = fps
        self.size = size
        self._writer: cv2.VideoWriter | None = None

    def __enter__(self) -> Self:
        fourcc = cv2.VideoWriter.fourcc(*("mp4v" if self.path.suffix.lower() == ".mp4" else "MJPG"))
        with map_cv2_errors(f"video {str(self.path)!r}"):
            writer = cv2.VideoWriter(str(self.path), fourcc, self.fps, self.size)
            if not writer.isOpened():
                raise CameraError(f"video {str(self.path)!r} cannot be written (folder missing or codec unavailable)")
        self._writer = writer
        return self

    def write(self, image: npt.NDArray[np.uint8]) -> None:
        """Append one BGR frame of the sink's size."""
        if self._writer is None:
            raise CameraError(f"video {str(self.path)!r} is not open: use it in a `with` block")
        if (image.shape[1], image.shape[0]) != self.size:
            raise ValueError(f"frame must be {self.size[0]}x{self.size[1]}, but got {image.shape[1]}x{image.shape[0]}")
        self._writer.write(image)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._writer is not None:
            self._writer.release()
            self._writer = None
