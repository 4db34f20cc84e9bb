"""Train and measure the pose network (:mod:`vision.pose.net`): ``python -m models.training.pose {train,measure}``.

The network is :class:`farklecam.models.training.facenet.FaceNet` with three outputs, trained by the shared
loop (:func:`farklecam.models.training.facenet.fit`) with a regression loss: the distance between its unit
output and each die's up-axis in the frame of the crop's viewing ray
(:func:`farklecam.vision.pose.tilt.ray_rotations`, with the scene's true intrinsics). Crops are banked
unturned at 1.5x the field of view as the face classifier's are (:mod:`farklecam.models.bank.crop_bank`),
around the labelled box, the detector's box and jittered ones; each training crop is
turned by any angle and mirrored at random, and its target with it
(:func:`farklecam.vision.pose.tilt.turn_in_ray_frame`):
in the ray's frame a turn of the crop about its centre is a turn about the ray.

Only generated scenes whose sidecars record ``up_cam`` (generated since the pose
fields were added) can train or measure it.

Example::

    python -m farklecam.models.training.pose train --synthetic runs/pose_data/train_v1 --out runs/pose/pose_net.onnx
    --steps 2000
    python -m farklecam.models.training.pose measure runs/pose_data/eval_v2 --model runs/pose/pose_net.onnx
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt
from farklecam.datasets.training_sets import Frame, read_synthetic_frame, synthetic_frames
from farklecam.datasets.yolo import find_images, read_sidecar
from farklecam.models.bank.crop_bank import (
    BANK_CONTEXT,
    BANK_SIZE,
    detect_boxes,
    jitter_boxes,
    match_detections,
    turned_centres,
)
from farklecam.models.training.classifier_config import ClassifierConfig
from farklecam.vision.crops import extract_crops
from farklecam.vision.pose.tilt import TiltCall, ray_rotations, to_ray_frame, turn_in_ray_frame, view_from_normal
from farklecam.vision.pose.upright import upright_view

if TYPE_CHECKING:
    import torch

__all__ = [
    "PoseBank",
    "PoseTruth",
    "build_pose_bank",
    "main",
    "measure",
    "measure_flat",
    "pose_truth",
    "train_pose",
]

#: Crops banked per flat die and per leaning die (past 15 degrees): leaning dice are the rarer.
FLAT_COPIES, LEAN_COPIES = 3, 8


@dataclass(frozen=True)
class PoseTruth:
    """A generated scene's pose labels, in the order of its boxes.

    Attributes:
        up_cam: each die's up-axis in the camera's frame (n, 3).
        tilt_deg: each die's tilt (n,).
        occluded: dice under half visible (n,).
        off_tray: dice off the tray (n,).
        focal: the camera's focal length in pixels.
        principal: the principal point (2,).
        normal: the table's normal in the camera's frame (3,).
        tray: the tray floor's corners (4, 2), pixels.
    """

    up_cam: npt.NDArray[np.float64]
    tilt_deg: npt.NDArray[np.float64]
    occluded: npt.NDArray[np.bool_]
    off_tray: npt.NDArray[np.bool_]
    focal: float
    principal: npt.NDArray[np.float64]
    normal: npt.NDArray[np.float64]
    tray: npt.NDArray[np.float64]


def pose_truth(frame: Frame) -> PoseTruth:
    """The pose labels of a generated scene's sidecar.

    Raises:
        ValueError: the sidecar lacks the pose fields (a scene generated before them) or its dice.
    """
    sidecar = read_sidecar(frame.path)
    dice, camera = sidecar.get("dice"), sidecar.get("camera", {})
    if not isinstance(dice, list) or len(dice) != len(frame.boxes):
        raise ValueError(f"{frame.path}: its sidecar does not list its {len(frame.boxes)} dice")
    if "intrinsics" not in camera or any("up_cam" not in d for d in dice):
        raise ValueError(f"{frame.path}: no pose labels (up_cam, intrinsics); regenerate it with this generator")
    fx, _fy, cx, cy = (float(v) for v in camera["intrinsics"])
    return PoseTruth(
        up_cam=np.array([d["up_cam"] for d in dice], np.float64).reshape(-1, 3),
        tilt_deg=np.array([d["tilt_deg"] for d in dice], np.float64),
        occluded=np.array([bool(d["occluded"]) for d in dice], bool),
        off_tray=np.array([d["status"] == "off_tray" for d in dice], bool),
        focal=fx,
        principal=np.array([cx, cy]),
        normal=np.asarray(camera["table_normal"], np.float64),
        tray=np.asarray(sidecar["tray"], np.float64),
    )


@dataclass(frozen=True)
class PoseBank:
    """Banked crops (:data:`~models.bank.crop_bank.BANK_SIZE` square, unturned, BGR) and their ray-frame up-axes."""

    crops: npt.NDArray[np.uint8]
    targets: npt.NDArray[np.float32]
    tilts: npt.NDArray[np.float32]

    def save(self, path: Path) -> None:
        """Keep the bank for a later run (``runs/``, never git)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, crops=self.crops, targets=self.targets, tilts=self.tilts)

    @classmethod
    def load(cls, path: Path) -> PoseBank:
        """A bank :meth:`save` wrote."""
        with np.load(path) as f:
            return cls(f["crops"], f["targets"], f["tilts"])


def _bank_boxes(
    frame: Frame, detected: npt.NDArray[np.float32] | None, copies: npt.NDArray[np.intp], rng: np.random.Generator
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.intp]]:
    """Each die's banked boxes: labelled, then the detector's, then jittered ones; with each box's die index."""
    found = frame.boxes if detected is None else match_detections(frame.boxes, detected)
    boxes, which = [], []
    for copy in range(int(copies.max(initial=0))):
        keep = np.flatnonzero(copies > copy)
        base = (found if copy % 2 else frame.boxes)[keep]
        boxes.append(jitter_boxes(base, rng, 0.06, 0.1) if copy > 1 else base)
        which.append(keep)
    if not boxes:
        return np.zeros((0, 4), np.float32), np.zeros(0, np.intp)
    return np.concatenate(boxes).astype(np.float32), np.concatenate(which)


def build_pose_bank(
    frames: Sequence[Frame],
    detected: dict[Path, npt.NDArray[np.float32]] | None = None,
    *,
    flat_copies: int = FLAT_COPIES,
    lean_copies: int = LEAN_COPIES,
    seed: int = 0,
) -> PoseBank:
    """Crops of every die not occluded, each with its up-axis in the frame of its crop box's ray."""
    rng = np.random.default_rng(seed)
    crops, targets, tilts = [], [], []
    for frame, truth, image in _labelled(frames):
        copies = np.where(truth.tilt_deg > 15, lean_copies, flat_copies)
        copies[truth.occluded] = 0
        boxes, which = _bank_boxes(frame, (detected or {}).get(frame.path), copies, rng)
        if len(boxes) == 0:
            continue
        rot = ray_rotations((boxes[:, :2] + boxes[:, 2:]) / 2, truth.focal, truth.principal)
        crops.append(extract_crops(image, boxes, size=BANK_SIZE, context=BANK_CONTEXT))
        targets.append(to_ray_frame(truth.up_cam[which], rot).astype(np.float32))
        tilts.append(truth.tilt_deg[which].astype(np.float32))
    if not crops:
        raise ValueError("no dice to bank: the folders hold no generated scene with visible dice")
    return PoseBank(np.concatenate(crops), np.concatenate(targets), np.concatenate(tilts))


def _labelled(frames: Iterable[Frame]) -> Iterator[tuple[Frame, PoseTruth, npt.NDArray[np.uint8]]]:
    """Each scene with dice and a readable picture, with its pose truth and the picture (BGR)."""
    for frame in frames:
        if len(frame.boxes) == 0:
            continue
        image = _read(frame.path)
        if image is not None:
            yield frame, pose_truth(frame), image


def _read(path: Path) -> npt.NDArray[np.uint8] | None:
    """A scene's picture, BGR, or None where it cannot be read."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    return None if image is None else np.asarray(image, np.uint8)


def up_axis_loss(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean distance between the unit outputs and the unit targets: about the angle between them, in radians."""
    import torch

    unit = out / out.norm(dim=1, keepdim=True).clamp_min(1e-6)
    return torch.sqrt(((unit - target) ** 2).sum(dim=1) + 1e-8).mean()


def train_pose(bank: PoseBank, config: ClassifierConfig, init: Path | None = None) -> tuple[Any, dict[str, float]]:
    """Train the pose network on a bank with the shared loop; returns ``(model, stats)``."""
    import torch
    from farklecam.models.training.facenet import FaceNet, augment, fit, scaled_widths, to_tensor

    torch.manual_seed(config.seed)
    model = FaceNet(3, scaled_widths(config.width))
    if init is not None:
        model.load_state_dict(torch.load(init, weights_only=True))
    state: dict[str, torch.Tensor] = {}

    def batch(idx: npt.NDArray[np.intp], rng: np.random.Generator, gen: torch.Generator) -> torch.Tensor:
        angles = rng.uniform(0.0, 360.0, len(idx))
        mirror = rng.random(len(idx)) < 0.5
        crops = turned_centres(bank.crops[idx], angles)
        crops = np.where(mirror[:, None, None, None], crops[:, :, ::-1], crops)
        state["target"] = torch.from_numpy(turn_in_ray_frame(bank.targets[idx], angles, mirror).astype(np.float32))
        return augment(to_tensor(crops), gen, flip_vertical=False, flip_horizontal=False)

    def loss(out: torch.Tensor, _idx: npt.NDArray[np.intp]) -> torch.Tensor:
        return up_axis_loss(out, state["target"])

    return fit(model, np.zeros(len(bank.targets), np.int64), batch, config, loss=loss)


@dataclass
class _Tally:
    """Tilt errors and calls over the measured dice."""

    flat_err: list[float]
    lean_err: list[float]
    tp: int = 0
    fp: int = 0
    fn: int = 0
    unsure_lean: int = 0
    unsure_flat: int = 0
    lean_flat: int = 0
    no_normal: int = 0

    def row(self) -> dict[str, float]:
        def mean(v: list[float]) -> float:
            return round(float(np.mean(v)), 2) if v else float("nan")

        calls = self.tp + self.fp
        leaning = self.tp + self.fn
        return {
            "flat_dice": len(self.flat_err),
            "leaning_dice": len(self.lean_err),
            "tilt_mae_flat": mean(self.flat_err),
            "tilt_mae_leaning": mean(self.lean_err),
            "tilt_median_flat": round(float(np.median(self.flat_err)), 2) if self.flat_err else float("nan"),
            "cocked_recall": round(self.tp / leaning, 3) if leaning else float("nan"),
            "cocked_precision": round(self.tp / calls, 3) if calls else float("nan"),
            "leaning_uncertain": self.unsure_lean,
            "leaning_read_flat": self.lean_flat,
            "flat_called_cocked": self.fp,
            "flat_uncertain": self.unsure_flat,
            "dice_without_normal": self.no_normal,
        }


def measure(
    folders: Sequence[Path],
    model: Path,
    detector: Path | None = None,
    call: TiltCall | None = None,
) -> dict[str, dict[str, float]]:
    """Tilt error and cocked calls from tilt on every scene of ``folders`` (pass only scenes never trained on).

    Two ways, as at run time: ``tray`` (the labelled tray corners give the vertical and the
    focal length) and ``none`` (nothing marked: the dice give both, :func:`farklecam.vision.pose.tilt.consensus`);
    and ``truth`` (the scene's true intrinsics and normal), which no run time has: the network's
    own error, so that what the vertical adds can be told from it.
    Dice are the labelled ones that are not occluded, read through the detector's box where
    it finds them (``detector``), else through the labelled box; with a detector, a leaning
    die it does not find counts as missed. A die past 15 degrees (the generator's label) is
    leaning.
    """
    from farklecam.vision.pose.net import PoseNet

    net = PoseNet(model, threads=1)
    call = call or TiltCall()
    tallies = {"truth": _Tally([], []), "tray": _Tally([], []), "none": _Tally([], [])}
    for folder in folders:
        frames = [f for path in find_images(folder) if (f := read_synthetic_frame(path)) is not None]
        found = detect_boxes(frames, detector) if detector is not None else {}
        for frame, truth, image in _labelled(frames):
            keep = ~truth.occluded
            boxes = frame.boxes
            seen = np.ones(len(boxes), bool)
            if detector is not None:
                boxes = match_detections(frame.boxes, found.get(frame.path, np.zeros((0, 4), np.float32)))
                seen = _found(frame.boxes, found.get(frame.path, np.zeros((0, 4), np.float32)))
            view = upright_view(truth.tray, frame.size) if len(truth.tray) == 4 else None
            read_boxes = boxes[seen]
            true_view = view_from_normal(truth.normal, truth.focal, truth.principal)
            for mode, v in (("truth", true_view), ("tray", view), ("none", None)):
                tally = tallies[mode]
                pose = net(image, read_boxes, v) if len(read_boxes) else None
                tilt = np.full(len(boxes), np.nan)
                if pose is not None:
                    tilt[seen] = pose.tilt_deg
                _count(tally, tilt[keep], truth.tilt_deg[keep], seen[keep], call)
    return {mode: t.row() for mode, t in tallies.items()}


def measure_flat(
    folders: Sequence[Path], model: Path, detector: Path, call: TiltCall | None = None
) -> dict[str, float]:
    """Tilt of dice that all lie flat (real photos: none of them leans), with nothing marked.

    The dice are the detector's boxes whose centre lies on a labelled die (labels of
    pip patterns or whole dice alike); a picture's normal is the one its dice agree on
    (:func:`farklecam.vision.pose.tilt.consensus`), so a die's tilt is its disagreement with the rest.
    """
    from farklecam.vision.crops import centre_distances
    from farklecam.vision.pose.net import PoseNet

    net = PoseNet(model, threads=1)
    call = call or TiltCall()
    tilts: list[float] = []
    dice = unknown = 0
    for folder in folders:
        frames = [f for path in find_images(folder) if (f := read_synthetic_frame(path)) is not None]
        found = detect_boxes(frames, detector)
        for frame in frames:
            boxes = found.get(frame.path, np.zeros((0, 4), np.float32))
            image = _read(frame.path)
            if image is None or len(boxes) == 0 or len(frame.boxes) == 0:
                continue
            dist, _ = centre_distances(boxes, frame.boxes)
            reach = np.maximum(frame.boxes[:, 2] - frame.boxes[:, 0], frame.boxes[:, 3] - frame.boxes[:, 1]) / 2
            on_die = (dist < np.maximum(reach[None, :], 1.0)).any(axis=1)
            if not on_die.any():
                continue
            tilt = net(image, boxes[on_die]).tilt_deg
            dice += len(tilt)
            unknown += int(np.isnan(tilt).sum())
            tilts.extend(tilt[~np.isnan(tilt)].tolist())
    t = np.array(tilts)
    return {
        "dice": dice,
        "dice_without_normal": unknown,
        "tilt_mae": round(float(t.mean()), 2) if len(t) else float("nan"),
        "tilt_median": round(float(np.median(t)), 2) if len(t) else float("nan"),
        "called_cocked": int(call.cocked(t).sum()),
        "uncertain": int(call.uncertain(t).sum()),
    }


def _found(labelled: npt.NDArray[np.float32], detected: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    """Which labelled dice a detection's centre lies within reach of (:func:`vision.crops.centre_distances`)."""
    from farklecam.vision.crops import centre_distances

    if len(detected) == 0:
        return np.zeros(len(labelled), bool)
    dist, reach = centre_distances(labelled, detected)
    return np.asarray(dist.min(axis=1) < reach, bool)


def _count(
    tally: _Tally,
    tilt: npt.NDArray[np.float64],
    truth: npt.NDArray[np.float64],
    seen: npt.NDArray[np.bool_],
    call: TiltCall,
) -> None:
    leaning = truth > 15
    known = seen & ~np.isnan(tilt)
    tally.no_normal += int((seen & np.isnan(tilt)).sum())
    err = np.abs(tilt - truth)
    tally.flat_err.extend(err[known & ~leaning].tolist())
    tally.lean_err.extend(err[known & leaning].tolist())
    cocked = known & call.cocked(tilt)
    unsure = seen & call.uncertain(tilt)
    tally.tp += int((cocked & leaning).sum())
    tally.fp += int((cocked & ~leaning).sum())
    tally.fn += int((leaning & ~cocked).sum())
    tally.unsure_lean += int((unsure & leaning).sum())
    tally.unsure_flat += int((unsure & ~leaning).sum())
    tally.lean_flat += int((seen & leaning & ~cocked & ~unsure).sum())


def _train(args: argparse.Namespace) -> int:
    import torch
    from farklecam.models.training.facenet import export_facenet
    from farklecam.vision.pose.net import POSE_NAMES

    from farklecam import __version__

    out: Path = args.out
    work = out.parent
    bank_path = work / "pose_bank.npz"
    start = time.monotonic()
    if bank_path.exists():
        bank = PoseBank.load(bank_path)
    else:
        frames = [f for folder in args.synthetic for f in synthetic_frames(folder)]
        detected = detect_boxes(frames, args.detector) if args.detector is not None else None
        bank = build_pose_bank(frames, detected)
        bank.save(bank_path)
    bank_s = time.monotonic() - start
    print(f"bank: {len(bank.targets)} crops, {int((bank.tilts > 15).sum())} leaning ({bank_s:.0f} s)", flush=True)  # noqa: T201
    config = replace(ClassifierConfig(), batch=args.batch, max_steps=args.steps, epochs=10_000, threads=args.threads)
    model, stats = train_pose(bank, config, args.init)
    torch.save(model.state_dict(), work / "pose_net.pt")
    export_facenet(
        model, out, __version__, {"trained_on": json.dumps([str(f) for f in args.synthetic])}, names=POSE_NAMES
    )
    record = {"bank_crops": len(bank.targets), "bank_seconds": round(bank_s, 1), **stats}
    (work / "train.json").write_text(json.dumps(record, indent=1))
    print(json.dumps(record), flush=True)  # noqa: T201
    return 0


def _measure(args: argparse.Namespace) -> int:
    if args.flat:
        if args.detector is None:
            print("error: --flat reads the dice the detector finds: give --detector", file=sys.stderr)  # noqa: T201
            return 2
        print(json.dumps(measure_flat(args.folders, args.model, args.detector), indent=1))  # noqa: T201
        return 0
    rows = measure(args.folders, args.model, args.detector)
    print(json.dumps(rows, indent=1))  # noqa: T201
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m farklecam.models.training.pose train|measure``."""
    parser = argparse.ArgumentParser(
        prog="python -m farklecam.models.training.pose", description=__doc__.split("\n", 1)[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="bank crops of generated scenes and train the pose network")
    t.add_argument("--synthetic", type=Path, nargs="+", required=True, help="generated folders with pose labels")
    t.add_argument("--out", type=Path, required=True, help="the ONNX file to write (its folder keeps the bank)")
    t.add_argument("--detector", type=Path, default=None, help="bank every other crop around this detector's boxes")
    t.add_argument("--init", type=Path, default=None, help="start from these weights (a .pt an earlier run kept)")
    t.add_argument("--steps", type=int, default=2000)
    t.add_argument("--batch", type=int, default=64)
    t.add_argument("--threads", type=int, default=1)
    m = sub.add_parser("measure", help="tilt error and cocked calls from tilt on held-out generated scenes")
    m.add_argument("folders", type=Path, nargs="+")
    m.add_argument("--model", type=Path, required=True)
    m.add_argument("--detector", type=Path, default=None, help="read the dice this detector finds (default: labels)")
    m.add_argument("--flat", action="store_true", help="folders of photos whose dice all lie flat (real ones)")
    args = parser.parse_args(argv)
    return _train(args) if args.command == "train" else _measure(args)


if __name__ == "__main__":
    sys.exit(main())
