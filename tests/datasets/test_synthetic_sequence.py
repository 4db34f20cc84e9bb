"""Throw sequences: phases in order, deterministic, dice labelled once they rest, glare flagged."""

from __future__ import annotations

import itertools
from typing import Any

import cv2
import numpy as np
import pytest

from datasets.synthetic import render_throw_sequence
from datasets.synthetic.sequence import ThrowTruth, render_game_video, unseen_look

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
