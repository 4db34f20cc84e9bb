from __future__ import annotations

import numpy as np

from farklecam.service.overlay import (
    STATUS_COLORS,
    BoxAnnotator,
    FaceLabelAnnotator,
    KeepAnnotator,
    RethrowAnnotator,
    TextPanelAnnotator,
    TrayAnnotator,
    annotate_reading,
    keep_indices,
)
from farklecam.service.overlay.labels import label_text
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
    assert label_text(Die(None, box, 0.9, DieStatus.COCKED, 0.9)) == "C"
