from __future__ import annotations

import numpy as np
import pytest

from farklecam.models.evaluate.metrics import (
    FolderStats,
    ImageLabels,
    lean_band,
    lean_band_name,
    match_by_centre,
    predicted_classes,
    size_band,
    touching,
)
from tests.vision.fakes import make_reading as reading


def test_match_whole_die_against_pip_pattern_boxes() -> None:
    # A one's label boxes only its pip (small square); the prediction boxes the whole die.
    preds = [[100, 100, 160, 160], [300, 100, 360, 160]]
    labels = [[125, 125, 135, 135], [305, 105, 355, 155]]
    assert match_by_centre(preds, labels) == [(0, 0), (1, 1)]


def test_match_is_one_to_one_closest_first() -> None:
    preds = [[0, 0, 120, 120], [48, 48, 58, 58]]
    labels = [[45, 45, 55, 55]]  # both predictions contain/are near the label centre
    assert match_by_centre(preds, labels) == [(1, 0)]
    assert match_by_centre(preds, []) == [] and match_by_centre([], labels) == []


def test_no_match_when_centres_are_outside() -> None:
    assert match_by_centre([[0, 0, 10, 10]], [[20, 20, 30, 30]]) == []


def test_predicted_classes() -> None:
    r = reading([[0, 0, 1, 1]] * 4, [5, 0, 2, 3], ["ok", "cocked", "uncertain", "off_tray"])
    assert predicted_classes(r).tolist() == [4, 6, 1, 2]
    r2 = reading([[0, 0, 1, 1]] * 2, [0, 0], ["off_tray", "uncertain"], cocked=[True, False])
    assert predicted_classes(r2).tolist() == [6, -1]


def test_folder_stats_on_hand_made_labels() -> None:
    stats = FolderStats()
    boxes = [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]]
    # Image 1: all three found and read right.
    exact = stats.add(
        reading(boxes, [1, 5, 0], ["ok", "ok", "cocked"]),
        ImageLabels(np.array(boxes, np.float32), np.array([0, 4, 6])),
        latency_ms=10.0,
    )
    assert exact
    # Image 2: one misread (3 read as 2), one missed, one extra far away, one off-tray found.
    labels = ImageLabels(np.array(boxes, np.float32), np.array([2, 3, 5]), off_tray=np.array([False, False, True]))
    pred = reading([[0, 0, 10, 10], [40, 0, 50, 10], [90, 90, 99, 99]], [2, 6, 4], ["ok", "off_tray", "off_tray"])
    assert not stats.add(pred, labels, latency_ms=30.0)
    m = stats.metrics()
    assert m["images"] == 2 and m["dice"] == 6
    assert m["recall"] == pytest.approx(5 / 6) and m["precision"] == pytest.approx(5 / 6)
    assert m["face_accuracy"] == pytest.approx(4 / 5)
    assert m["exact_accuracy"] == pytest.approx(0.5)
    assert m["cocked_recall"] == 1.0 and m["cocked_precision"] == 1.0
    assert m["off_tray_recall"] == 1.0 and m["off_tray_precision"] == pytest.approx(0.5)
    assert m["median_ms"] == pytest.approx(20.0)
    # The 3 read 2 is scored with a wrong face; flat dice in the tray: four labelled, the off-tray 6 not among
    # them, the missed 4 among them but never read.
    assert m["ok_wrong"] == 1
    assert m["flat_ok_right"] == pytest.approx(2 / 4)
    assert stats.confusion.counts[2, 1] == 1 and stats.confusion.counts.sum() == 5


def test_an_image_is_exact_only_with_its_off_tray_flags_right() -> None:
    boxes = [[0, 0, 10, 10], [20, 0, 30, 10]]
    labels = ImageLabels(np.array(boxes, np.float32), np.array([2, 3]), off_tray=np.array([False, True]))
    stats = FolderStats()
    assert stats.add(reading(boxes, [3, 4], ["ok", "off_tray"]), labels)
    assert not stats.add(reading(boxes, [3, 4], ["ok", "ok"]), labels)  # faces right, the off-tray die not flagged
    assert not stats.add(reading(boxes, [3, 4], ["off_tray", "off_tray"]), labels)  # a die on the tray flagged
    unlabelled = ImageLabels(np.array(boxes, np.float32), np.array([2, 3]))
    assert stats.add(reading(boxes, [3, 4], ["off_tray", "ok"]), unlabelled)  # no off-tray labels: faces decide
    assert stats.metrics()["exact_accuracy"] == pytest.approx(0.5)


def test_metrics_not_applicable_are_none() -> None:
    stats = FolderStats()
    stats.add(reading([], [], []), ImageLabels(np.empty((0, 4), np.float32), np.empty(0, np.int64)))
    m = stats.metrics()
    assert m["exact_accuracy"] == 1.0
    assert m["face_accuracy"] is None and m["recall"] is None and m["off_tray_recall"] is None


def test_merge() -> None:
    a, b = FolderStats(), FolderStats()
    box = np.array([[0, 0, 10, 10]], np.float32)
    a.add(reading(box.tolist(), [1], ["ok"]), ImageLabels(box, np.array([0])), 5.0)
    b.add(reading(box.tolist(), [2], ["ok"]), ImageLabels(box, np.array([0])), 7.0)
    a.merge(b)
    assert a.images == 2 and a.face_correct == 1 and a.confusion.counts.sum() == 2 and len(a.latencies_ms) == 2


def test_occluded_dice_are_neither_errors_nor_misses() -> None:
    labels = ImageLabels(
        xyxy=np.array([[0, 0, 20, 20], [50, 0, 70, 20], [100, 0, 120, 20]], np.float32),
        classes=np.array([0, 1, 2]),
        occluded=np.array([False, True, True]),
    )
    # The visible die read right; one occluded die found and misread, the other missed.
    r = reading([[0, 0, 20, 20], [50, 0, 70, 20]], [1, 6], ["ok", "ok"])
    stats = FolderStats()
    assert stats.add(r, labels)
    m = stats.metrics()
    assert (m["dice"], m["ignored"], m["recall"], m["precision"], m["face_accuracy"]) == (1, 2, 1.0, 1.0, 1.0)
    assert stats.confusion.to_dict()["counts"][1][5] == 0
    # Counted like any other die, the same reading is wrong twice over.
    plain = FolderStats()
    assert not plain.add(r, ImageLabels(labels.xyxy, labels.classes))
    assert plain.metrics()["recall"] == pytest.approx(2 / 3) and plain.metrics()["face_accuracy"] == 0.5


@pytest.mark.parametrize(
    ("tilt", "band"),
    [(15.0, "15-25"), (19.9, "15-25"), (25.0, "25-35"), (34.9, "25-35"), (35.0, "35+"), (80.0, "35+"), (3.0, "15-25")],
)
def test_lean_bands(tilt: float, band: str) -> None:
    assert lean_band_name(lean_band(tilt)) == band


def test_cocked_recall_by_lean() -> None:
    boxes = [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 70, 10]]
    labels = ImageLabels(
        np.array(boxes, np.float32),
        np.array([6, 6, 6, 2]),
        tilt_deg=np.array([18.0, 21.0, 40.0, 0.0], np.float32),
    )
    # The shallow 21 degree lean is read as a face; the flat three is no leaning die.
    stats = FolderStats()
    stats.add(reading(boxes, [0, 2, 0, 3], ["cocked", "ok", "cocked", "ok"]), labels)
    assert stats.cocked_recall_by_lean() == {
        "15-25": {"dice": 2, "found": 1, "recall": 0.5},
        "35+": {"dice": 1, "found": 1, "recall": 1.0},
    }
    other = FolderStats()
    other.add(
        reading(boxes[:1], [0], ["cocked"]),
        ImageLabels(labels.xyxy[:1], labels.classes[:1], tilt_deg=labels.tilt_deg[:1]),
    )
    stats.merge(other)
    assert stats.cocked_recall_by_lean()["15-25"] == {"dice": 3, "found": 2, "recall": pytest.approx(2 / 3)}
    # Photos carry no tilts: no breakdown.
    plain = FolderStats()
    plain.add(reading(boxes, [0, 2, 0, 3], ["cocked", "ok", "cocked", "ok"]), ImageLabels(labels.xyxy, labels.classes))
    assert plain.cocked_recall_by_lean() == {}


def test_a_leaning_die_read_unsure_is_not_found_cocked_but_is_rethrown() -> None:
    """Cocked recall counts the cocked calls; the player sees every leaning die sent back, unsure ones too."""
    boxes = [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 70, 10]]
    labels = ImageLabels(np.array([*boxes, [90, 0, 99, 10]], np.float32), np.array([6, 6, 6, 6, 6]))
    stats = FolderStats()
    # Called cocked, read unsure, scored as a 3, off the tray; the fifth is never found.
    stats.add(reading(boxes, [0, 2, 3, 4], ["cocked", "uncertain", "ok", "off_tray"]), labels)
    m = stats.metrics()
    assert m["cocked_recall"] == pytest.approx(1 / 5) and m["cocked_rethrown"] == pytest.approx(3 / 5)
    stats.merge(stats)
    assert stats.metrics()["cocked_rethrown"] == pytest.approx(3 / 5)
    assert FolderStats().metrics()["cocked_rethrown"] is None


def test_size_bands_by_a_dies_longer_side() -> None:
    boxes = [[0, 0, 20, 29], [0, 0, 30, 10], [0, 0, 44, 44], [0, 0, 69, 10], [0, 0, 100, 100], [0, 0, 10, 200]]
    assert size_band(boxes).tolist() == [0, 1, 1, 2, 3, 4]


def test_dice_touching_side_to_side_corner_to_corner_and_in_a_row() -> None:
    boxes = [
        [0, 0, 40, 40],  # a row of three, side to side
        [41, 0, 81, 40],
        [82, 0, 122, 40],
        [200, 200, 240, 240],  # corner to corner
        [242, 242, 282, 282],
        [400, 0, 440, 40],  # alone: its nearest neighbour is a die's side away
        [400, 100, 440, 140],
    ]
    assert touching(boxes).tolist() == [True, True, True, True, True, False, False]
    assert touching(np.zeros((0, 4))).tolist() == []


def test_recall_and_faces_by_size_and_for_touching_dice() -> None:
    stats = FolderStats()
    labels = ImageLabels(
        np.array([[0, 0, 20, 20], [21, 0, 41, 20], [100, 100, 160, 160]], np.float32), np.array([0, 1, 2])
    )
    # The two small touching dice came out as one box read 1; the large die apart is read right.
    stats.add(reading([[0, 0, 20, 20], [100, 100, 160, 160]], [1, 3], ["ok", "ok"]), labels)
    groups = stats.by_group()
    assert groups["<30"] == {"dice": 2, "recall": 0.5, "face_accuracy": 1.0}
    assert groups["45-70"] == {"dice": 1, "recall": 1.0, "face_accuracy": 1.0}
    assert groups["touching"]["recall"] == 0.5 and groups["apart"]["recall"] == 1.0
    other = FolderStats()
    other.merge(stats)
    assert other.by_group() == groups
