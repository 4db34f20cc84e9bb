"""Throw sequences: phases in order, deterministic, dice labelled once they rest, glare flagged."""

from __future__ import annotations

import itertools
from typing import Any

import cv2
import numpy as np
import pytest

from farklecam.datasets.synthetic import render_throw_sequence, sequence
from farklecam.datasets.synthetic.postprocess import webcam
from farklecam.datasets.synthetic.sequence import ThrowTruth, render_game_video, unseen_look

KW: dict[str, Any] = {"width": 96, "height": 72, "fps": 8.0, "settled_seconds": 0.5}


@pytest.fixture(scope="module")
def frames() -> list[tuple[np.ndarray, dict[str, Any]]]:
    return list(render_throw_sequence(5, **KW))


def test_phases_run_in_order(frames: list[tuple[np.ndarray, dict[str, Any]]]) -> None:
    phases = [s["phase"] for _, s in frames]
    assert phases[0] == "empty" and phases[-1] == "empty"
    order = {"empty": 0, "moving": 1, "settled": 2, "hand": 3}
    firsts = [phases.index(p) for p in ("moving", "settled", "hand")]
    assert firsts == sorted(firsts) and all(p in order for p in phases)
    assert [s["frame"] for _, s in frames] == list(range(len(frames)))


def test_dice_are_labelled_when_settled_and_gone_at_the_end(frames: list[tuple[np.ndarray, dict[str, Any]]]) -> None:
    settled = [s for _, s in frames if s["phase"] == "settled"]
    assert all(s["dice"] for s in settled) or all(s["hidden_dice"] for s in settled)
    assert not frames[-1][1]["dice"] and not frames[0][1]["dice"]


def test_one_glare_frame_is_flagged_and_brighter(frames: list[tuple[np.ndarray, dict[str, Any]]]) -> None:
    bad = [i for i, (_, s) in enumerate(frames) if s["bad"] == "glare"]
    assert len(bad) == 1
    i = bad[0]
    neighbour = frames[i - 1 if frames[i - 1][1]["phase"] == "settled" else i + 1][0]
    assert frames[i][0].mean() > neighbour.mean() + 5


def test_same_seed_same_clip(frames: list[tuple[np.ndarray, dict[str, Any]]]) -> None:
    # The first frames cover the empty tray, the throw and the landing; enough to show the draws repeat.
    again = list(itertools.islice(render_throw_sequence(5, **KW), 12))
    assert [s for _, s in again] == [s for _, s in frames[:12]]
    assert all(np.array_equal(a, b) for (a, _), (b, _) in zip(again, frames, strict=False))


# ---------------------------------------------------------------------------- game videos
GAME_KW: dict[str, Any] = {"throws": 2, "width": 96, "height": 72, "fps": 6.0}


@pytest.fixture(scope="module")
def game() -> tuple[list[tuple[np.ndarray, dict[str, Any]]], list[ThrowTruth]]:
    truths: list[ThrowTruth] = []
    return list(render_game_video(3, truths=truths, **GAME_KW)), truths


def test_a_game_video_has_one_truth_per_throw_at_its_first_frame_at_rest(
    game: tuple[list[tuple[np.ndarray, dict[str, Any]]], list[ThrowTruth]],
) -> None:
    frames, truths = game
    assert [t.throw for t in truths] == [0, 1]
    for truth in truths:
        sidecar = frames[truth.rest_frame][1]
        assert (sidecar["phase"], sidecar["throw"]) == ("settled", truth.throw)
        assert frames[truth.rest_frame - 1][1]["phase"] in ("moving", "empty")
        assert len(truth.faces) + truth.rethrow == truth.dice == len(sidecar["dice"])


def test_lifted_dice_leave_the_others_where_they_were(
    game: tuple[list[tuple[np.ndarray, dict[str, Any]]], list[ThrowTruth]],
) -> None:
    frames, truths = game
    phases = [(s["phase"], s["throw"]) for _, s in frames]
    assert ("lift", 0) in phases  # the first throw is never the last: some dice are set aside
    before = frames[phases.index(("lift", 0)) - 1][1]["dice"]
    after = frames[max(i for i, p in enumerate(phases) if p == ("lift", 0)) + 1][1]
    assert after["phase"] == "settled" and 0 < len(after["dice"]) < len(before)
    boxes = [d["box"] for d in before]
    assert all(any(np.abs(np.subtract(d["box"], b)).max() < 1.0 for b in boxes) for d in after["dice"])
    assert truths[1].dice == len(after["dice"])  # the dice left are thrown next


def test_the_unseen_look_changes_colours_beyond_the_training_range() -> None:
    rgb = np.full((48, 64, 3), (60, 140, 90), np.uint8)  # green felt
    looked = unseen_look(np.random.default_rng(1))(rgb)
    assert looked.shape == rgb.shape and looked.dtype == np.uint8
    hue = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)[..., 0].astype(int)
    turned = cv2.cvtColor(looked, cv2.COLOR_RGB2HSV)[..., 0].astype(int)
    assert abs(int(np.median(turned)) - int(np.median(hue))) >= 10  # 20 degrees or more


def test_a_game_truth_labels_each_die_at_rest_and_never_more_than_six(
    game: tuple[list[tuple[np.ndarray, dict[str, Any]]], list[ThrowTruth]],
) -> None:
    frames, truths = game
    for truth in truths:
        dice = frames[truth.rest_frame][1]["dice"]
        assert [t["box"] for t in truth.labels] == [d["box"] for d in dice]
        assert [(t["face"], t["status"]) for t in truth.labels] == [(d["face"], d["status"]) for d in dice]
        assert 1 <= truth.dice <= 6
        assert truth.to_dict()["labels"] == list(truth.labels)


def test_only_what_moves_is_smeared() -> None:
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, (40, 60, 3)).astype(np.uint8)
    mask = np.zeros((40, 60), bool)
    mask[15:25, 20:30] = True
    assert np.array_equal(sequence._smear(rgb, mask, np.array([0.4, 0.2])), rgb)  # at rest: untouched
    smeared = sequence._smear(rgb, mask, np.array([8.0, 0.0]))
    changed = np.any(smeared != rgb, axis=2)
    rows, cols = np.nonzero(changed)
    assert changed[15:25, 20:30].mean() > 0.9  # the body itself is blurred
    assert rows.min() >= 14 and rows.max() <= 25  # along its path (horizontal) and nowhere else
    assert cols.min() >= 14 and cols.max() <= 35
    assert smeared[15:25, 20:30].std() < rgb[15:25, 20:30].std()


def test_the_webcam_is_in_focus_and_the_same_for_every_frame() -> None:
    rgb = np.random.default_rng(1).integers(0, 255, (30, 40, 3)).astype(np.uint8)
    seen = [webcam(np.random.default_rng(s), rgb)[1] for s in range(50)]
    assert all(0.3 <= p["blur_sigma"] <= 0.7 and "rescale" not in p and "motion_blur" not in p for p in seen)
    a, _ = webcam(np.random.default_rng(7), rgb, noise_rng=np.random.default_rng(1))
    b, _ = webcam(np.random.default_rng(7), rgb, noise_rng=np.random.default_rng(2))
    assert not np.array_equal(a, b) and np.abs(a.astype(int) - b.astype(int)).mean() < 6  # only the grain differs


def test_game_dice_are_one_set_mostly_opaque() -> None:
    kinds = [sequence._game_style(np.random.default_rng(s)).kind for s in range(300)]
    see_through = sum(k in ("clear", "translucent") for k in kinds) / len(kinds)
    assert 0.1 < see_through < 0.3


def test_a_game_video_says_its_dice_and_stream_quality() -> None:
    meta: dict[str, Any] = {}
    next(iter(render_game_video(3, meta=meta, unseen=True, **GAME_KW)))
    low, high = sequence.JPEG_QUALITY[True]
    assert len(meta["dice_styles"]) == 1 and low <= meta["jpeg_quality"] < high
