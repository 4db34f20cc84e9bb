"""Reproduce farklecam's models on a CPU: ``python -m farklecam.models.training [options]``.

1. The one-class die detector (:mod:`farklecam.models.training.detector`, ultralytics from a yaml)
   on the real training photos plus generated scenes.
2. The face classifier (:mod:`farklecam.models.training.classifier`) on crops of the same frames.
3. The cocked test (:mod:`farklecam.models.training.cocked`) on the generated scenes alone (the
   only ones that know which dice lean); its threshold is chosen afterwards on
   calibration scenes with ``python -m farklecam.models.training.cocked calibrate``.

All are exported to ONNX per docs/model-contract.md and copied into
``--out`` (``models/`` by default), and ``training.json`` beside them records
the data mix, the command, wall times, seeds and held-out crop accuracy.
Everything runs offline (:func:`farklecam.models.training.offline.go_offline`), and the held-out
real photos and generated scenes are never trained on. An interrupted
detector run resumes from its last checkpoint when the same command is run
again (``--fresh`` starts over).

Examples::

    python -m farklecam.models.training --synthetic data/synth data/synth_lean --epochs 40 --imgsz 320
    python -m farklecam.models.training --quick --out /tmp/m --runs /tmp/r     # smoke run, seconds
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from farklecam.datasets.cli_args import share, width_scale
from farklecam.models.training.classifier_config import ClassifierConfig
from farklecam.models.training.offline import go_offline

__all__ = ["main"]

_REPO = Path(__file__).resolve().parents[1]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m farklecam.models.training", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--synthetic", type=Path, nargs="+", default=[], help="folders of generated scenes (images/, labels/)"
    )
    parser.add_argument(
        "--synth-limit", type=int, help="generated training scenes per folder for the detector (default all)"
    )
    parser.add_argument(
        "--cls-synth-limit", type=int, help="generated scenes per folder for the classifier (default all)"
    )
    parser.add_argument("--real-limit", type=int, help="use only this many real training photos (smoke tests)")
    parser.add_argument(
        "--hold-validation",
        action="store_true",
        help="leave the real validation photos out (to compare recipes on them: farklecam.datasets.real --validation)",
    )
    parser.add_argument("--epochs", type=int, default=12, help="detector epochs (on the full mix)")
    parser.add_argument(
        "--real-epochs", type=int, default=15, help="first detector stage on real photos only (0: one stage)"
    )
    parser.add_argument("--imgsz", type=int, default=320, help="detector input size")
    parser.add_argument("--model", default="yolov8n.yaml", help="ultralytics model yaml (built from scratch)")
    parser.add_argument("--cls-epochs", type=int, default=12, help="classifier epochs over the crop bank")
    parser.add_argument("--cls-steps", type=int, help="stop the classifier after this many steps")
    parser.add_argument("--cls-real-jitters", type=int, help="crops banked per real die (default: ClassifierConfig's)")
    parser.add_argument(
        "--cls-cocked-jitters", type=int, help="crops banked per cocked die (default: ClassifierConfig's)"
    )
    parser.add_argument("--cls-scale", type=float, help="box size jitter of banked crops: log-normal sigma")
    parser.add_argument("--cls-streaks", type=share, help="share of classifier crops given marble streaks (0..1)")
    parser.add_argument("--cls-motion-blur", type=share, help="share of classifier crops smeared by motion blur (0..1)")
    parser.add_argument("--cls-width-scale", type=width_scale, help="factor on the classifier's channel widths")
    parser.add_argument("--device", default="cpu", help="'cpu' or a CUDA index such as '0'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="torch CPU threads (1 on a busy, shared machine)"
    )
    parser.add_argument("--runs", type=Path, default=_REPO / "runs", help="working folder (git-ignored)")
    parser.add_argument("--name", default="farklecam", help="run name under --runs")
    parser.add_argument("--out", type=Path, default=_REPO / "models", help="where the ONNX files go")
    parser.add_argument("--skip-detector", action="store_true")
    parser.add_argument("--skip-classifier", action="store_true")
    parser.add_argument("--skip-cocked", action="store_true", help="do not train the cocked test")
    parser.add_argument("--cocked-steps", type=int, default=5000, help="cocked test training steps")
    parser.add_argument(
        "--init",
        type=Path,
        metavar="CHECKPOINT",
        help="start the mixed detector stage from this checkpoint of ours (skips the real-only stage)",
    )
    parser.add_argument("--fresh", action="store_true", help="do not resume an interrupted detector run")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 8 real photos, 1 epoch at 64 px, a few classifier steps"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.real_limit = args.real_limit or 8
        args.epochs, args.imgsz, args.cls_steps, args.real_epochs = 1, 64, args.cls_steps or 3, 1
        args.cocked_steps = 2
        args.synth_limit = args.cls_synth_limit = args.synth_limit or 8
    return args


def _version() -> str:
    from farklecam import __version__

    return __version__


def _sha(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _sha_payload(config: Any, args: argparse.Namespace) -> dict[str, Any]:
    """What a model's ``train_config_sha`` hashes: its config, and the real photos held back if any.

    A run without the validation photos learned from other data than one with them, so
    their hashes differ (a fusion fitted with one is not taken for the other's).
    """
    payload = asdict(config)
    for added in ("streaks", "motion_blur"):
        if not payload.get(added):
            payload.pop(added, None)  # recipes from before these options keep their hash
    if args.hold_validation:
        payload["real_validation_held_back"] = True
    return payload


def _counts(frames: Sequence[Any]) -> dict[str, dict[str, int]]:
    images: Counter[str] = Counter(f.source for f in frames)
    dice: Counter[str] = Counter()
    for f in frames:
        dice[f.source] += len(f.boxes)
    return {s: {"images": images[s], "dice": dice[s]} for s in sorted(images)}


def _frames(args: argparse.Namespace, synth_limit: int | None) -> list[Any]:
    from farklecam.datasets.training_sets import real_frames, synthetic_frames

    real = real_frames(hold_validation=args.hold_validation)
    if args.real_limit is not None:
        real = real[:: max(1, len(real) // args.real_limit)][: args.real_limit]
    synth = [frame for folder in args.synthetic for frame in synthetic_frames(folder, synth_limit)]
    return real + synth


def _detector_stage(
    args: argparse.Namespace, name: str, frames: Sequence[Any], config: Any, init: Path | None
) -> tuple[Path, dict[str, Any]]:
    """Train one detector stage in ``runs/<name>/<stage>``; returns its checkpoint and record."""
    from farklecam.datasets.training_sets import build_detector_dataset
    from farklecam.models.training.detector import train_detector

    run_dir = (args.runs / args.name / name).resolve()
    dataset = build_detector_dataset(args.runs / args.name / f"{name}_data", frames)
    start = time.monotonic()
    checkpoint = train_detector(dataset.yaml, run_dir, config, init=init, resume=not args.fresh)
    return checkpoint, {
        "config": asdict(config),
        "init": str(init.relative_to(args.runs.resolve())) if init else None,
        "data": {"images": dataset.counts, "dice": dataset.dice},
        "train_seconds_this_run": round(time.monotonic() - start, 1),
        "run_dir": str(run_dir),
    }


def _train_detector(args: argparse.Namespace, record: dict[str, Any]) -> None:
    """Stage 1 on the real photos alone (when generated scenes follow), stage 2 on the full mix.

    The real-only stage converges on the few real photos first; the mixed
    stage then starts from it, so a CPU budget buys more useful epochs than
    training the large mix from random weights.
    """
    from farklecam.models.training.detector import DetectorConfig, export_detector, recommend_conf

    config = DetectorConfig(
        model=args.model, imgsz=args.imgsz, epochs=args.epochs, seed=args.seed, device=args.device, threads=args.threads
    )
    # The last third of the epochs (at most 5) see whole frames, as at run time, instead of mosaics.
    config = replace(config, mosaic_off=min(5, max(1, args.epochs // 3)))
    if args.quick:
        config = replace(config, batch=4, mosaic_off=0)
    stages: dict[str, Any] = {}
    init = args.init.resolve() if args.init else None
    if init is not None:
        config = replace(config, warmup_epochs=1.0)
    elif args.synthetic and args.real_epochs > 0:
        real_config = replace(config, epochs=args.real_epochs, mosaic_off=min(5, max(1, args.real_epochs // 3)))
        init, stages["real"] = _detector_stage(args, "detector_real", _frames(args, 0), real_config, None)
        config = replace(config, warmup_epochs=1.0)
    checkpoint, stages["mixed" if init else "single"] = _detector_stage(
        args, "detector", _frames(args, args.synth_limit), config, init
    )
    sha = _sha({name: {"config": st["config"], "data": st["data"]["images"]} for name, st in stages.items()})
    conf = recommend_conf(checkpoint, args.runs / args.name / "detector_data" / "data.yaml", config)
    metadata = {"farklecam_version": _version(), "train_config_sha": sha, "farklecam_det_conf": f"{conf:.3f}"}
    out = export_detector(checkpoint, args.out / "die_detector.onnx", config.imgsz, metadata)
    record["detector"] = {"file": out.name, "train_config_sha": sha, "recommended_conf": conf, "stages": stages}


def _train_classifier(args: argparse.Namespace, record: dict[str, Any]) -> None:
    from farklecam.datasets.real import SOURCES, split
    from farklecam.datasets.training_sets import Frame, synthetic_frames
    from farklecam.models.bank.crop_bank import (
        CLASSIFIER_NAMES,
        MINING_CONF,
        build_bank,
        detect_boxes,
        prune_unlabelled_dice,
    )
    from farklecam.models.training.classifier import evaluate, train_classifier
    from farklecam.models.training.facenet import export_facenet

    overrides = {
        "real_jitters": args.cls_real_jitters,
        "cocked_jitters": args.cls_cocked_jitters,
        "scale": args.cls_scale,
        "streaks": args.cls_streaks,
        "motion_blur": args.cls_motion_blur,
        "width": args.cls_width_scale,
    }
    config = ClassifierConfig(
        epochs=args.cls_epochs,
        seed=args.seed,
        max_steps=args.cls_steps,
        threads=args.threads,
        **{key: value for key, value in overrides.items() if value is not None},
    )
    frames = _frames(args, args.cls_synth_limit)
    start = time.monotonic()
    # Crops around the boxes the trained detector really finds (it was exported above, or
    # earlier), and its false alarms as "not_die", mined below its run-time threshold.
    detector = args.out / "die_detector.onnx"
    detected = detect_boxes(frames, detector, conf=MINING_CONF) if detector.exists() else None
    previous = args.out / "face_classifier.onnx"
    if detected is not None and previous.exists():
        detected = prune_unlabelled_dice(frames, detected, previous)
    bank = build_bank(frames, config, detected=detected)
    print(
        f"classifier bank: {len(bank.labels)} crops from {len(frames)} frames ({time.monotonic() - start:.0f} s)",
        flush=True,
    )
    model, stats = train_classifier(bank, config)
    # Held-out measurement on exact crops of the labelled boxes (the detector's errors not included).
    holdout = [Frame.from_real(im) for s in SOURCES for im in split(s)[1]]
    for folder in args.synthetic:
        holdout += synthetic_frames(folder, 300 if not args.quick else 8, holdout=True)
    if args.quick:
        holdout = holdout[:: max(1, len(holdout) // 8)]
    accuracy = evaluate(model, build_bank(holdout, config, jitter=False))
    out = export_facenet(
        model,
        args.out / "face_classifier.onnx",
        _version(),
        {"train_config_sha": _sha(_sha_payload(config, args))},
        names=CLASSIFIER_NAMES,
    )
    record["classifier"] = {
        "file": out.name,
        "config": asdict(config),
        "data": {"crops": bank.counts(), "frames": _counts(frames)},
        "crops_around": (
            f"labelled and matched detector boxes; detector false alarms at conf {MINING_CONF} as not_die"
            if detected is not None
            else "labelled boxes"
        ),
        "train_seconds": round(stats["seconds"], 1),
        "steps": int(stats["steps"]),
        "holdout_crop_accuracy": accuracy,
    }


def _train_cocked(args: argparse.Namespace, record: dict[str, Any]) -> None:
    from farklecam.models.training.cocked import train_cocked

    if not args.synthetic:
        print("cocked test skipped: it learns from generated scenes (--synthetic)", flush=True)
        return
    config = ClassifierConfig(epochs=40, max_steps=args.cocked_steps, threads=args.threads, seed=args.seed)
    detector = args.out / "die_detector.onnx"
    if not detector.is_file():
        print(f"cocked test banked around labelled boxes alone: no detector at {detector}", flush=True)
    record["cocked_test"] = train_cocked(
        args.synthetic,
        args.out / "cocked_test.onnx",
        config,
        detectors=[detector] if detector.is_file() else [],
        limit=args.cls_synth_limit,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Train, export and record the models; returns a process exit code."""
    args = _parse(argv)
    go_offline()
    args.out.mkdir(parents=True, exist_ok=True)
    record_path = args.out / "training.json"
    record: dict[str, Any] = json.loads(record_path.read_text()) if record_path.exists() else {}
    start = time.monotonic()
    if not args.skip_detector:
        _train_detector(args, record)
    if not args.skip_classifier:
        _train_classifier(args, record)
    if not args.skip_cocked:
        _train_cocked(args, record)
    record["command"] = "python -m farklecam.models.training " + shlex.join(
        list(argv) if argv is not None else sys.argv[1:]
    )
    record["wall_seconds_this_run"] = round(time.monotonic() - start, 1)
    record["seed"] = args.seed
    record["real_validation_held_back"] = args.hold_validation
    record["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "device": args.device}
    record["farklecam_version"] = _version()
    record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"wrote {record_path}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
