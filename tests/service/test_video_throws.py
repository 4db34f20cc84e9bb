"""Offline reading of a recorded video, end to end: file -> frames -> gate -> reader -> settle -> throws.

The video is the demo table recorded through a lossy codec; the reader is a small
classical one (white dice, dark pips) that really looks at the pixels, so a glare
spot over a pip really misreads a die on one frame and must be outvoted.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from farklecam.errors import CameraError
from farklecam.service.live.demo import DemoTable, DemoThrow
from farklecam.service.video_throws import CSV_FIELDS, ThrowResult, annotate_state, read_video, throws_from_video
from farklecam.vision.camera.sources import VideoFileSource, VideoSink
from farklecam.vision.reading import Reading

SIZE = (320, 240)
SCRIPT = [
    DemoThrow((5, 4, 6, 6, 6, 6)),  # the glare spot lands on the 5's middle pip
    DemoThrow((1, 2, 3, 3, 4, 4), hand=True),
    DemoThrow((1, 3, 3, 6, 6), cocked=(0,)),
]


class PipReader:
    """Finds white dice on the felt and counts the dark pips inside each; no pips means cocked."""

    def read(self, frame: np.ndarray, /) -> Reading:
        hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
        body = ((hsv[..., 1] < 60) & (hsv[..., 2] > 150)).astype(np.uint8)
        dark = (hsv[..., 2] < 100).astype(np.uint8)
        contours, _ = cv2.findContours(body, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        boxes, faces = [], []
        for contour in contours:
            x, y, w, h = cv2.boundingRect(contour)
            if cv2.contourArea(contour) < 150 or not 0.5 < w / h < 2:
                continue
            inside = np.zeros((h, w), np.uint8)
            cv2.drawContours(inside, [contour - (x, y)], -1, 1, -1)
            inside = cv2.erode(inside, np.ones((3, 3), np.uint8))
            _, _, stats, _ = cv2.connectedComponentsWithStats(dark[y : y + h, x : x + w] & inside)
            pips = int(np.count_nonzero(stats[1:, 4] >= 3))
            boxes.append([x, y, x + w, y + h])
            faces.append(pips if 1 <= pips <= 6 else 0)
        n = len(boxes)
        return Reading(
            xyxy=np.array(boxes, np.float32).reshape(-1, 4),
            confidence=[0.9] * n,
            face=faces,
            face_confidence=[0.9] * n,
            status=["ok" if f else "cocked" for f in faces],
            image_size=(frame.shape[1], frame.shape[0]),
        )


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """The script recorded as an MJPG video; returns its path and each frame's sidecar."""
    path = tmp_path_factory.mktemp("video") / "table.avi"
    table = DemoTable(SCRIPT, size=SIZE, settled_frames=20, seed=4, die=34)  # 0.67 s at rest
    with VideoSink(path, table.fps, SIZE) as sink:
        for frame in table:
            sink.write(frame.image)
    return path, table.sidecars


def test_a_recorded_video_gives_one_result_per_throw(
    recording: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    path, sidecars = recording
    out = tmp_path / "annotated.avi"
    results = list(read_video(path, PipReader(), out=out, progress=False))
    assert [r.throw for r in results] == [1, 2, 3]
    assert [r.reading.faces for r in results] == [t.expected_faces for t in SCRIPT]
    assert [r.reading.rethrow for r in results] == [0, 0, 1]
    for k, result in enumerate(results):
        assert sidecars[result.frame_index]["throw"] == k
        assert sidecars[result.frame_index]["phase"] == "settled"
        assert result.timestamp == pytest.approx(result.frame_index / 30.0)
    with VideoFileSource(out) as annotated:
        assert annotated.info is not None and annotated.info.frame_count == len(sidecars)


def test_the_glare_frame_is_misread_and_outvoted(recording: tuple[Path, list[dict[str, Any]]]) -> None:
    path, sidecars = recording
    reader = PipReader()
    with VideoFileSource(path) as video:
        frames = list(video)
    glare = next(f for f, s in zip(frames, sidecars, strict=True) if s.get("glare"))
    clean = frames[glare.index - 1]
    assert reader.read(glare.image).faces != reader.read(clean.image).faces  # the glare spot hides a pip
    results = list(throws_from_video(frames, reader))
    assert results[0].reading.faces == SCRIPT[0].expected_faces


def test_results_are_json_and_csv_ready(recording: tuple[Path, list[dict[str, Any]]]) -> None:
    path, _ = recording
    with VideoFileSource(path) as video:
        results = list(throws_from_video(video, PipReader()))
    data = json.loads(json.dumps([r.to_dict() for r in results]))
    assert data[2]["faces"] == [3, 3, 6, 6] and data[2]["rethrow"] == 1
    assert {"frame", "time", "throw", "dice"} <= set(data[0])
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(r.to_row() for r in results)
    rows = list(csv.DictReader(io.StringIO(buffer.getvalue())))
    assert [row["faces"] for row in rows] == ["4 5 6 6 6 6", "1 2 3 3 4 4", "3 3 6 6"]
    assert rows[2]["rethrow"] == "1" and rows[0]["dice"] == "6"


def test_uncertain_dice_say_why_in_json() -> None:
    reading = Reading(
        xyxy=[[0, 0, 10, 10], [20, 0, 30, 10]],
        confidence=[0.9, 0.9],
        face=[5, 3],
        face_confidence=[0.9, 0.5],
        status=["ok", "uncertain"],
        data={"ambiguity": np.array(["", "disagreeing_reads"])},
    )
    result = ThrowResult(1, 10, 0.5, reading)
    dice = result.to_dict()["dice"]
    assert "ambiguity" not in dice[0] and dice[1]["ambiguity"] == "disagreeing_reads"
    assert result.to_row()["uncertain"] == 1


def test_progress_bar_and_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    table = DemoTable([DemoThrow((2, 5))], size=SIZE, settled_frames=20, seed=1)
    drawn = []

    def on_frame(frame: Any, state: Any) -> None:
        drawn.append(annotate_state(frame.image, state))

    results = list(throws_from_video(table, table, on_frame=on_frame, progress=True, total=50))
    assert [r.reading.faces for r in results] == [(2, 5)]
    assert len(drawn) == len(table.sidecars) and drawn[-1].shape == (SIZE[1], SIZE[0], 3)
    assert "frame" in capsys.readouterr().err  # tqdm's bar


def test_a_missing_video_is_a_camera_error(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="does not exist"):
        list(read_video(tmp_path / "nope.mp4", PipReader(), progress=False))
