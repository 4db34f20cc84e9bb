"""Throw sequences: phases in order, deterministic, dice labelled once they rest, glare flagged."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from datasets.synthetic import render_throw_sequence

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
