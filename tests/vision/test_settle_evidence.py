"""The settle vote by evidence: reads' likelihoods summed per die over the settled frames (property tests)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.settle.detector import (
    OTHER,
    OUTCOMES,
    AmbiguityReason,
    SettleConfig,
    face_posterior,
    read_likelihood,
    vote,
)

CONFIG = SettleConfig()
faces = st.integers(1, 6)
confidences = st.floats(0.0625, 0.984375, width=32)  # as a Reading stores them
reads_of_a_die = st.lists(st.tuples(faces, confidences), min_size=1, max_size=16)


def _reads(pairs: list[tuple[int, float]], status: str = "uncertain", **data: bool) -> list[Reading]:
    """One die read once per pair ``(face, confidence)``, with the status and flags given."""
    return [
        Reading(
            xyxy=np.array([[10.0, 10.0, 40.0, 40.0]], np.float32), confidence=np.array([0.9], np.float32),
            face=np.array([f]), face_confidence=np.array([c], np.float32), status=np.array([status]),
            data={k: np.asarray([v]) for k, v in data.items()},
        )
        for f, c in pairs
    ]  # fmt: skip


def unanimous_bar(min_posterior: float, reads: int, evidence_reads: int) -> float:
    """The confidence each of ``reads`` reads naming one face needs for the posterior to reach ``min_posterior``.

    With ``k = min(reads, evidence_reads)`` and ``r = (1 - c) / (6 c)`` the face's posterior is ``1 / (1 + 6 r**k)``.
    """
    k = min(reads, evidence_reads)
    r = ((1.0 - min_posterior) / (min_posterior * (OUTCOMES - 1))) ** (1.0 / k)
    return float(1.0 / (1.0 + (OUTCOMES - 1) * r))


def _vote(reads: list[Reading]) -> tuple[int, str, str]:
    voted = vote(reads, [[0] * len(reads)], CONFIG)
    return int(voted.face[0]), str(voted.status[0]), str(voted.data["ambiguity"][0])


# ---------------------------------------------------------------------------- the posterior
@given(faces, confidences)
def test_a_read_names_its_face_and_spreads_the_rest(face: int, confidence: float) -> None:
    like = read_likelihood(face, confidence)
    assert like.shape == (OUTCOMES,) and like.sum() == pytest.approx(1.0)
    assert like[face - 1] == pytest.approx(confidence)
    assert np.ptp(np.delete(like, face - 1)) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(reads_of_a_die, st.randoms(use_true_random=False), st.integers(1, 8))
def test_the_posterior_is_a_distribution_whatever_the_order_of_the_reads(
    pairs: list[tuple[int, float]], rng: object, evidence_reads: int
) -> None:
    post = face_posterior(pairs, evidence_reads)
    shuffled = list(pairs)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert post.sum() == pytest.approx(1.0) and (post >= 0).all()
    np.testing.assert_allclose(face_posterior(shuffled, evidence_reads), post, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(faces, confidences, st.integers(1, 20), st.integers(1, 8), st.floats(0.5, 0.99))
def test_reads_naming_one_face_reach_the_bar_exactly_above_the_closed_form(
    face: int, confidence: float, n: int, evidence_reads: int, bar: float
) -> None:
    post = face_posterior([(face, confidence)] * n, evidence_reads)
    cut = unanimous_bar(bar, n, evidence_reads)
    if abs(confidence - cut) > 1e-6:
        assert (post[face - 1] >= bar) == (confidence > cut)


@settings(max_examples=100, deadline=None)
@given(faces, st.floats(1 / 7 + 0.01, 0.99), st.integers(1, 19))
def test_more_frames_agreeing_never_make_a_die_less_sure(face: int, confidence: float, n: int) -> None:
    sure = [face_posterior([(face, confidence)] * k, CONFIG.evidence_reads)[face - 1] for k in (n, n + 1)]
    assert sure[1] >= sure[0] - 1e-12


@settings(max_examples=100, deadline=None)
@given(reads_of_a_die)
def test_beyond_evidence_reads_only_the_mix_of_reads_counts_not_their_number(pairs: list[tuple[int, float]]) -> None:
    if len(pairs) < CONFIG.evidence_reads:
        pairs = pairs * CONFIG.evidence_reads
    np.testing.assert_allclose(
        face_posterior(pairs * 3, CONFIG.evidence_reads), face_posterior(pairs, CONFIG.evidence_reads), atol=1e-9
    )


def test_several_frames_at_045_outweigh_one_at_055() -> None:
    assert _vote(_reads([(4, 0.45)] * 6))[:2] == (4, "ok")
    assert _vote(_reads([(4, 0.55)]))[:2] == (4, "uncertain")


# ---------------------------------------------------------------------------- the vote
@settings(max_examples=300, deadline=None)
@given(reads_of_a_die, st.sampled_from(["ok", "uncertain"]))
def test_a_scored_face_is_one_most_reads_named_and_the_window_is_sure_of(
    pairs: list[tuple[int, float]], status: str
) -> None:
    face, voted, why = _vote(_reads(pairs, status))
    named = [c for f, c in pairs if f == face]
    post = face_posterior(pairs, CONFIG.evidence_reads)
    if voted == "ok":
        assert sum(named) >= CONFIG.min_agreement * sum(c for _, c in pairs) - 1e-9
        assert post[face - 1] >= CONFIG.min_posterior and why == ""
    else:
        assert voted == "uncertain" and why in {AmbiguityReason.DISAGREEING_READS, AmbiguityReason.LOW_CONFIDENCE}
    assert face == int(np.argmax(post[:OTHER])) + 1  # the hint a player confirms is the likeliest face


@settings(max_examples=200, deadline=None)
@given(reads_of_a_die, st.permutations(range(1, 7)))
def test_the_vote_does_not_care_what_the_faces_are_called(pairs: list[tuple[int, float]], names: list[int]) -> None:
    post = face_posterior(pairs, CONFIG.evidence_reads)[:OTHER]
    if np.sort(post)[-1] - np.sort(post)[-2] < 1e-9:
        return  # a tie: which face is the hint is arbitrary
    face, status, why = _vote(_reads(pairs))
    renamed = _vote(_reads([(names[f - 1], c) for f, c in pairs]))
    assert renamed == (names[face - 1], status, why)


@settings(max_examples=100, deadline=None)
@given(reads_of_a_die, st.sampled_from(["symbol", "cocked"]))
def test_no_number_of_doubted_frames_reads_a_die(pairs: list[tuple[int, float]], flag: str) -> None:
    _, status, why = _vote(_reads(pairs, "uncertain", **{flag: True}))
    assert status == DieStatus.UNCERTAIN and why == AmbiguityReason.UNREAD


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 12), st.integers(0, 12), faces)
def test_a_die_mostly_read_off_the_tray_is_off_whatever_its_faces(off: int, flat: int, face: int) -> None:
    pairs = [(face, 0.9)] * flat
    reads = _reads([(face, 0.2)] * off, "off_tray") + _reads(pairs, "ok")
    _, status, why = _vote(reads)
    if off >= CONFIG.min_agreement * (off + flat):
        assert (status, why) == (DieStatus.OFF_TRAY, "")
    elif flat >= CONFIG.min_agreement * (off + flat):
        assert status == DieStatus.OK
    else:
        assert (status, why) == (DieStatus.UNCERTAIN, AmbiguityReason.DISAGREEING_READS)
