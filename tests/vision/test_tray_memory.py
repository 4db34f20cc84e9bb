"""A stream's tray memory: the tray found in earlier reads calls a lone die off where a frame alone cannot."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import DieStatus, Reading, TrayState
from farklecam.vision.settle.detector import SettleConfig, SettleDetector, SettlePhase
from farklecam.vision.tray.memory import FoundTray, TrayMemory, polygon_iou
from farklecam.vision.tray.outline import TrayOutline

FLOOR = np.array([[200, 120], [460, 120], [460, 380], [200, 380]], np.float32)
ON_TRAY = [300.0, 200.0, 326.0, 226.0]
OFF_TRAY = [240.0, 40.0, 266.0, 66.0]  # on the table above the tray


def table_frame(shift: int = 0) -> np.ndarray:
    """A teal tray floor on a pale, textured table (BGR, 640 x 480); ``shift`` moves the camera."""
    rng = np.random.default_rng(0)
    image = np.clip(rng.normal((190, 215, 175), 12, (480, 640, 3)), 0, 255).astype(np.uint8)
    image[120:380, 200:460] = np.clip(rng.normal((120, 110, 20), 6, (260, 260, 3)), 0, 255).astype(np.uint8)
    for y in range(0, 480, 37):  # a wood grain for the camera's motion test to hold on to
        image[y : y + 3] //= 2
    return np.roll(image, shift, axis=(0, 1)) if shift else image


def reading(boxes: list[list[float]], state: TrayState, tray: np.ndarray | None = None) -> Reading:
    n = len(boxes)
    return Reading(
        xyxy=np.array(boxes, np.float32).reshape(-1, 4), confidence=np.full(n, 0.9, np.float32),
        face=np.full(n, 3), face_confidence=np.full(n, 0.9, np.float32), status=np.array(["ok"] * n),
        image_size=(640, 480), tray=tray, tray_state=state.value,
    )  # fmt: skip


def taught(confirm: int = 3) -> TrayMemory:
    memory = TrayMemory(confirm=confirm)
    for _ in range(confirm):
        memory.apply(table_frame(), reading([ON_TRAY], TrayState.FOUND, FLOOR))
    return memory


def test_a_lone_die_off_the_tray_is_called_off_by_the_tray_earlier_reads_found() -> None:
    memory = taught()
    alone = memory.apply(table_frame(), reading([OFF_TRAY], TrayState.NONE))
    assert alone.status.tolist() == [DieStatus.OFF_TRAY] and alone.tray_state == TrayState.FOUND
    np.testing.assert_array_equal(alone.tray, FLOOR)
    both = memory.apply(table_frame(), reading([OFF_TRAY, ON_TRAY], TrayState.UNSURE, FLOOR))
    assert both.status.tolist() == [DieStatus.OFF_TRAY, DieStatus.OK]  # one of two off: no longer doubted


def test_without_a_confirmed_tray_nothing_changes() -> None:
    memory = taught(confirm=3)
    fresh = TrayMemory(confirm=3)
    for _ in range(2):
        fresh.apply(table_frame(), reading([ON_TRAY], TrayState.FOUND, FLOOR))
    lone = reading([OFF_TRAY], TrayState.NONE)
    assert fresh.apply(table_frame(), lone) is lone and fresh.outline is None
    assert memory.outline is not None


def test_reads_that_found_or_were_given_a_tray_are_their_own() -> None:
    memory = taught()
    marked = reading([OFF_TRAY], TrayState.MARKED, FLOOR + 5)
    found = reading([ON_TRAY], TrayState.FOUND, FLOOR)
    assert memory.apply(table_frame(), marked) is marked and memory.apply(table_frame(), found) is found


def test_an_outline_swollen_past_the_remembered_tray_does_not_take_a_die_off_it_in() -> None:
    memory = taught()
    swollen = np.array([[200, 20], [460, 20], [460, 380], [200, 380]], np.float32)  # glare joined the table above
    assert polygon_iou(swollen, FLOOR) < memory.agree_iou
    read = memory.apply(table_frame(), reading([OFF_TRAY, ON_TRAY], TrayState.FOUND, swollen))
    assert read.status.tolist() == [DieStatus.OFF_TRAY, DieStatus.OK]
    np.testing.assert_array_equal(read.tray, swollen)  # the frame's own outline stays what it found
    agreeing = reading([OFF_TRAY, ON_TRAY], TrayState.FOUND, FLOOR + 2)
    assert memory.apply(table_frame(), agreeing) is agreeing


def test_a_die_on_ground_of_the_floors_colour_is_not_called_off() -> None:
    image = table_frame()
    image[20:90, 220:290] = image[200:270, 300:370]  # floor-coloured ground around the die: the floor goes on
    memory = taught()
    lone = memory.apply(image, reading([OFF_TRAY], TrayState.NONE))
    assert lone.status.tolist() == [DieStatus.OK] and lone.tray_state == TrayState.UNSURE


def test_a_moved_camera_forgets_the_tray() -> None:
    memory = taught()
    lone = reading([OFF_TRAY], TrayState.NONE)
    assert memory.apply(table_frame(shift=60), lone) is lone
    assert memory.outline is None


def test_another_tray_found_again_and_again_replaces_the_remembered_one() -> None:
    memory = taught()
    other = FLOOR + np.float32(150)
    memory.apply(table_frame(), reading([ON_TRAY], TrayState.FOUND, other))
    assert memory.outline is not None and polygon_iou(memory.outline.polygon, FLOOR) == pytest.approx(1.0)
    for _ in range(2):
        memory.apply(table_frame(), reading([ON_TRAY], TrayState.FOUND, other))
    assert memory.outline is not None and polygon_iou(memory.outline.polygon, other) == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(st.floats(-300, 300), st.floats(-300, 300), st.floats(20, 300), st.floats(20, 300))
@example(0.0, 1.175494351e-38, 20.0, 20.0)  # edges shared: OpenCV's intersectConvexConvex said IoU 50
def test_polygon_iou_is_the_rectangles_iou(dx: float, dy: float, w: float, h: float) -> None:
    a = np.array([[0, 0], [200, 0], [200, 100], [0, 100]], np.float32)
    b = np.array([[dx, dy], [dx + w, dy], [dx + w, dy + h], [dx, dy + h]], np.float32)
    inter = max(0.0, min(200, dx + w) - max(0, dx)) * max(0.0, min(100, dy + h) - max(0, dy))
    expected = inter / (200 * 100 + w * h - inter)
    assert polygon_iou(a, b) == pytest.approx(expected, abs=1e-3)


def test_the_settle_layer_reports_a_lone_die_thrown_off_the_tray_as_off() -> None:
    detector = SettleDetector(SettleConfig(settle_seconds=0.2, min_reads=2))
    image, index = table_frame(), 0
    script = [(reading([ON_TRAY], TrayState.FOUND, FLOOR), 8), (None, 4), (reading([OFF_TRAY], TrayState.NONE), 8)]
    reported = []
    for read, frames in script:
        for _ in range(frames):
            state = detector.update(Frame(image, index, index / 15), read, moving=read is None)
            index += 1
            if state.is_new and state.reading is not None:
                reported.append(state.reading.status.tolist())
    assert reported == [[DieStatus.OK], [DieStatus.OFF_TRAY]]
    assert detector.update(Frame(image, index, index / 15), None, moving=True).phase is SettlePhase.MOVING


# ----------------------------------------------------------------------------- a stream's found tray
def test_a_found_tray_serves_the_next_reads_then_is_searched_for_again() -> None:
    found, searches = FoundTray(reuse=3), []

    def search() -> TrayOutline | None:
        searches.append(1)
        return TrayOutline(FLOOR, source="auto")

    outlines = [found.outline(table_frame(), search) for _ in range(9)]
    assert len(searches) == 3  # reads 1, 5 and 9 searched; the three after each used what it found
    assert all(o is outlines[0] for o in outlines[:4]) and outlines[4] is not outlines[0]


def test_a_moved_camera_or_a_tray_not_found_is_searched_for_at_once() -> None:
    found, searches = FoundTray(reuse=8), []
    results: list[TrayOutline | None] = [TrayOutline(FLOOR, source="auto"), None, None]

    def search() -> TrayOutline | None:
        searches.append(1)
        return results[min(len(searches) - 1, len(results) - 1)]

    assert found.outline(table_frame(), search) is not None
    assert found.outline(table_frame(shift=60), search) is None  # the camera moved: searched, and nothing found
    assert found.outline(table_frame(shift=60), search) is None and len(searches) == 3  # nothing is remembered
    with pytest.raises(ValueError, match="reuse"):
        FoundTray(reuse=-1)
