"""Fitting the fusion of the cocked test with the face classifier: the regression, the threshold, the command."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.models.thresholds.cocked_fusion import FusionRows, fit_fusion, fit_logistic
from farklecam.vision.pose.cocked import CockedTest, logit

ROOT = Path(__file__).resolve().parents[2]
GRID = set(np.round(np.arange(0.05, 0.96, 0.05), 2).tolist())


@settings(max_examples=8, deadline=None)
@given(st.floats(-2.0, 2.0), st.floats(-2.0, 2.0), st.floats(-1.0, 1.0), st.integers(0, 2**16))
def test_newton_recovers_the_weights_that_made_the_data(a: float, b: float, c: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.normal(size=20000), rng.normal(size=20000), np.ones(20000)])
    y = (rng.random(20000) < 1.0 / (1.0 + np.exp(-(x @ [a, b, c])))).astype(np.float64)
    np.testing.assert_allclose(fit_logistic(x, y), [a, b, c], atol=0.12)


def _rows(seed: int, n: int = 4000, leaning: float = 0.05) -> FusionRows:
    """Dice whose leaning shows, noisily, in both networks' probabilities; ``leaning`` of them lean."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < leaning).astype(np.int64)
    sig = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
    test = sig(3.0 * truth - 1.5 + rng.normal(size=n)).astype(np.float32)
    classifier = sig(2.0 * truth - 1.0 + rng.normal(size=n)).astype(np.float32)
    truth[:20] = -1  # a few false alarms: no die
    return FusionRows(test, classifier, truth)


def _f1(called: np.ndarray, leaning: np.ndarray) -> float:
    tp = float((called & leaning).sum())
    recall, precision = tp / max(1.0, leaning.sum()), tp / max(1.0, called.sum())
    return 2 * recall * precision / max(1e-9, recall + precision)


def test_the_fusion_weighs_both_networks_and_never_calls_a_die_held_flat() -> None:
    rows = _rows(0)
    fusion, scores = fit_fusion(rows, "sha-of-the-classifier")
    assert fusion.test_weight > 0 and fusion.classifier_weight > 0 and fusion.classifier_sha == "sha-of-the-classifier"
    assert fusion.threshold in GRID
    called = fusion(rows.test, rows.classifier) >= fusion.threshold
    tp = float((called & (rows.truth == 1)).sum())
    assert scores["recall"] == pytest.approx(tp / (rows.truth == 1).sum())
    assert scores["precision"] == pytest.approx(tp / called.sum())
    # Two noisy views of the truth beat the better one alone at its best threshold.
    alone = max(_f1(rows.test >= t, rows.truth == 1) for t in GRID)
    assert scores["f1"] > alone


def test_logit_is_finite_at_the_ends() -> None:
    assert np.isfinite(logit([0.0, 1.0])).all() and logit(0.5) == pytest.approx(0.0)


def _model_copy(tmp_path: Path) -> Path:
    """A copy of the committed models the command may rewrite."""
    models = tmp_path / "models"
    models.mkdir()
    for name in ("die_detector.onnx", "face_classifier.onnx", "cocked_test.onnx"):
        shutil.copy(ROOT / "models" / name, models / name)
    return models


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="needs the committed models")
def test_the_command_fits_and_stores_a_fusion_naming_the_classifier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from farklecam.models.thresholds.cocked_fusion import main
    from farklecam.vision.onnx_runtime import load_onnx

    models = _model_copy(tmp_path)
    assert main([str(ROOT / "examples"), "--models", str(models), "--write"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["leaning"] >= 1 and report["dice"] >= report["leaning"]
    fusion = CockedTest(models / "cocked_test.onnx").fusion
    assert fusion is not None and fusion.threshold == report["fused"]["threshold"]
    assert fusion.classifier_sha == load_onnx(models / "face_classifier.onnx").metadata["train_config_sha"]


def test_rows_from_several_folders_choose_the_threshold_by_the_mean_of_their_f1() -> None:
    """A mostly flat folder and a leaning-rich one weigh alike, however many leaning dice each holds."""
    flat, rich = _rows(1), _rows(2, leaning=0.3)
    both = FusionRows(
        np.concatenate([flat.test, rich.test]),
        np.concatenate([flat.classifier, rich.classifier]),
        np.concatenate([flat.truth, rich.truth]),
        folder=np.repeat([0, 1], [len(flat.truth), len(rich.truth)]),
    )
    fusion, scores = fit_fusion(both, "sha")
    fused = fusion(both.test, both.classifier)

    def mean_f1(t: float) -> float:
        return float(np.mean([_f1(fused[both.folder == g] >= t, both.truth[both.folder == g] == 1) for g in (0, 1)]))

    assert fusion.threshold in GRID
    assert scores["mean_f1"] == pytest.approx(mean_f1(fusion.threshold))
    assert all(mean_f1(fusion.threshold) >= mean_f1(t) - 1e-9 for t in GRID)
    pooled, pooled_scores = fit_fusion(dataclasses.replace(both, folder=None), "sha")  # the pooled F1's threshold
    assert pooled.test_weight == fusion.test_weight and "mean_f1" not in pooled_scores


def _rows_with_evidence(seed: int, n: int = 6000) -> FusionRows:
    """Rows where a flat die hidden behind a nearer one fools both networks: ``covered`` tells them apart."""
    from farklecam.vision.pose.cocked import CockedEvidence

    rows = _rows(seed, n, leaning=0.1)
    rng = np.random.default_rng(seed + 100)
    hidden = (rows.truth == 0) & (rng.random(n) < 0.1)
    test = np.where(hidden, rng.uniform(0.7, 0.99, n), rows.test).astype(np.float32)
    classifier = np.where(hidden, rng.uniform(0.5, 0.9, n), rows.classifier).astype(np.float32)
    covered = np.where(hidden, rng.uniform(0.3, 0.6, n), rng.uniform(0.0, 0.1, n)).astype(np.float32)
    evidence = CockedEvidence(
        face_prob=rng.uniform(0.2, 1.0, n).astype(np.float32),
        covered=covered,
        view_sine=rng.uniform(0.0, 0.7, n).astype(np.float32),
    )
    return dataclasses.replace(rows, test=test, classifier=classifier, evidence=evidence, scene=np.arange(n) // 4)


def test_a_term_that_tells_the_dice_apart_gets_its_weight_and_calls_better_out_of_fold() -> None:
    from farklecam.models.thresholds.cocked_fusion import out_of_fold
    from farklecam.vision.pose.cocked import FUSION_TERMS

    rows = _rows_with_evidence(3)
    fusion, scores = fit_fusion(rows, "sha", FUSION_TERMS)
    weights = dict(fusion.terms)
    assert list(weights) == list(FUSION_TERMS) and weights["covered"] < 0  # covered: the flat dice that fool them
    two, _ = fit_fusion(rows, "sha")
    assert two.terms == () and scores["f1"] > _f1(two(rows.test, rows.classifier) >= two.threshold, rows.truth == 1)
    assert out_of_fold(rows, FUSION_TERMS)["f1"] > out_of_fold(rows)["f1"]
    with pytest.raises(ValueError, match="evidence"):
        fit_fusion(dataclasses.replace(rows, evidence=None), "sha", ["covered"])
    with pytest.raises(ValueError, match="which scene"):
        out_of_fold(dataclasses.replace(rows, scene=None))


@pytest.mark.skipif(not (ROOT / "models" / "cocked_test.onnx").exists(), reason="needs the committed models")
def test_the_command_weighs_the_terms_asked_and_a_refit_keeps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from farklecam.models.thresholds.cocked_fusion import main

    models = _model_copy(tmp_path)
    assert main([str(ROOT / "examples"), "--models", str(models), "--terms", "covered,view_sine", "--write"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["fused"]["terms"]) == {"covered", "view_sine"} and "out_of_fold_two_logits" in report
    fusion = CockedTest(models / "cocked_test.onnx").fusion
    assert fusion is not None and [n for n, _ in fusion.terms] == ["covered", "view_sine"]
    assert main([str(ROOT / "examples"), "--models", str(models)]) == 0  # no --terms: the present fusion's
    assert set(json.loads(capsys.readouterr().out)["fused"]["terms"]) == {"covered", "view_sine"}
    with pytest.raises(SystemExit):
        main([str(ROOT / "examples"), "--models", str(models), "--terms", "colour"])
    assert "unknown --terms" in capsys.readouterr().err
