"""An outline found in the picture calls dice off only where the picture backs it (farklecam.vision.tray.trust)."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.reader import DiceReader, ReaderConfig
from farklecam.vision.reading import DieStatus, Reading, TrayState
from farklecam.vision.tray.detect import detect_tray
from farklecam.vision.tray.outline import TrayOutline
from farklecam.vision.tray.trust import REACH_ON_TRAY, floor_goes_on, off_tray_calls, reach_into, tray_state
from tests.vision.conftest import draw_die
from tests.vision.test_reader import ScriptedClassifier
from tests.vision.test_tray import _tray_scene, classify_off_tray


def table(seed: int = 0) -> np.ndarray:
    """640x480 of a wooden-looking table, no tray: one brown with a little grain."""
    rng = np.random.default_rng(seed)
    img = np.full((480, 640, 3), (60, 100, 150), np.uint8)
    return cv2.add(img, rng.integers(0, 10, img.shape).astype(np.uint8))


def found(boxes: list[tuple[int, int, int, int]]) -> Reading:
    n = len(boxes)
    return Reading(xyxy=boxes, confidence=[0.9] * n, face=[0] * n, face_confidence=[0] * n, status=["ok"] * n)


LEFT = [[20, 20], [380, 20], [380, 460], [20, 460]]  # a rectangle over part of a table that has no tray


def test_a_true_tray_found_in_the_picture_keeps_its_off_tray_call() -> None:
    frame, boxes = _tray_scene()
    outline = detect_tray(frame, boxes)
    assert outline is not None
    off = classify_off_tray(boxes, outline)
    assert off.tolist() == [False, False, True, False]  # the die on the table beside the green floor
    assert floor_goes_on(frame, outline, boxes, off).tolist() == [False] * 4
    assert tray_state(frame, outline, boxes, off) == TrayState.FOUND


def test_a_found_outline_is_unsure_where_the_floor_goes_on_past_it() -> None:
    frame = table()
    boxes = np.array([draw_die(frame, 2, 150, 200, 40), draw_die(frame, 5, 500, 220, 40)], np.float32)
    outline = TrayOutline(np.array(LEFT, np.float32), source="auto")
    off = classify_off_tray(boxes, outline)
    assert off.tolist() == [False, True]
    assert floor_goes_on(frame, outline, boxes, off).tolist() == [False, True]
    assert tray_state(frame, outline, boxes, off) == TrayState.UNSURE
    # The same outline, marked by the player, is the player's word.
    marked = TrayOutline(outline.polygon, source="corners")
    assert tray_state(frame, marked, boxes, off) == TrayState.MARKED


def test_an_outline_most_dice_are_off_is_unsure() -> None:
    frame, boxes = _tray_scene()
    wrong = TrayOutline(np.array([[150, 150], [260, 150], [260, 260], [150, 260]], np.float32), source="auto")
    off = classify_off_tray(boxes, wrong)
    assert off.sum() == 3  # 3 of 4 dice off a rectangle around one of them
    assert tray_state(frame, wrong, boxes, off) == TrayState.UNSURE


def test_nothing_off_and_no_outline() -> None:
    frame, boxes = _tray_scene()
    outline = TrayOutline(np.array(LEFT, np.float32), source="auto")
    assert tray_state(frame, outline, boxes, np.zeros(4, bool)) == TrayState.FOUND
    assert tray_state(frame, None, boxes, np.ones(4, bool)) == TrayState.NONE
    assert tray_state(frame, TrayOutline(outline.polygon, source="aruco"), boxes, np.ones(4, bool)) == "marked"


@settings(max_examples=25, deadline=None)
@given(
    right=st.integers(200, 420),
    gap=st.integers(0, 150),
    y=st.integers(20, 410),
    side=st.integers(16, 48),
    inside=st.booleans(),
)
def test_on_one_colour_a_die_off_a_found_outline_always_finds_the_floor_going_on(
    right: int, gap: int, y: int, side: int, inside: bool
) -> None:
    frame = np.full((480, 640, 3), (60, 100, 150), np.uint8)
    x = max(15, right - side - 5 - gap) if inside else min(590, right + 5 + gap)
    box = np.array([[x, y, x + side, y + side]], np.float32)
    cv2.rectangle(frame, (x, y), (x + side, y + side), (235, 235, 235), -1)
    outline = TrayOutline(np.array([[10, 10], [right, 10], [right, 470], [10, 470]], np.float32), source="auto")
    off = classify_off_tray(box, outline)
    assert off[0] == (not inside)
    assert floor_goes_on(frame, outline, box, off)[0] == (not inside)  # asked of the dice off only
    assert tray_state(frame, outline, box, off) == (TrayState.FOUND if inside else TrayState.UNSURE)


def reader_with(boxes: list[tuple[int, int, int, int]], tray: TrayOutline | None) -> DiceReader:
    probs = [[0, 0.95, 0, 0, 0, 0, 0.05]] * len(boxes)
    config = ReaderConfig(vertical_search=False, cocked_test=False)  # only the tray is in question
    return DiceReader(
        detector=lambda _f: found(boxes),
        classifier=ScriptedClassifier(probs),  # type: ignore[arg-type]
        tray=tray,
        config=config,
    )


def test_the_reader_calls_nothing_off_an_unsure_outline_and_says_so() -> None:
    frame = table()
    boxes = [draw_die(frame, 2, 150, 200, 40), draw_die(frame, 2, 200, 300, 40), draw_die(frame, 5, 500, 220, 40)]
    unsure = reader_with(boxes, TrayOutline(np.array(LEFT, np.float32), source="auto")).read(frame)
    assert unsure.status.tolist() == ["ok"] * 3 and unsure.tray_state == "unsure"
    assert unsure.to_dict()["tray"] == "unsure"
    marked = reader_with(boxes, TrayOutline.from_corners(LEFT)).read(frame)
    assert marked.status.tolist() == ["ok", "ok", DieStatus.OFF_TRAY] and marked.to_dict()["tray"] == "marked"
    tray_frame, tray_boxes = _tray_scene()
    real = reader_with([tuple(int(v) for v in b) for b in tray_boxes], None).read(tray_frame)  # type: ignore[misc]
    assert real.tray_state == "found" and real.status.tolist().count(DieStatus.OFF_TRAY) == 1


def test_a_table_with_no_tray_reads_none_and_calls_nothing_off() -> None:
    frame = table()
    boxes = [draw_die(frame, 2, 150, 200, 40), draw_die(frame, 5, 300, 220, 40)]
    reading = reader_with(boxes, None).read(frame)
    assert reading.status.tolist() == ["ok", "ok"]
    assert reading.tray_state in ("none", "unsure") and reading.to_dict()["tray"] == reading.tray_state


def test_a_found_floor_does_not_call_off_a_die_reaching_half_its_side_into_it() -> None:
    frame, _boxes = _tray_scene()
    outline = detect_tray(frame, _boxes)
    assert outline is not None
    # A die on the floor's right edge, as on a tray's sloped wall: its base (the lower half) mostly outside.
    xs = np.arange(640, dtype=np.float32)
    x_edge = float(xs[outline.contains(np.column_stack([xs, np.full(640, 220, np.float32)]))].max())
    edge = np.array([[x_edge - 30, 200, x_edge + 10, 240], [600, 300, 630, 330], *_boxes[:2]], np.float32)
    inside = np.array([0.3, 0.0, 1.0, 1.0], np.float32)  # and two dice well inside: the outline holds most
    assert reach_into(edge, outline)[0] >= REACH_ON_TRAY > reach_into(edge, outline)[1]
    state, off = off_tray_calls(frame, outline, edge, inside, 0.5)
    assert state == TrayState.FOUND and off.tolist() == [False, True, False, False]
    marked = TrayOutline(outline.polygon, source="corners")
    assert off_tray_calls(frame, marked, edge, inside, 0.5)[1].tolist() == [True, True, False, False]
    nothing, none_off = off_tray_calls(frame, None, edge, inside, 0.5)
    assert nothing == TrayState.NONE and not none_off.any()


@settings(max_examples=40, deadline=None)
@given(x=st.floats(-200, 800), y=st.floats(-200, 700), side=st.floats(4, 80))
def test_reach_is_positive_inside_and_negative_clear_of_the_outline(x: float, y: float, side: float) -> None:
    outline = TrayOutline(np.array(LEFT, np.float32), source="auto")
    box = np.array([[x, y, x + side, y + side]], np.float32)
    corners = np.array([[x, y], [x + side, y], [x, y + side], [x + side, y + side]], np.float32)
    reach = float(reach_into(box, outline)[0])
    if outline.contains(corners).all():
        assert reach > 0
    elif not outline.contains(corners).any() and not (x < 380 and x + side > 20 and y < 460 and y + side > 20):
        assert reach <= 0
    assert reach <= 0.5 * 440 / side + 1e-3  # never deeper than the outline's half width


def test_a_voted_throw_keeps_the_last_reads_tray_state() -> None:
    from farklecam.vision.settle.detector import SettleConfig, vote

    reads = [dataclasses.replace(found([(200, 200, 240, 240)]), tray_state=s) for s in ("found", "unsure")]
    assert vote(reads, [[0, 0]], SettleConfig()).tray_state == "unsure"


def test_most_dice_off_an_outline_doubt_it_even_where_some_reach_into_it() -> None:
    frame, boxes = _tray_scene()
    wrong = TrayOutline(np.array([[150, 150], [360, 150], [360, 300], [150, 300]], np.float32), source="auto")
    inside = np.array([0.2, 0.3, 0.0, 0.0], np.float32)  # all four footprints mostly outside
    assert reach_into(boxes, wrong)[:2].min() >= REACH_ON_TRAY  # two of them reach well in
    state, off = off_tray_calls(frame, wrong, boxes, inside, 0.5)
    assert state == TrayState.UNSURE and not off.any()
