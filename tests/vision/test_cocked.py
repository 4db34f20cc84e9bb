"""The cocked test: crops turned so the nadir is below, the view's steepness as a fourth plane, the model contract."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.errors import ModelLoadError
from farklecam.vision.crops import extract_crops
from farklecam.vision.pose.cocked import (
    FUSION_TERMS,
    CockedEvidence,
    CockedFusion,
    CockedTest,
    foreshortening,
    upright_inputs,
)
from farklecam.vision.pose.upright import UprightView, upright_angles
from tests.vision.fakes import make_cocked_test

CENTRE = np.array([320.0, 240.0])


def view_with_nadir(x: float, y: float, focal: float = 500.0) -> UprightView:
    return UprightView(nadir=np.array([x, y]), focal=focal, principal=CENTRE.copy())


def marked_frame() -> np.ndarray:
    """Grey frame with a die-sized box at (300..340, 220..260) and a white mark just right of its centre."""
    frame = np.full((480, 640, 3), 90, np.uint8)
    frame[236:244, 330:338] = 255
    return frame


@pytest.mark.parametrize(
    ("nadir", "where"), [((2000.0, 240.0), "bottom"), ((-2000.0, 240.0), "top"), ((320.0, 3000.0), "right")]
)
def test_crops_are_turned_so_the_nadir_lies_below(nadir: tuple[float, float], where: str) -> None:
    box = np.array([[300.0, 220.0, 340.0, 260.0]])
    angle = upright_angles(view_with_nadir(*nadir), [[320.0, 240.0]])
    crop = extract_crops(marked_frame(), box, 64, 0.15, angle)[0].mean(axis=2)
    ys, xs = np.nonzero(crop > 200)
    cy, cx = ys.mean() - 31.5, xs.mean() - 31.5
    # The mark sits right of the centre; after the turn it lies on the side named.
    assert {"bottom": cy > 8 and abs(cx) < 4, "top": cy < -8 and abs(cx) < 4, "right": cx > 8 and abs(cy) < 4}[where]


def test_unturned_crops_are_unchanged_by_a_zero_angle() -> None:
    box = np.array([[300.0, 220.0, 340.0, 260.0]])
    assert np.array_equal(extract_crops(marked_frame(), box), extract_crops(marked_frame(), box, angles_deg=[0.0]))


def _white_extent(crop: np.ndarray) -> tuple[int, int]:
    ys, xs = np.nonzero(crop.mean(axis=-1) > 128)
    return int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)


def test_a_flat_face_seen_at_sixty_degrees_is_square_again_once_squeezed() -> None:
    # A 32 px square face seen 60 degrees off the vertical, nadir straight below: 32 wide, 16 high.
    frame = np.zeros((480, 640, 3), np.uint8)
    frame[232:248, 304:336] = 255
    box = np.array([[296.0, 216.0, 344.0, 264.0]])
    angle = upright_angles(view_with_nadir(320.0, 3000.0), [[320.0, 240.0]])
    assert abs(float(angle[0])) < 1e-3  # the nadir is already below: no turn
    squeeze = foreshortening([np.sin(np.radians(60.0))])
    assert squeeze[0] == pytest.approx(0.5, abs=1e-6)
    w0, h0 = _white_extent(extract_crops(frame, box, 64, 0.15, angle)[0])
    w1, h1 = _white_extent(extract_crops(frame, box, 64, 0.15, angle, squeeze)[0])
    assert w0 / h0 == pytest.approx(2.0, rel=0.1)
    assert w1 / h1 == pytest.approx(1.0, rel=0.1) and h1 == h0


def test_no_squeeze_and_a_squeeze_of_one_cut_the_same_pixels() -> None:
    box = np.array([[300.0, 220.0, 340.0, 260.0], [100.0, 100.0, 150.0, 150.0]])
    turned = extract_crops(marked_frame(), box, 64, 0.15, [30.0, -75.0])
    assert np.array_equal(turned, extract_crops(marked_frame(), box, 64, 0.15, [30.0, -75.0], [1.0, 1.0]))


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_foreshortening_is_the_cosine_up_to_a_steepest_view(a: float, b: float) -> None:
    fa, fb = foreshortening([a, b])
    for sine, f in ((a, fa), (b, fb)):
        assert 0.3 < f <= 1.0
        if sine <= 0.95:
            assert f * f + sine * sine == pytest.approx(1.0, abs=1e-5)
    if a <= b:
        assert fa >= fb  # the steeper the view, the more a flat face is foreshortened


def test_a_test_that_undoes_foreshortening_reads_squeezed_crops(tmp_path: Path, onnx_available: None) -> None:
    # The fake's cocked logit falls with the crop's mean red: squeezing a red die's crop across
    # shows less of the die and more of the black floor, so only a steep view's call rises.
    frame = np.zeros((480, 640, 3), np.uint8)
    boxes = np.array([[300.0, 220.0, 340.0, 260.0], [560.0, 220.0, 600.0, 260.0]])
    frame[220:260, 300:340, 2] = 255
    frame[220:260, 560:600, 2] = 255
    view = view_with_nadir(320.0, 240.0, focal=300.0)  # the first die straight down, the second ~43 degrees off
    plain = CockedTest(make_cocked_test(tmp_path / "plain.onnx"))
    undoing = CockedTest(make_cocked_test(tmp_path / "undo.onnx", undo_foreshortening="true"))
    assert not plain.undo_foreshortening and undoing.undo_foreshortening
    p, u = plain(frame, boxes, view), undoing(frame, boxes, view)
    assert u[0] == pytest.approx(p[0], abs=1e-6)
    assert u[1] > p[1] + 1e-3


def test_inputs_hold_the_crop_and_the_views_sine() -> None:
    crops = np.zeros((2, 64, 64, 3), np.uint8)
    crops[1] = 255
    x = upright_inputs(crops, [0.25, 0.75])
    assert x.shape == (2, 4, 64, 64) and x.dtype == np.float32
    assert np.allclose(x[0, :3], 0) and np.allclose(x[1, :3], 1)
    assert np.allclose(x[:, 3].mean(axis=(1, 2)), [0.25, 0.75])


def test_a_steep_view_reads_cocked_and_a_square_one_flat(tmp_path: Path, onnx_available: None) -> None:
    test = CockedTest(make_cocked_test(tmp_path / "c.onnx"))
    frame = np.zeros((480, 640, 3), np.uint8)
    boxes = np.array([[300.0, 220.0, 340.0, 260.0], [600.0, 220.0, 640.0, 260.0]])
    # Nadir at the centre, focal 300 px: the first die is seen straight down, the second at 45 degrees.
    probs = test(frame, boxes, view_with_nadir(320.0, 240.0, focal=300.0))
    assert probs.shape == (2,) and probs[0] < 0.5 < probs[1]
    assert test.threshold == 0.5
    # The fake reads red crops as flat: the crop itself reaches the model too.
    frame[..., 2] = 255
    assert test(frame, boxes, view_with_nadir(320.0, 240.0, focal=300.0))[1] < 0.5
    assert test(frame, np.zeros((0, 4)), view_with_nadir(320.0, 240.0)).shape == (0,)


def test_a_five_plane_test_reads_where_the_other_dice_lie(tmp_path: Path, onnx_available: None) -> None:
    # The fake's cocked logit rises with the neighbour plane's mean: a die alone reads as under a
    # four-plane test, the same die beside another reads more cocked, and only through the plane.
    four = CockedTest(make_cocked_test(tmp_path / "four.onnx"))
    five = CockedTest(make_cocked_test(tmp_path / "five.onnx", planes=5, neighbour_weight=40.0))
    assert (four.neighbours, five.neighbours) == (False, True)
    frame = np.zeros((480, 640, 3), np.uint8)
    view = view_with_nadir(320.0, 240.0, focal=300.0)
    alone = np.array([[450.0, 220.0, 490.0, 260.0]])  # seen about 27 degrees off the vertical: undecided
    pair = np.array([[450.0, 220.0, 490.0, 260.0], [492.0, 220.0, 532.0, 260.0]])
    assert five(frame, alone, view)[0] == pytest.approx(four(frame, alone, view)[0], abs=1e-6)
    assert five(frame, pair, view)[0] > five(frame, alone, view)[0] + 0.05
    assert four(frame, pair, view)[0] == pytest.approx(four(frame, alone, view)[0], abs=1e-6)
    # The view search's batches (each die under several views) see the same neighbours.
    centres = (pair[:, :2] + pair[:, 2:]) / 2.0
    angles, sines = upright_angles(view, centres), np.sin(view.view_tilt(centres))
    tiled = five.probabilities(frame, np.tile(pair, (3, 1)), np.tile(angles, 3), np.tile(sines, 3), pair)
    np.testing.assert_allclose(tiled.reshape(3, 2), np.tile(five(frame, pair, view), (3, 1)), atol=1e-6)


def _fusion_json(**changes: object) -> str:
    fusion = {"test_weight": 1.2, "classifier_weight": 0.6, "bias": -1.5, "threshold": 0.35, "classifier_sha": "abc"}
    return json.dumps({**fusion, **changes})


def test_the_fusion_is_read_from_the_metadata(tmp_path: Path, onnx_available: None) -> None:
    test = CockedTest(make_cocked_test(tmp_path / "c.onnx", fusion=_fusion_json()))
    assert test.fusion == CockedFusion(1.2, 0.6, -1.5, 0.35, "abc")
    assert CockedTest(make_cocked_test(tmp_path / "d.onnx")).fusion is None
    assert CockedFusion.from_metadata(json.loads(test.fusion.to_json()), "x") == test.fusion


def test_a_fusion_with_terms_is_read_back_and_needs_the_evidence(tmp_path: Path, onnx_available: None) -> None:
    test = CockedTest(make_cocked_test(tmp_path / "c.onnx", fusion=_fusion_json(terms={"covered": -2.0, "face": -0.5})))
    assert test.fusion is not None and dict(test.fusion.terms) == {"covered": -2.0, "face": -0.5}
    assert CockedFusion.from_metadata(json.loads(test.fusion.to_json()), "x") == test.fusion
    assert "terms" not in json.loads(CockedFusion(1.0, 1.0, 0.0, 0.5, "abc").to_json())
    with pytest.raises(ValueError, match="evidence"):
        test.fusion(0.9, 0.9)


def test_the_evidence_is_what_the_frame_says_of_each_die() -> None:
    boxes = np.array([[300.0, 220.0, 340.0, 260.0], [320.0, 220.0, 360.0, 260.0], [0.0, 0.0, 40.0, 40.0]])
    face_probs = np.array([[0.1, 0.7, 0.1, 0.0, 0.0, 0.0], [0.2] * 6, [0.0, 0.0, 0.0, 0.0, 0.0, 0.95]])
    evidence = CockedEvidence.of(face_probs, boxes, view_with_nadir(320.0, 240.0, focal=300.0))
    np.testing.assert_allclose(evidence.face_prob, [0.7, 0.2, 0.95], rtol=1e-6)
    np.testing.assert_allclose(evidence.covered, [0.5, 0.5, 0.0])  # two dice overlapping by half, one alone
    # The first die's centre (320, 240) lies under the camera; the corner die is seen obliquely.
    assert evidence.view_sine[0] < 0.01 < 0.6 < evidence.view_sine[2] < 1.0
    t = np.zeros(3)
    np.testing.assert_allclose(evidence.term("test_x_view_sine", t + 2.0), 2.0 * evidence.view_sine, rtol=1e-6)
    assert all(evidence.term(name, t).shape == (3,) for name in FUSION_TERMS)
    with pytest.raises(ValueError, match="unknown fusion term"):
        evidence.term("colour", t)
    assert len(evidence[np.array([True, False, True])].covered) == 2


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(-3.0, -0.05))
def test_a_negative_covered_weight_lowers_the_call_the_more_a_die_is_hidden(a: float, b: float, w: float) -> None:
    fusion = CockedFusion(1.0, 1.0, 0.0, 0.5, "abc", terms=(("covered", w),))
    lo, hi = min(a, b), max(a, b)
    one = np.ones(1, np.float32)

    def evidence(covered: float) -> CockedEvidence:
        return CockedEvidence(one * 0.5, one * covered, one * 0.2)

    assert float(fusion(0.8, 0.6, evidence(hi))[0]) <= float(fusion(0.8, 0.6, evidence(lo))[0]) + 1e-6


@settings(max_examples=80, deadline=None)
@given(
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.05, 3.0),
    st.floats(0.05, 3.0),
    st.floats(-5.0, 5.0),
)
def test_the_fused_probability_rises_with_either_network(
    a: float, b: float, c: float, w_test: float, w_cls: float, bias: float
) -> None:
    """With positive weights, more confidence from either network never lowers the fused probability."""
    fusion = CockedFusion(w_test, w_cls, bias, 0.5, "abc")
    lo, hi = min(a, b), max(a, b)
    assert fusion(lo, c) <= fusion(hi, c) + 1e-6 and fusion(c, lo) <= fusion(c, hi) + 1e-6
    p = float(fusion(a, b))
    assert 0.0 <= p <= 1.0 and np.isfinite(p)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"names": ("1", "2")}, "classes"),
        ({"threshold": "1.5"}, "threshold"),
        ({"threshold": "often"}, "threshold"),
        ({"planes": 3}, "planes"),
        ({"fusion": '{"test_weight": 1}'}, "malformed fusion"),
        ({"fusion": "[1, 2, 3]"}, "malformed fusion"),
        ({"fusion": _fusion_json(threshold=1.0)}, "fusion out of range"),
        ({"fusion": _fusion_json(bias=float("nan"))}, "fusion out of range"),
        ({"fusion": _fusion_json(terms={"colour": 1.0})}, "unknown terms"),
        ({"fusion": _fusion_json(terms={"covered": float("inf")})}, "fusion out of range"),
        ({"fusion": _fusion_json(terms=[1, 2])}, "malformed fusion"),
        ({"undo_foreshortening": "sometimes"}, "expected true or false"),
        ({"undo_foreshortening": "1"}, "expected true or false"),
    ],
)
def test_a_model_breaking_the_contract_is_refused(
    tmp_path: Path, onnx_available: None, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ModelLoadError, match=message):
        CockedTest(make_cocked_test(tmp_path / "c.onnx", **kwargs))  # type: ignore[arg-type]
