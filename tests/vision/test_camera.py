"""Frame sources: videos and images read back exactly; every failure is a CameraError, never a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from farklecam.errors import CameraError
from farklecam.vision.camera import sources as camera_module
from farklecam.vision.camera.sources import (
    REQUESTED_SIZE,
    CameraSource,
    ImageFolderSource,
    VideoFileSource,
    VideoInfo,
    VideoSink,
    answering_cameras,
    map_cv2_errors,
    request_size,
)


def write_video(path: Path, n: int = 6, size: tuple[int, int] = (64, 48), fps: float = 10.0) -> list[np.ndarray]:
    """A tiny MJPG video whose frame k is a flat grey of 30 * k."""
    frames = [np.full((size[1], size[0], 3), 30 * k, np.uint8) for k in range(n)]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    assert writer.isOpened()
    for frame in frames:
        writer.write(frame)
    writer.release()
    return frames


def test_video_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    written = write_video(path)
    with VideoFileSource(path) as video:
        assert video.info == VideoInfo(64, 48, 10.0, 6)
        frames = list(video)
    assert [f.index for f in frames] == list(range(6))
    assert [f.timestamp for f in frames] == pytest.approx([k / 10 for k in range(6)])
    assert frames[0].size == (64, 48)
    for frame, original in zip(frames, written, strict=True):
        assert abs(float(frame.image.mean()) - float(original.mean())) < 3  # MJPG is lossy, not wrong


def test_video_stride_skips_frames(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    write_video(path, n=7)
    with VideoFileSource(path, stride=3) as video:
        assert [f.index for f in video] == [0, 3, 6]
    with pytest.raises(ValueError, match="stride"):
        VideoFileSource(path, stride=0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.mp4", "does not exist"),
        (lambda d: (d / "text.mp4").write_text("not a video") and d / "text.mp4", "cannot be read|no readable frames"),
        (lambda d: (d / "empty.avi").write_bytes(b"") is not None and d / "empty.avi", "cannot be read|no readable"),
    ],
)
def test_unreadable_videos_raise_camera_error(tmp_path: Path, make: Any, message: str) -> None:
    with pytest.raises(CameraError, match=message), VideoFileSource(make(tmp_path)) as video:
        list(video)


def test_camera_that_is_not_there_names_the_cameras_that_answer() -> None:
    # A real probe of this machine's cameras: the message must name exactly those that open.
    answering = answering_cameras()
    if answering:
        expected = rf"camera 99 is not available; cameras that answer: {', '.join(map(str, answering))} "
        expected += rf"\(try --camera {answering[0]}\)"
    else:
        expected = r"camera 99 is not available and no camera answers at 0-5 .*--video FILE or --demo"
    with pytest.raises(CameraError, match=expected), CameraSource(99):
        pass


class PluggedCameras:
    """A fake ``cv2.VideoCapture`` on a machine whose cameras 1 and 3 are plugged in."""

    plugged = (1, 3)

    def __init__(self, index: int) -> None:
        self.index = index

    def isOpened(self) -> bool:  # OpenCV's name
        return self.index in self.plugged

    def release(self) -> None:
        pass


def test_missing_camera_message_names_the_ones_plugged_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(camera_module.cv2, "VideoCapture", PluggedCameras)
    assert answering_cameras() == [1, 3]
    assert answering_cameras(exclude=1) == [3]
    expected = r"^camera 0 is not available; cameras that answer: 1, 3 \(try --camera 1\)$"
    with pytest.raises(CameraError, match=expected), CameraSource(0):
        pass


class FlakyCapture:
    """A fake ``cv2.VideoCapture``: a few frames, then the cable is pulled."""

    frames_before_failure = 3

    def __init__(self, index: int) -> None:
        self.delivered = 0

    def isOpened(self) -> bool:  # OpenCV's name
        return True

    def set(self, prop: int, value: float) -> bool:
        return True

    def get(self, prop: int) -> float:
        return {cv2.CAP_PROP_FRAME_WIDTH: 32.0, cv2.CAP_PROP_FRAME_HEIGHT: 24.0, cv2.CAP_PROP_FPS: 0.0}.get(prop, 0.0)

    def read(self) -> tuple[bool, np.ndarray | None]:
        if self.delivered >= self.frames_before_failure:
            return False, None
        self.delivered += 1
        return True, np.full((24, 32, 3), self.delivered, np.uint8)

    def release(self) -> None:
        pass


def test_camera_that_stops_mid_stream_raises_camera_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(camera_module.cv2, "VideoCapture", FlakyCapture)
    monkeypatch.setattr(camera_module, "_MAX_FAILED_GRABS", 2)
    seen = []
    expected = r"camera 0 stopped delivering frames.*the game is kept"
    with pytest.raises(CameraError, match=expected), CameraSource(0, stall_seconds=2.0) as camera:
        assert camera.info == VideoInfo(32, 24, 30.0, None)  # no fps claimed: assume 30
        for frame in camera:
            seen.append(frame.index)
    assert 1 <= len(seen) <= 3 and seen == sorted(seen)  # only the newest frames, in order


def test_sources_must_be_opened_first(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="not open"):
        list(VideoFileSource(tmp_path / "x.avi"))


def test_image_folder_source(tmp_path: Path) -> None:
    for k in range(3):
        cv2.imwrite(str(tmp_path / f"{k}.png"), np.full((10, 12, 3), k * 50, np.uint8))
    (tmp_path / "notes.txt").write_text("ignored")
    with ImageFolderSource(tmp_path, fps=2.0) as images:
        frames = list(images)
        assert images.info == VideoInfo(12, 10, 2.0, 3)
    assert [(f.index, f.timestamp, int(f.image[0, 0, 0])) for f in frames] == [(0, 0.0, 0), (1, 0.5, 50), (2, 1.0, 100)]
    with pytest.raises(CameraError, match="no image files"), ImageFolderSource([]):
        pass
    with pytest.raises(CameraError, match="not an image"), ImageFolderSource([tmp_path / "notes.txt"]):
        pass


def test_video_sink_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "out.avi"
    with VideoSink(out, 5.0, (32, 24)) as sink:
        for k in range(4):
            sink.write(np.full((24, 32, 3), k * 60, np.uint8))
        with pytest.raises(ValueError, match="32x24"):
            sink.write(np.zeros((10, 10, 3), np.uint8))
    with VideoFileSource(out) as video:
        assert len(list(video)) == 4
    with pytest.raises(CameraError, match="cannot be written"), VideoSink(tmp_path / "no" / "dir.avi", 5.0, (8, 8)):
        pass


def test_cv2_errors_are_mapped_at_the_boundary() -> None:
    with pytest.raises(CameraError, match="video 'x'") as info, map_cv2_errors("video 'x'"):
        cv2.cvtColor(np.zeros((2, 2, 5), np.uint8), cv2.COLOR_BGR2GRAY)
    assert isinstance(info.value.__cause__, cv2.error)
    assert isinstance(info.value, OSError)  # CameraError refines OSError


class SizedCapture:
    """A fake ``cv2.VideoCapture`` with a default size that takes (or refuses) the size asked for."""

    default = (640, 480)
    largest = (1920, 1080)  # the most it takes
    delivers_large = True  # whether it still gives frames above its default
    refuses = False  # whether setting a size raises (a backend that cannot)

    def __init__(self, index: int = 0) -> None:
        self.size = list(self.default)
        self.sets: list[tuple[int, float]] = []

    def isOpened(self) -> bool:  # OpenCV's name
        return True

    def set(self, prop: int, value: float) -> bool:
        if self.refuses:
            raise cv2.error("cannot set")
        self.sets.append((prop, value))
        axis = 0 if prop == cv2.CAP_PROP_FRAME_WIDTH else 1
        self.size[axis] = int(min(value, self.largest[axis]))
        return True

    def get(self, prop: int) -> float:
        return {cv2.CAP_PROP_FRAME_WIDTH: self.size[0], cv2.CAP_PROP_FRAME_HEIGHT: self.size[1]}.get(prop, 0.0)

    def read(self) -> tuple[bool, np.ndarray | None]:
        if not self.delivers_large and self.size[0] * self.size[1] > self.default[0] * self.default[1]:
            return False, None
        return True, np.zeros((self.size[1], self.size[0], 3), np.uint8)

    def release(self) -> None:
        pass


@pytest.mark.parametrize(
    ("changes", "gives"),
    [
        ({}, (1280, 720)),  # a 640x480 webcam that offers 720p is asked for it
        ({"largest": (800, 600)}, (800, 600)),  # one that offers less gives what it has
        ({"default": (1920, 1080)}, (1920, 1080)),  # a larger default is kept, never made smaller
        ({"delivers_large": False}, (640, 480)),  # takes the size, then sends nothing: back to its own
        ({"refuses": True}, (640, 480)),  # a backend that cannot set a size: its own, silently
    ],
    ids=["offers-720p", "offers-less", "larger-default", "no-frames-at-720p", "refuses"],
)
def test_a_webcam_is_asked_for_720p_and_falls_back_silently(
    monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any], gives: tuple[int, int]
) -> None:
    capture_class = type("Capture", (SizedCapture,), changes)
    monkeypatch.setattr(camera_module.cv2, "VideoCapture", capture_class)
    with CameraSource(0) as camera:
        assert (camera.info.width, camera.info.height) == gives
        frame = next(iter(camera))
        assert frame.image.shape[:2] == (gives[1], gives[0])
    assert REQUESTED_SIZE == (1280, 720)
    capture = capture_class()
    assert request_size(capture, None, 720) == tuple(capture_class.default) and capture.sets == []
