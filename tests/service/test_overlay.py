from __future__ import annotations

import numpy as np

from farklecam.service.overlay import (
    KEEP_COLOR,
    LEGEND,
    STATUS_COLORS,
    BoxAnnotator,
    FaceLabelAnnotator,
    KeepAnnotator,
    RethrowAnnotator,
    TextPanelAnnotator,
    TrayAnnotator,
    annotate_reading,
    keep_indices,
    place_labels,
)
from farklecam.service.overlay.labels import Rect, label_text
from farklecam.vision.reading import Die, DieStatus, Reading


def sample() -> Reading:
    return Reading(
        xyxy=[[20, 20, 60, 60], [100, 20, 140, 60], [180, 20, 220, 60], [260, 20, 300, 60], [20, 100, 60, 140]],
        confidence=[0.9] * 5,
        face=[5, 1, 0, 3, 5],
        face_confidence=[0.8, 0.95, 0.9, 0.3, 0.99],
        status=["ok", "ok", "cocked", "uncertain", "ok"],
        tray=[[10, 10], [310, 10], [310, 150], [10, 150]],
    )


def blank() -> np.ndarray:
    return np.zeros((240, 320, 3), np.uint8)


def test_box_colours_by_status() -> None:
    scene = BoxAnnotator(thickness=2).annotate(blank(), sample())
    assert tuple(scene[40, 20]) == STATUS_COLORS[DieStatus.OK]
    assert tuple(scene[40, 180]) == STATUS_COLORS[DieStatus.COCKED]
    assert tuple(scene[40, 260]) == STATUS_COLORS[DieStatus.UNCERTAIN]


def test_keep_indices_multiset_prefers_confident() -> None:
    r = sample()
    assert keep_indices(r, [5]) == [4]  # the surer of the two fives
    assert keep_indices(r, [1, 5, 5]) == [0, 1, 4]
    assert keep_indices(r, [3, 6]) == []  # the three is uncertain, there is no six


def test_every_annotator_draws_and_returns_the_scene() -> None:
    for annotator in (
        BoxAnnotator(),
        FaceLabelAnnotator(show_confidence=True),
        RethrowAnnotator(),
        KeepAnnotator([1, 5]),
        TextPanelAnnotator(["Keep 1+5: 150", "Bank ≥ 300"]),
        TrayAnnotator(),
    ):
        scene = blank()
        out = annotator.annotate(scene, sample())
        assert out is scene and scene.any(), type(annotator).__name__


def test_nothing_to_draw() -> None:
    empty = Reading.empty()
    for annotator in (RethrowAnnotator(), TextPanelAnnotator([]), TrayAnnotator(), KeepAnnotator([5])):
        assert not annotator.annotate(blank(), empty).any()


def test_annotate_reading_copies() -> None:
    frame = blank()
    out = annotate_reading(frame, sample(), keep_faces=[1, 5], text_lines=["Best: keep 1 and 5"])
    assert not frame.any() and out.any() and out.shape == frame.shape


def test_a_die_s_tag_says_its_face_status_and_a_measured_tilt() -> None:
    box = (0.0, 0.0, 10.0, 10.0)
    assert label_text(Die(5, box, 0.9, DieStatus.OK, 0.97)) == "5"
    assert label_text(Die(5, box, 0.9, DieStatus.OK, 0.97), show_confidence=True) == "5 0.97"
    assert label_text(Die(4, box, 0.9, DieStatus.OFF_TRAY, 0.9)) == "4 OUT"
    assert label_text(Die(None, box, 0.9, DieStatus.UNCERTAIN, 0.3)) == "?"
    assert label_text(Die(3, box, 0.9, DieStatus.UNCERTAIN, 0.3)) == "3?"
    assert label_text(Die(None, box, 0.9, DieStatus.COCKED, 0.9)) == "LEAN"
    assert label_text(Die(None, box, 0.9, DieStatus.COCKED, 0.9), number=2) == "#2 LEAN"
    assert label_text(Die(1, box, 0.9, DieStatus.OK, 0.9), keep=True) == "1 KEEP"


def test_the_legend_names_every_mark_the_overlay_draws() -> None:
    tags = {entry.mark: entry for entry in LEGEND}
    assert set(tags) == {"ok", "cocked", "off_tray", "uncertain", "keep", "number"}
    for status in DieStatus:
        assert tags[status.value].color == STATUS_COLORS[status]
        assert label_text(Die(None if status is DieStatus.COCKED else 5, (0, 0, 1, 1), 0.9, status, 0.9)).endswith(
            tags[status.value].tag
        )
    assert tags["keep"].color == KEEP_COLOR and tags["keep"].tag == "KEEP"


def overlaps(a: Rect, b: Rect) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0 and min(a[3], b[3]) - max(a[1], b[1]) > 0


def assert_clear(boxes: list[Rect], tags: list[Rect], frame: tuple[float, float]) -> None:
    """No tag covers a die (its own included) or another tag, and every tag lies inside the frame."""
    for i, tag in enumerate(tags):
        assert tag[0] >= 0 and tag[1] >= 0 and tag[2] <= frame[0] and tag[3] <= frame[1], tag
        covered = [j for j, box in enumerate(boxes) if overlaps(tag, box)]
        assert not covered, f"tag {i} {tag} covers dice {covered}"
        others = [j for j, other in enumerate(tags) if j != i and overlaps(tag, other)]
        assert not others, f"tag {i} {tag} covers tags {others}"


def test_tags_go_above_their_dice_where_there_is_room() -> None:
    boxes: list[Rect] = [(100, 100, 140, 140), (300, 200, 340, 240)]
    tags = place_labels(boxes, [(30, 20), (30, 20)], (640, 480))
    assert tags == [(100, 78, 130, 98), (300, 178, 330, 198)]  # above, left-aligned, 2 px clear of the die


def test_tags_of_dice_side_by_side_cover_no_neighbour() -> None:
    # Two rows of dice 4 px apart, tags wider than a die: placed naively above each die, each tag would
    # cover the next die's tag, and the second row's would cover the first row's dice.
    boxes: list[Rect] = [(100 + 44 * k, 200 + 44 * r, 140 + 44 * k, 240 + 44 * r) for r in range(2) for k in range(5)]
    sizes = [(70.0, 22.0)] * len(boxes)
    tags = place_labels(boxes, sizes, (640, 480))
    assert_clear(boxes, tags, (640, 480))
    assert tags[0] == (100, 176, 170, 198)  # the first keeps the nearest spot


def test_tags_stay_in_the_frame_and_move_out_from_dice_at_its_edge() -> None:
    boxes: list[Rect] = [(0, 0, 40, 40), (42, 0, 82, 40), (600, 440, 640, 480)]
    tags = place_labels(boxes, [(60, 20)] * 3, (640, 480))
    assert_clear(boxes, tags, (640, 480))
    assert tags[2][3] <= 438 or tags[2][2] <= 598  # above or beside the corner die, not off the frame


def test_where_every_spot_is_taken_a_tag_covers_as_little_as_it_can() -> None:
    boxes: list[Rect] = [(x, y, x + 40, y + 40) for x in range(0, 200, 40) for y in range(0, 120, 40)]
    tags = place_labels(boxes, [(30, 20)] * len(boxes), (200, 120))  # dice fill the whole frame
    assert len(tags) == len(boxes) and all(t[0] >= 0 and t[2] <= 200 and t[3] <= 120 for t in tags)


def test_the_order_says_whose_tag_is_placed_first() -> None:
    boxes: list[Rect] = [(100, 100, 140, 140), (142, 100, 182, 140)]
    first, second = place_labels(boxes, [(60, 20)] * 2, (640, 480), order=[1, 0])
    assert second == (142, 78, 202, 98)  # the second die's tag was placed first: the nearest spot is its own
    assert not overlaps(first, second)


def test_the_drawn_tags_cover_no_neighbouring_die() -> None:
    reading = Reading(
        xyxy=[[100 + 44 * k, 100, 140 + 44 * k, 140] for k in range(5)],
        confidence=[0.9] * 5,
        face=[5, 1, 0, 3, 5],
        face_confidence=[0.9] * 5,
        status=["ok", "ok", "cocked", "uncertain", "off_tray"],
    )
    scene = FaceLabelAnnotator(scale=0.5).annotate(np.zeros((480, 640, 3), np.uint8), reading)
    for x1, y1, x2, y2 in reading.xyxy.astype(int):  # inside every die's box: not a pixel of any tag
        assert not scene[y1 + 1 : y2 - 1, x1 + 1 : x2 - 1].any()
    assert scene.any()
