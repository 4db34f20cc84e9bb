"""Judging a candidate network: sets are assembled and made ready as shipping would, and measured alike."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from farklecam.datasets.real import real_data_root
from farklecam.datasets.synthetic.__main__ import main as generate
from farklecam.models.thresholds.calibrate import write_logit_bias
from farklecam.models.thresholds.candidate import ModelSet, format_side_by_side, judge, main
from farklecam.models.training.detector import add_metadata
from farklecam.vision.faces.classifier import COCKED_NAME, FaceClassifier
from farklecam.vision.onnx_runtime import load_onnx
from farklecam.vision.pose.cocked import CockedTest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"  # generated scenes with sidecars: tray corners and each die's lean


@pytest.mark.parametrize(
    ("swap", "message"),
    [("model.onnx", "must be named one of die_detector.onnx"), ("nowhere/cocked_test.onnx", "no such file")],
)
def test_a_bad_swap_is_one_clear_line(swap: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([swap, "--calib", str(EXAMPLES), "--validation"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_missing_calibration_folder_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([str(ROOT / "models" / "cocked_test.onnx"), "--calib", "no/such/scenes", "--validation"])
    assert exit_info.value.code == 2
    assert "not a folder: no/such/scenes" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not real_data_root().is_dir(), reason="the gate counts false calls on the real validation photos")
def test_sets_are_made_ready_as_shipping_would_and_measured_alike(tmp_path: Path) -> None:
    swaps = {}
    for name in ("die_detector.onnx", "cocked_test.onnx"):
        (tmp_path / name[:3]).mkdir()
        swaps[name] = shutil.copy(ROOT / "models" / name, tmp_path / name[:3] / name)
    add_metadata(Path(swaps["cocked_test.onnx"]), {"farklecam_note": "a retrained file"})  # differs from shipped
    work, scenes = tmp_path / "work", tmp_path / "scenes"
    assert generate(["--out", str(scenes), "--count", "6", "--seed", "3", "--size", "320x240", "--lean-rate", "1"]) == 0

    def judged(models: ModelSet) -> dict[str, Any]:
        return judge(models, work, [scenes], [EXAMPLES], gate_classifier=None)

    baseline = judged(ModelSet("baseline"))
    same_detector = judged(ModelSet("detector", (Path(swaps["die_detector.onnx"]),)))
    for report in (baseline, same_detector):  # everything but the time a read took
        for part in (report["calibration"], *report["calibration"]["folders"].values()):
            part.pop("median_ms")
    # Swapping a file for an identical one changes nothing, and needs no refitting.
    assert same_detector["calibration"] == baseline["calibration"]
    assert "fusion" not in same_detector and "cocked_threshold" not in same_detector
    # A different detector (here: the same network, its file changed) gets the fusion refitted for it.
    add_metadata(Path(swaps["die_detector.onnx"]), {"farklecam_note": "changed"})
    other_detector = judged(ModelSet("detector2", (Path(swaps["die_detector.onnx"]),)))
    assert "fusion" in other_detector and "cocked_threshold" not in other_detector
    assert CockedTest(work / "detector2" / "cocked_test.onnx").fusion is not None
    assert [row["call"] for row in baseline["gate"]] == ["test", "fused"]

    # A swapped cocked test gets its own threshold, and the fusion is refitted for the pair.
    # Its gate runs with a stand-in classifier (here the shipped one, offset taken off), given the set's offset.
    (tmp_path / "gate").mkdir()
    stand_in = Path(shutil.copy(ROOT / "models" / "face_classifier.onnx", tmp_path / "gate" / "face_classifier.onnx"))
    write_logit_bias(stand_in, [0.0] * len(FaceClassifier(stand_in).names))
    retested = judge(ModelSet("cocked", (Path(swaps["cocked_test.onnx"]),)), work, [scenes], [EXAMPLES], stand_in)
    shipped_bias = FaceClassifier(ROOT / "models" / "face_classifier.onnx").logit_bias.tolist()
    assert FaceClassifier(work / "cocked_gate" / "face_classifier.onnx").logit_bias.tolist() == shipped_bias
    test = CockedTest(work / "cocked" / "cocked_test.onnx")
    assert test.threshold == retested["cocked_threshold"]["threshold"]
    shipped_sha = load_onnx(ROOT / "models" / "face_classifier.onnx").metadata["train_config_sha"]
    assert test.fusion is not None and test.fusion.classifier_sha == shipped_sha
    assert all(row["real_dice"] > 0 for row in retested["gate"])
    table = format_side_by_side(baseline, retested)
    assert "calib cocked F1" in table and "gate fused false calls" in table

    # A swapped classifier gets its cocked offset chosen, and the gate's classifier is given the same.
    (tmp_path / "cls").mkdir()
    classifier = Path(shutil.copy(ROOT / "models" / "face_classifier.onnx", tmp_path / "cls" / "face_classifier.onnx"))
    add_metadata(classifier, {"farklecam_note": "a retrained file"})
    reclassified = judge(ModelSet("classifier", (classifier,)), work, [scenes], [], gate_classifier=classifier)
    offset = reclassified["cocked_offset"]["value"]
    assert offset in [row["cocked_bias"] for row in reclassified["cocked_offset"]["grid"]]
    cocked_index = FaceClassifier(classifier).names.index(COCKED_NAME)
    for folder in ("classifier", "classifier_gate"):
        bias = load_onnx(work / folder / "face_classifier.onnx").metadata["logit_bias"]
        assert bias[cocked_index] == offset and sum(map(abs, bias)) == abs(offset)
    assert "validation" not in reclassified


def table_rows(table: str) -> dict[str, list[str]]:
    """The side-by-side table's rows by label: label -> [baseline, candidate]."""
    return {line[:34].strip(): line[34:].split() for line in table.splitlines()[1:]}


def test_the_table_shows_a_gate_only_one_side_has_as_missing_on_the_other() -> None:
    calib = {"face_accuracy": 0.96, "exact_accuracy": 0.87, "cocked_recall": 0.8, "cocked_precision": 0.8}
    gate = {"real_false_calls": 1, "scene_recall": 0.6, "scene_precision": 0.9}
    both = {"calibration": {**calib, "cocked_f1": 0.8}, "gate": [{"call": "test", **gate}, {"call": "fused", **gate}]}
    test_only = {"calibration": {**calib, "cocked_f1": None}, "gate": [{"call": "test", **gate}]}
    rows = table_rows(format_side_by_side(both, test_only))
    assert rows["calib cocked F1"] == ["0.8000", "-"]
    assert rows["gate fused false calls"] == ["1", "-"] and rows["gate test false calls"] == ["1", "1"]
    assert "val face acc" not in rows  # neither side read validation photos


def test_several_calibration_folders_are_also_reported_each_and_their_cocked_f1_averaged(tmp_path: Path) -> None:
    """A mostly flat set and a leaning-rich one weigh alike in the mean, whatever their sizes."""
    lean = tmp_path / "lean"
    assert generate(["--out", str(lean), "--count", "4", "--seed", "5", "--size", "320x240", "--lean-rate", "1"]) == 0
    report = judge(ModelSet("baseline"), tmp_path / "work", [EXAMPLES, lean], [], gate_classifier=None, gate=False)
    calib = report["calibration"]
    each = calib["folders"]
    assert list(each) == ["examples", "lean"]
    assert sum(f["dice"] for f in each.values()) == calib["dice"]
    assert sum(f["wrong_as_ok"] for f in each.values()) == calib["wrong_as_ok"]
    f1s = [each["examples"]["cocked_f1"], each["lean"]["cocked_f1"]]  # both hold leaning dice the reader finds
    assert None not in f1s and calib["mean_cocked_f1"] == pytest.approx(sum(f1s) / 2)
    rows = table_rows(format_side_by_side(report, report))
    assert rows["calib lean wrong as ok"] == [str(each["lean"]["wrong_as_ok"])] * 2
    assert "calib mean cocked F1" in rows and "calib examples cocked F1" in rows


def test_a_reader_setting_is_judged_on_the_candidates_reader_alone(tmp_path: Path) -> None:
    """``--set`` changes the candidate's ReaderConfig; the baseline reads as shipped, and no gate is asked for."""
    from farklecam.vision.reader import ReaderConfig

    def judged(models: ModelSet) -> dict[str, Any]:
        return judge(models, tmp_path / "work", [EXAMPLES], [], gate_classifier=None, gate=False)

    baseline = judged(ModelSet("baseline"))
    unsure = judged(ModelSet("unsure", config=ReaderConfig(face_min_conf=1.0)))  # no face is ever sure enough
    assert baseline["config"] == {} and unsure["config"] == {"face_min_conf": 1.0}
    assert unsure["calibration"]["uncertain_rate"] > baseline["calibration"]["uncertain_rate"] + 0.5
    assert unsure["calibration"]["recall"] == baseline["calibration"]["recall"]  # the same dice found
    assert baseline["gate"] == unsure["gate"] == [] and "gate" not in format_side_by_side(baseline, unsure)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "name model files to swap in, or a reader setting to change with --set"),
        (["--set", "no_such_field=1"], "'no_such_field' is no ReaderConfig field"),
        (["--set", "face_views=3"], "face_views must be 1, 2, 4 or 8"),
    ],
)
def test_a_bad_setting_is_one_clear_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--calib", str(EXAMPLES), "--validation"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
