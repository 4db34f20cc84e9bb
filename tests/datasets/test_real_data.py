"""The real-photo loaders: fixed split, disjoint holdout, whole-die boxes from pip patterns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from farklecam.datasets.real import (
    HOLDOUT_PERCENT,
    SOURCES,
    VALIDATION_PERCENT,
    export_holdout,
    is_holdout,
    is_validation,
    load_source,
    real_data_root,
    split,
    validation_split,
    whole_die_boxes,
)
from farklecam.datasets.training_sets import build_detector_dataset, real_frames
from farklecam.datasets.yolo import read_labels

needs_real = pytest.mark.skipif(not real_data_root().is_dir(), reason="shared real photos not present")


def test_is_holdout_depends_on_the_name_only() -> None:
    names = [f"img_{i}.jpg" for i in range(2000)]
    first = [is_holdout(n) for n in names]
    assert first == [is_holdout(n) for n in names]
    share = sum(first) / len(names)
    assert abs(share - HOLDOUT_PERCENT / 100) < 0.03


@pytest.mark.parametrize(
    ("boxes", "faces", "size", "fallback"),
    [
        ([[100, 100, 140, 140], [300, 200, 320, 215]], [5, 1], (640, 480), None),  # a five sizes the one
        ([[0, 0, 20, 20]], [6], (640, 480), None),  # at the corner: clipped
        ([[600, 440, 640, 480]], [4], (640, 480), None),  # at the far corner
        ([[200, 200, 210, 210]], [1], (640, 480), 55.0),  # no 4-6: dataset-wide side
        ([[200, 200, 290, 300]], [1], (640, 480), 55.0),  # a one labelled around the whole face stays
        ([[10, 10, 30, 40], [50, 50, 60, 58]], [2, 3], (64, 64), None),  # no 4-6, no fallback
    ],
)
def test_whole_die_boxes_contain_the_label_and_stay_inside(
    boxes: list[list[float]], faces: list[int], size: tuple[int, int], fallback: float | None
) -> None:
    width, height = size
    original = np.array(boxes, dtype=np.float32)
    out = whole_die_boxes(original, faces, width, height, fallback)
    assert out.shape == original.shape
    assert (out[:, :2] <= original[:, :2] + 1e-4).all() and (out[:, 2:] >= original[:, 2:] - 1e-4).all()
    assert (out >= 0).all() and (out[:, [0, 2]] <= width).all() and (out[:, [1, 3]] <= height).all()


def test_whole_die_boxes_of_nothing() -> None:
    assert whole_die_boxes(np.zeros((0, 4)), [], 640, 480).shape == (0, 4)


@needs_real
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_split_is_deterministic_and_disjoint(source: str) -> None:
    train, holdout = split(source)
    train2, holdout2 = split(source)
    assert [im.path for im in train] == [im.path for im in train2]
    assert [im.path for im in holdout] == [im.path for im in holdout2]
    assert not {im.path for im in train} & {im.path for im in holdout}
    assert len(train) + len(holdout) == len(load_source(source))
    assert 0.1 < len(holdout) / (len(train) + len(holdout)) < 0.3


@needs_real
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_loaded_boxes_are_whole_dice_inside_the_image(source: str) -> None:
    for im in load_source(source):
        assert len(im.faces) == len(im.boxes) == len(im.label_boxes) > 0
        assert set(im.faces.tolist()) <= {1, 2, 3, 4, 5, 6}
        assert (im.boxes[:, :2] <= im.label_boxes[:, :2] + 1e-3).all()
        assert (im.boxes[:, 2:] >= im.label_boxes[:, 2:] - 1e-3).all()
        assert (im.boxes >= 0).all() and (im.boxes[:, 2] <= im.width).all() and (im.boxes[:, 3] <= im.height).all()
        if not SOURCES[source]:
            np.testing.assert_array_equal(im.boxes, im.label_boxes)


@needs_real
def test_holdout_never_reaches_a_training_set(tmp_path: Path) -> None:
    held = {im.path.resolve() for s in SOURCES for im in split(s)[1]}
    frames = real_frames()
    assert held and not held & {f.path.resolve() for f in frames}
    dataset = build_detector_dataset(tmp_path / "det", frames)
    linked = {p.resolve() for p in (tmp_path / "det" / "images").rglob("*.jpg")}
    assert linked and not held & linked
    assert sum(dataset.counts["train"].values()) + sum(dataset.counts["val"].values()) == len(frames)


@needs_real
def test_export_holdout_writes_yolo_folders(tmp_path: Path) -> None:
    folders = export_holdout(tmp_path, ["matteop65_webcam"])
    _, holdout = split("matteop65_webcam")
    images = sorted((folders[0] / "images").iterdir())
    assert [p.name for p in images] == sorted(im.path.name for im in holdout)
    first = holdout[0]
    labels = read_labels(folders[0] / "labels" / f"{first.path.stem}.txt")
    assert [b.cls + 1 for b in labels] == first.faces.tolist()


def test_validation_slice_is_part_of_training_and_sized() -> None:
    names = [f"img_{i}.jpg" for i in range(4000)]
    validation = [n for n in names if is_validation(n)]
    assert not any(is_holdout(n) for n in validation)
    assert abs(len(validation) / len(names) - VALIDATION_PERCENT / 100) < 0.03


@needs_real
def test_validation_split_partitions_the_training_part() -> None:
    for source in SOURCES:
        train, holdout = split(source)
        fit, validation = validation_split(source)
        assert fit and validation
        assert sorted(im.path.name for im in fit + validation) == sorted(im.path.name for im in train)
        assert not {im.path.name for im in validation} & {im.path.name for im in holdout}


@needs_real
def test_held_validation_leaves_the_frames_out() -> None:
    validation = {im.path.resolve() for s in SOURCES for im in validation_split(s)[1]}
    everything = {f.path.resolve() for f in real_frames()}
    held = {f.path.resolve() for f in real_frames(hold_validation=True)}
    assert validation <= everything
    assert held == everything - validation


@needs_real
def test_export_validation_writes_the_validation_photos(tmp_path: Path) -> None:
    folders = export_holdout(tmp_path, ["byler_d6"], validation=True)
    names = sorted(p.name for p in (folders[0] / "images").iterdir())
    assert names == sorted(im.path.name for im in validation_split("byler_d6")[1])
