"""Judge a retrained network against another in one command: ``python -m farklecam.models.thresholds.candidate``.

A recipe ships when it beats the shipped one on data it never trained on (see the
model card), and that judgement keeps asking the same few numbers: the whole reader on the
calibration scenes (face and exact accuracy, cocked recall / precision / F1),
on the real validation photos (dice read right, dice scored wrong as ``ok``),
and the view search's gate (flat validation dice called cocked at the shipped
trust). This measures them for two sets of models side by side. Each set is
the shipped folder with some files swapped, assembled in a working folder and
made ready as shipping would: a swapped classifier gets its cocked logit
offset, a swapped cocked test its own threshold, and the fusion is refitted for
whatever set of detector, classifier and cocked test it holds.

The gate hears the classifier, so it must be judged with one trained without
the validation photos (``python -m farklecam.models.training --hold-validation``):
``--gate-classifier`` names it for both sets where the set's own classifier
saw them.

A reader setting is judged the same way: ``--set FIELD=VALUE`` changes a
:class:`~farklecam.vision.reader.ReaderConfig` field of the candidate's reader (with or
without swapped files), and ``--no-gate`` leaves out the gate, which reads the
cocked test alone and so cannot see most settings.

Example (a candidate cocked test, a candidate classifier against its twin, a reader setting)::

    python -m farklecam.models.thresholds.candidate runs/cocked6/cocked_test.onnx \
        --gate-classifier runs/cls12A_out/face_classifier.onnx
    python -m farklecam.models.thresholds.candidate runs/cls13A_out/face_classifier.onnx \
        --baseline runs/cls12A_out/face_classifier.onnx
    python -m farklecam.models.thresholds.candidate --set face_views=2 --no-gate
"""

from __future__ import annotations

import argparse
import dataclasses
import filecmp
import json
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from farklecam.vision.reader import (
    CLASSIFIER_FILE,
    COCKED_TEST_FILE,
    DETECTOR_FILE,
    ReaderConfig,
    config_override,
    default_model_dir,
)

if TYPE_CHECKING:
    from farklecam.models.evaluate.metrics import FolderStats

__all__ = ["ModelSet", "judge", "main"]

_REPO = Path(__file__).resolve().parents[2]
_MODEL_FILES = (DETECTOR_FILE, CLASSIFIER_FILE, COCKED_TEST_FILE)


@dataclass(frozen=True)
class ModelSet:
    """The shipped models with some files swapped (each swap is named by its file name), read with ``config``."""

    name: str
    swaps: tuple[Path, ...] = ()
    shipped: Path = field(default_factory=default_model_dir)
    config: ReaderConfig = field(default_factory=ReaderConfig)

    def __post_init__(self) -> None:
        for path in self.swaps:
            if path.name not in _MODEL_FILES:
                raise ValueError(f"{path}: a swapped model must be named one of {', '.join(_MODEL_FILES)}")
            if not path.is_file():
                raise ValueError(f"{path}: no such file")

    def swapped(self, name: str) -> bool:
        """Whether this set brings its own ``name`` (one of the three model files), other than the shipped one.

        A swap for a byte-identical copy is no change: it needs no offset, threshold or refitted fusion.
        """
        return any(p.name == name and not filecmp.cmp(p, self.shipped / name, shallow=False) for p in self.swaps)

    def assemble(self, folder: Path, classifier: Path | None = None) -> Path:
        """Copy the set into ``folder`` (``classifier`` overriding its classifier); returns the folder."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in _MODEL_FILES:
            shutil.copyfile(self.shipped / name, folder / name)
        for path in self.swaps:
            shutil.copyfile(path, folder / path.name)
        if classifier is not None:
            shutil.copyfile(classifier, folder / CLASSIFIER_FILE)
        return folder


def _read(folder: Path, dirs: Sequence[Path], sidecar_tray: bool, config: ReaderConfig) -> dict[str, Any]:
    """The whole reader over ``dirs``: metrics plus the dice read right and the dice scored wrong as ``ok``.

    The metrics are over all of ``dirs`` together; ``folders`` holds each folder's own, and
    ``mean_cocked_f1`` the mean of their cocked F1 (None unless each has leaning dice): a
    mostly flat set and a leaning-rich one weigh alike, however many dice each holds.
    """
    from farklecam.models.evaluate.metrics import FolderStats
    from farklecam.models.evaluate.run import evaluate_folder
    from farklecam.vision.reader import DiceReader

    reader, total = DiceReader(folder, config=config), FolderStats()
    folders: dict[str, dict[str, Any]] = {}
    unique = len({d.name for d in dirs}) == len(dirs)
    for d in dirs:
        stats, _problems = evaluate_folder(reader, d, sidecar_tray=sidecar_tray)
        total.merge(stats)
        folders[d.name if unique else str(d)] = _counted(stats)  # by name, unless two folders share one
    metrics = _counted(total)
    metrics["folders"] = folders
    f1s = [m["cocked_f1"] for m in folders.values()]
    metrics["mean_cocked_f1"] = sum(f1s) / len(f1s) if f1s and None not in f1s else None
    return metrics


def _counted(stats: FolderStats) -> dict[str, Any]:
    """A :class:`~vision.evaluate.metrics.FolderStats`'s metrics, cocked F1, dice read right and dice scored wrong."""
    from farklecam.models.evaluate.metrics import f1

    metrics: dict[str, Any] = stats.metrics()
    recall, precision = metrics["cocked_recall"], metrics["cocked_precision"]
    metrics["cocked_f1"] = None if recall is None or precision is None else f1(recall, precision)
    metrics["dice_right"] = stats.face_correct
    metrics["wrong_as_ok"] = stats.ok_matched - stats.ok_correct
    return metrics


def judge(
    models: ModelSet,
    work: Path,
    calib: Sequence[Path],
    validation: Sequence[Path],
    gate_classifier: Path | None,
    *,
    choose_offset: bool = True,
    gate: bool = True,
) -> dict[str, Any]:
    """Make ``models`` ready in ``work`` as shipping would, then measure it; the numbers the rules ask.

    A swapped classifier gets its cocked logit offset chosen (:mod:`farklecam.models.thresholds.calibrate`,
    nine passes over the calibration scenes) unless ``choose_offset`` is False; the
    gate's classifier is given the set's classifier's offset, chosen or shipped. The
    readers use ``models.config``; ``gate=False`` leaves the gate out of the report.
    """
    from farklecam.models.thresholds.calibrate import calibrate, write_logit_bias
    from farklecam.models.thresholds.cocked_fusion import refit, write_fusion
    from farklecam.models.thresholds.view_search import gate_table
    from farklecam.models.training.cocked import choose_threshold, write_threshold
    from farklecam.vision.faces.classifier import COCKED_NAME, FaceClassifier
    from farklecam.vision.pose.view_search import ViewSearchConfig

    folder = models.assemble(work / models.name)
    report: dict[str, Any] = {"models": models.name, "swaps": [str(p) for p in models.swaps]}
    default = ReaderConfig()
    report["config"] = {  # the settings this set reads with that differ from the shipped reader's
        f.name: getattr(models.config, f.name)
        for f in dataclasses.fields(ReaderConfig)
        if getattr(models.config, f.name) != getattr(default, f.name)
    }
    if choose_offset and models.swapped(CLASSIFIER_FILE):
        best, rows = calibrate(folder, calib)
        bias = [best if name == COCKED_NAME else 0.0 for name in FaceClassifier(folder / CLASSIFIER_FILE).names]
        write_logit_bias(folder / CLASSIFIER_FILE, bias)
        report["cocked_offset"] = {"value": best, "grid": rows}
    if models.swapped(COCKED_TEST_FILE):
        report["cocked_threshold"] = choose_threshold(folder / COCKED_TEST_FILE, calib)
        write_threshold(folder / COCKED_TEST_FILE, report["cocked_threshold"]["threshold"])
    if any(models.swapped(name) for name in _MODEL_FILES):  # fitted on the dice the detector finds
        fusion, report["fusion"] = refit(folder, calib)
        write_fusion(folder, fusion)
    report["calibration"] = _read(folder, calib, sidecar_tray=True, config=models.config)
    if validation:
        report["validation"] = _read(folder, validation, sidecar_tray=False, config=models.config)
    if not gate:
        report["gate"] = []
        return report

    gate_folder = folder
    if gate_classifier is not None:
        gate_folder = models.assemble(work / f"{models.name}_gate", classifier=gate_classifier)
        shutil.copyfile(folder / COCKED_TEST_FILE, gate_folder / COCKED_TEST_FILE)  # its threshold
        # The gate's classifier stands in for the set's: it gets the same offset, chosen or shipped.
        write_logit_bias(gate_folder / CLASSIFIER_FILE, FaceClassifier(folder / CLASSIFIER_FILE).logit_bias.tolist())
        fusion, _ = refit(gate_folder, calib)
        write_fusion(gate_folder, fusion)
    cfg = ViewSearchConfig()
    fused_threshold = _fusion_threshold(gate_folder)
    gates = [("test", cfg.max_score, cfg.threshold)]
    if fused_threshold is not None:
        gates.append(("fused", cfg.max_score, fused_threshold))
    report["gate"] = gate_table(gate_folder, calib, "validation", gates)
    return report


def _fusion_threshold(folder: Path) -> float | None:
    """The threshold of the folder's fusion where it was fitted for the folder's classifier, else None."""
    from farklecam.vision.faces.classifier import FaceClassifier
    from farklecam.vision.pose.cocked import CockedTest
    from farklecam.vision.reader import fusion_for

    fusion = fusion_for(CockedTest(folder / COCKED_TEST_FILE), FaceClassifier(folder / CLASSIFIER_FILE))
    return None if fusion is None else fusion.threshold


_ROWS = (
    ("calibration", "recall", "calib det recall"),
    ("calibration", "precision", "calib det precision"),
    ("calibration", "face_accuracy", "calib face acc"),
    ("calibration", "exact_accuracy", "calib exact"),
    ("calibration", "cocked_recall", "calib cocked R"),
    ("calibration", "cocked_precision", "calib cocked P"),
    ("calibration", "cocked_f1", "calib cocked F1"),
    ("validation", "recall", "val det recall"),
    ("validation", "face_accuracy", "val face acc"),
    ("validation", "dice_right", "val dice right"),
    ("validation", "wrong_as_ok", "val wrong as ok"),
)


_GATE_ROWS = (("real_false_calls", "false calls"), ("scene_recall", "scene R"), ("scene_precision", "scene P"))
#: What the table shows of each calibration folder, where there are several.
_FOLDER_ROWS = (("cocked_f1", "cocked F1"), ("wrong_as_ok", "wrong as ok"))
#: The width of the table's label column.
_LABEL = 34


def format_side_by_side(baseline: dict[str, Any], candidate: dict[str, Any]) -> str:
    """A plain table: one row per number the rules ask, baseline then candidate."""

    def cell(value: Any) -> str:
        if value is None:
            return "-"
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    def row(label: str, b: Any, c: Any) -> str:
        return f"{label:{_LABEL}}{cell(b):>12}{cell(c):>12}"

    lines = [row("", "baseline", "candidate")]
    for part, key, label in _ROWS:
        if part in baseline and part in candidate:
            lines.append(row(label, baseline[part].get(key), candidate[part].get(key)))
    calib = [report.get("calibration", {}) for report in (baseline, candidate)]
    names = [*calib[0].get("folders", {})]
    if len(names) > 1:  # each calibration folder's own leaning dice, and their mean
        for name in names:
            for key, label in _FOLDER_ROWS:
                b, c = (part.get("folders", {}).get(name, {}).get(key) for part in calib)
                lines.append(row(f"calib {name} {label}", b, c))
        lines.append(row("calib mean cocked F1", *(part.get("mean_cocked_f1") for part in calib)))
    gates = [{entry["call"]: entry for entry in report["gate"]} for report in (baseline, candidate)]
    for call in dict.fromkeys([*gates[0], *gates[1]]):
        for key, label in _GATE_ROWS:
            b, c = (g[call][key] if call in g else None for g in gates)
            lines.append(row(f"gate {call} {label}", b, c))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: judge the baseline and the candidate; a table, or ``--json``."""
    ap = argparse.ArgumentParser(
        prog="python -m farklecam.models.thresholds.candidate", description=__doc__.splitlines()[0]
    )
    ap.add_argument("candidate", type=Path, nargs="*", help="model files to swap in, named as in models/")
    ap.add_argument("--baseline", type=Path, nargs="*", default=[], help="files the baseline swaps in (default none)")
    ap.add_argument("--calib", type=Path, nargs="+", default=[_REPO / "data" / "calib_synth"])
    ap.add_argument(
        "--validation",
        type=Path,
        nargs="*",
        default=[_REPO / "data" / "val" / "byler_d6", _REPO / "data" / "val" / "matteop65_webcam"],
        help="real validation folders (python -m farklecam.datasets.real export-holdout OUT --validation)",
    )
    ap.add_argument("--gate-classifier", type=Path, help="a classifier trained without the validation photos")
    ap.add_argument(
        "--keep-offset",
        action="store_true",
        help="keep a swapped classifier's own cocked logit offset (faster; shipping chooses one)",
    )
    ap.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a ReaderConfig field of the candidate's reader (repeatable), e.g. face_views=2",
    )
    ap.add_argument("--no-gate", action="store_true", help="leave out the gate (it reads the cocked test alone)")
    ap.add_argument("--work", type=Path, default=_REPO / "runs" / "candidate", help="working folder (replaced)")
    ap.add_argument("--json", action="store_true", help="print both reports as one JSON object")
    args = ap.parse_args(argv)
    missing = [str(d) for d in [*args.calib, *args.validation] if not d.is_dir()]
    if missing:
        ap.error(f"not a folder: {', '.join(missing)}")
    if not args.candidate and not args.overrides:
        ap.error("name model files to swap in, or a reader setting to change with --set")
    try:
        # Any: config_override checks the field names; each value is the literal the user typed.
        changes: dict[str, Any] = dict(config_override(text) for text in args.overrides)
        config = dataclasses.replace(ReaderConfig(), **changes)
        sets = [ModelSet("baseline", tuple(args.baseline)), ModelSet("candidate", tuple(args.candidate), config=config)]
    except (ValueError, TypeError) as exc:
        ap.error(str(exc))
    shutil.rmtree(args.work, ignore_errors=True)
    reports = [
        judge(
            s,
            args.work,
            args.calib,
            args.validation,
            args.gate_classifier,
            choose_offset=not args.keep_offset,
            gate=not args.no_gate,
        )
        for s in sets
    ]
    if args.json:
        print(json.dumps({r["models"]: r for r in reports}, indent=2))  # noqa: T201
    else:
        print(format_side_by_side(*reports))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
