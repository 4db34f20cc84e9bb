"""Train and calibrate the cocked test (:mod:`vision.pose.cocked`): ``python -m farklecam.models.training.cocked``.

Only generated scenes know which dice lean (the real photos have none) and
where the tray is, so the test learns leaning dice from them alone: every die
of the training part of each folder (the held-out part is never read), its
crop turned so the nadir found from the labelled tray outline lies below, and
the sine of the camera's angle to it as a fourth plane. With ``--real-flat``
it also learns what real flat dice look like, from the training photos of
sources shot looking straight down (:data:`farklecam.datasets.real.STRAIGHT_DOWN_SOURCES`,
whose vertical is the picture's centre; never their validation or held-out
photos): a test that saw only rendered dice calls some real flat ones cocked.
(Tried and not shipped: it found fewer rendered leaning dice; ``docs/tried.md``.)
Leaning dice are rare in thrown scenes and banked several times over; the threshold on the
cocked probability is then chosen by cocked F1 on scenes set apart for calibration, as
:mod:`farklecam.models.thresholds.calibrate` does for the face classifier.

Crops are banked unturned at 1.5x the field of view, as the face classifier's
are (:func:`farklecam.models.bank.crop_bank.bank_size`), and turned at training time by
their upright angle plus a little jitter (the nadir's direction is only as
good as the tray outline), then cut to the run-time crop.

Example::

    python -m farklecam.models.training.cocked train --synthetic data/synth data/synth_lean data/synth_v2 \
        --out models/cocked_test.onnx
    python -m farklecam.models.training.cocked calibrate data/calib_synth --model models/cocked_test.onnx --write
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.datasets.cli_args import (
    copy_count,
    crop_context,
    crop_side,
    head_grid,
    mixup_alpha,
    weight_decay,
    width_scale,
)
from farklecam.datasets.real import STRAIGHT_DOWN_SOURCES
from farklecam.datasets.training_sets import Frame, real_frames, synthetic_frames
from farklecam.datasets.yolo import COCKED_CLASS, find_images, read_sidecar
from farklecam.models.bank.crop_bank import (
    bank_context,
    bank_size,
    detect_boxes,
    jitter_boxes,
    match_detections,
    misplaced_boxes,
    turned_centres,
)
from farklecam.models.evaluate.metrics import f1
from farklecam.models.training.classifier_config import ClassifierConfig
from farklecam.models.training.onnx_metadata import set_metadata
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE
from farklecam.vision.pose.cocked import (
    COCKED_TEST_NAMES,
    DEFAULT_THRESHOLD,
    UNDO_FORESHORTENING_KEY,
    CockedTest,
    foreshortening,
)
from farklecam.vision.pose.upright import UprightView, straight_down_view, upright_angles, upright_view

__all__ = [
    "BankRecipe",
    "BoxReads",
    "CockedBank",
    "LabelledScene",
    "best_threshold",
    "build_cocked_bank",
    "call_scores",
    "choose_threshold",
    "frame_view",
    "labelled_box_probs",
    "labelled_scenes",
    "main",
    "mean_group_f1",
    "scene_view",
    "train_cocked",
]

#: Crops banked per flat die and per leaning die (half around the detector's box where it found the die).
FLAT_COPIES, COCKED_COPIES = 2, 8
#: Crops banked per real flat die: they are few (about a thousand) against tens of thousands rendered.
REAL_FLAT_COPIES = 4
#: Standard deviation, in degrees, of the turn added to each training crop.
ANGLE_JITTER_DEG = 6.0
#: The auxiliary targets (``--aux``): a die's tilt is taught as tilt / this, so a leaning die's is about 0.5-1.
AUX_TILT_SCALE_DEG = 45.0
#: Weight of the auxiliary targets' squared error beside the classes' cross-entropy.
AUX_WEIGHT = 0.5


@dataclass(frozen=True)
class CockedBank:
    """Banked crops (:func:`~models.bank.crop_bank.bank_size` square, unturned): label, upright angle, view sine.

    ``crops`` are BGR, (n, s, s, 3), or with a fourth channel holding the crop's neighbour
    plane (:func:`farklecam.vision.crops.neighbour_planes`), so that one turn moves both alike.
    """

    crops: npt.NDArray[np.uint8]
    labels: npt.NDArray[np.int64]
    angles: npt.NDArray[np.float32]
    sines: npt.NDArray[np.float32]
    crop_size: int = CROP_SIZE
    #: Each crop's die's auxiliary targets (n, 2), :func:`die_targets`; None unless the recipe asks.
    aux: npt.NDArray[np.float32] | None = None

    @property
    def neighbours(self) -> bool:
        """Whether the crops carry a neighbour plane."""
        return bool(self.crops.shape[-1] == 4)


@dataclass(frozen=True)
class BankRecipe:
    """How the cocked test's crops are cut and banked: one record for the command line, the bank and ``training.json``.

    Attributes:
        crop_size: side of the test's input crops (the run-time test reads it from the model's metadata).
        context: context around each box in its crop, a fraction of the box's longer side per side
            (written to the model's ``crop_context``): more shows what a die leans on, fewer
            pixels show the die.
        flat_copies: crops banked per generated flat die (the first two unjittered).
        real_flat_copies: crops banked per real flat die (the first two unjittered).
        undo_foreshortening: read crops squeezed across by the cosine of the camera's angle
            (:func:`farklecam.vision.pose.cocked.foreshortening`), so that a flat top face looks square at any
            angle; the model's metadata says so and the run-time test squeezes alike.
        misplaced: also bank each die around boxes as badly placed as the detector's worst
            (:func:`build_cocked_bank`); nothing changes at run time.
        neighbours: a fifth input plane marks the other dice's boxes in each crop
            (:func:`farklecam.vision.crops.neighbour_planes`); the run-time test adds it when its model
            takes five planes.
        aux: also teach each die's tilt and hidden share (:func:`die_targets`) on two more
            outputs, which the export leaves out; nothing changes at run time.

    Raises:
        ValueError: fewer than one copy per flat die.
    """

    crop_size: int = CROP_SIZE
    context: float = CROP_CONTEXT
    flat_copies: int = FLAT_COPIES
    real_flat_copies: int = REAL_FLAT_COPIES
    undo_foreshortening: bool = False
    misplaced: bool = False
    neighbours: bool = False
    aux: bool = False

    def __post_init__(self) -> None:
        if min(self.real_flat_copies, self.flat_copies) < 1:
            raise ValueError(
                f"copies per flat die must be at least 1, but got {self.real_flat_copies} and {self.flat_copies}"
            )

    @property
    def planes(self) -> int:
        """The test's input planes: RGB and the view's sine, and the neighbour plane if asked."""
        return 5 if self.neighbours else 4


def frame_view(frame: Frame) -> tuple[UprightView, npt.NDArray[np.bool_]] | None:
    """A training frame's vertical and which of its dice are occluded; None where the vertical is unknown.

    A generated scene's comes from its sidecar (:func:`scene_view`), a straight-down real
    photo's from its centre (no die occluded); other real photos have no known vertical.
    """
    if frame.source == "synthetic":
        return scene_view(frame.path, frame.size, len(frame.boxes))
    if frame.source in STRAIGHT_DOWN_SOURCES:
        return straight_down_view(frame.size), np.zeros(len(frame.boxes), bool)
    return None


def die_targets(frame: Frame) -> npt.NDArray[np.float32]:
    """Each die's auxiliary targets (n, 2): its tilt / :data:`AUX_TILT_SCALE_DEG` and the share of it hidden.

    A generated scene's come from its sidecar; a real straight-down photo's dice lie flat
    and in view, 0 and 0.

    Raises:
        ValueError: a generated scene whose sidecar does not list each of its dice.
    """
    n = len(frame.boxes)
    if frame.source != "synthetic":
        return np.zeros((n, 2), np.float32)
    dice = read_sidecar(frame.path).get("dice")
    if not isinstance(dice, list) or len(dice) != n:
        raise ValueError(f"{frame.path}: its sidecar does not list its {n} dice, so their tilt is unknown")
    return np.array([[float(d["tilt_deg"]) / AUX_TILT_SCALE_DEG, 1.0 - float(d["visible"])] for d in dice], np.float32)


def scene_view(image_path: Path, size: tuple[int, int], n: int) -> tuple[UprightView, npt.NDArray[np.bool_]] | None:
    """The camera's vertical from a generated scene's labelled tray, and which of its ``n`` dice are occluded.

    None when the scene has no sidecar or no usable tray outline.
    """
    sidecar = read_sidecar(image_path)
    view = upright_view(np.asarray(sidecar["tray"], np.float64), size) if sidecar.get("tray") else None
    if view is None:
        return None
    dice = sidecar.get("dice")
    if not isinstance(dice, list) or len(dice) != n:
        return view, np.zeros(n, bool)
    return view, np.array([bool(d.get("occluded", False)) for d in dice], bool)


@dataclass(frozen=True)
class LabelledScene:
    """A generated scene's picture and its visible dice: boxes (n, 4) and which of them lean."""

    path: Path
    image: npt.NDArray[np.uint8]
    boxes: npt.NDArray[np.float32]
    cocked: npt.NDArray[np.bool_]


def labelled_scenes(folders: Sequence[Path]) -> Iterator[LabelledScene]:
    """Every scene of the folders with at least one visible die (occluded dice, per the sidecar, left out)."""
    from farklecam.datasets.training_sets import read_synthetic_frame
    from farklecam.vision.images import load_image

    for folder in folders:
        for path in find_images(folder):
            frame = read_synthetic_frame(path)
            if frame is None or len(frame.boxes) == 0:
                continue
            scene = scene_view(path, frame.size, len(frame.boxes))
            visible = ~scene[1] if scene is not None else np.ones(len(frame.boxes), bool)
            if visible.any():
                cocked = (frame.classes == COCKED_CLASS)[visible]
                yield LabelledScene(path, load_image(path), frame.boxes[visible], cocked)


def build_cocked_bank(
    frames: Sequence[Frame],
    seed: int = 0,
    detected: Sequence[Mapping[Path, npt.NDArray[np.float32]]] = (),
    recipe: BankRecipe = BankRecipe(),
) -> CockedBank:
    """Bank every visible die of the frames as the ``recipe`` says (see :func:`frame_view` for which frames count).

    A leaning die is banked :data:`COCKED_COPIES` times, a flat one ``recipe.flat_copies`` times
    (``recipe.real_flat_copies`` in a real photo); copies after the first two are jittered.

    ``detected`` holds each detector's boxes per frame (:func:`~farklecam.models.bank.crop_bank.detect_boxes`).
    Even copies are cut around the labelled box, odd ones around a detector's box where
    it found the die; with several detectors they take turns, frame by frame and copy by
    copy (odd copy ``c`` of the ``i``-th frame: detector ``(i + c // 2) % n``), so a
    leaning die is seen through each of four detectors and the flat dice, banked once
    around a detector, are shared out among them. Different detectors misplace boxes
    differently, and the run-time detector's errors are what the test must not mistake
    for a lean.

    With ``recipe.misplaced`` each die is banked half as many times again around boxes placed as
    badly as the detector's worst (:func:`~farklecam.models.bank.crop_bank.misplaced_boxes`, IoU 0.5-0.8
    with the label): a third of every die's copies then, flat or leaning, so neither the
    classes' balance nor their share of such crops tells the test which class a crop is.
    Those boxes come from their own random stream: the other copies are banked exactly as
    without them, which keeps a control trained without them comparable.

    ``recipe.context`` is the run-time crop's context (:func:`farklecam.vision.crops.square_boxes`); the
    bank holds 1.5x that field of view (:func:`~farklecam.models.bank.crop_bank.bank_context`).

    With ``recipe.neighbours`` each crop carries a fourth channel marking the other dice's boxes
    (:func:`farklecam.vision.crops.neighbour_planes`): those the run-time reader would have, the
    detector's own boxes for a copy cut around one of them, else the visible labelled dice.

    With ``recipe.aux`` each crop also carries its die's :func:`die_targets`.

    With ``recipe.undo_foreshortening`` the crops are banked already turned upright and squeezed
    across (:func:`farklecam.vision.pose.cocked.foreshortening`), their angles kept as 0, so that training
    turns them by the jitter alone: a crop squeezed to a third of its width needs three
    times the field of view across, more than an unturned bank crop holds.
    """
    from farklecam.vision.crops import extract_crops, neighbour_planes

    rng = np.random.default_rng(seed)
    misplacing = np.random.default_rng([seed, 1])
    side, margin = bank_size(recipe.crop_size), bank_context(recipe.context)
    flat_copies, real_flat_copies = recipe.flat_copies, recipe.real_flat_copies
    crops, labels, angles, sines, aux = [], [], [], [], []
    for index, frame in enumerate(frames):
        if len(frame.boxes) == 0:
            continue
        scene = frame_view(frame)
        image = (
            cast("npt.NDArray[np.uint8] | None", cv2.imread(str(frame.path), cv2.IMREAD_COLOR))
            if scene is not None
            else None
        )
        if scene is None or image is None:
            continue
        view, occluded = scene
        centres = (frame.boxes[:, :2] + frame.boxes[:, 2:]) / 2.0
        angle, sine = upright_angles(view, centres), np.sin(view.view_tilt(centres)).astype(np.float32)
        keep = ~occluded
        cocked = frame.classes == COCKED_CLASS
        targets = die_targets(frame) if recipe.aux else None
        copies = np.where(cocked, COCKED_COPIES, flat_copies if frame.source == "synthetic" else real_flat_copies)
        found = [match_detections(frame.boxes, d[frame.path]) if frame.path in d else frame.boxes for d in detected]
        # (copy, which dice): even copies around the labelled box, odd ones around a detector's
        # where it found the die, from copy 2 on jittered; copy -1 a misplaced box (not jittered).
        rounds = [(copy, keep & (copies > copy)) for copy in range(int(copies.max()))]
        if recipe.misplaced:
            rounds += [(-1, keep & (copies // 2 > copy)) for copy in range(int(copies.max()) // 2)]
        for copy, take in rounds:
            if not take.any():
                continue
            if copy < 0:
                boxes, made = misplaced_boxes(frame.boxes[take], frame.boxes, misplacing)
                take[take] = made
                boxes = boxes[made]
                if not take.any():
                    continue
            dice = frame.boxes[keep]  # the other dice a crop around a labelled or drawn box sees
            if copy >= 0:
                odd = bool(found) and copy % 2 == 1
                which = (index + copy // 2) % len(found) if odd else 0
                boxes = (found[which] if odd else frame.boxes)[take]
                if odd:
                    dice = detected[which].get(frame.path, dice)
            if copy >= 2:
                boxes = jitter_boxes(boxes, rng, 0.06, 0.1)
            turn, squeeze = (angle[take], foreshortening(sine[take])) if recipe.undo_foreshortening else (None, None)
            cut = extract_crops(image, boxes, side, margin, turn, squeeze)
            if recipe.neighbours:
                cut = np.concatenate([cut, neighbour_planes(boxes, dice, side, margin, turn, squeeze)[..., None]], 3)
            crops.append(cut)
            angles.append(np.zeros(int(take.sum()), np.float32) if recipe.undo_foreshortening else angle[take])
            labels.append(cocked[take].astype(np.int64))
            sines.append(sine[take])
            if targets is not None:
                aux.append(targets[take])
    if not crops:
        raise ValueError("no frames with a known vertical (a tray outline, or a straight-down camera) and visible dice")
    return CockedBank(
        np.concatenate(crops),
        np.concatenate(labels),
        np.concatenate(angles),
        np.concatenate(sines),
        recipe.crop_size,
        np.concatenate(aux) if recipe.aux else None,
    )


def _turned_centres(bank: CockedBank, idx: npt.NDArray[np.intp], rng: np.random.Generator) -> npt.NDArray[np.uint8]:
    """The run-time crops of banked crops, each turned upright (plus jitter)."""
    jitter = rng.normal(0.0, ANGLE_JITTER_DEG, len(idx)).astype(np.float32)  # float32 sums, as banked
    return turned_centres(bank.crops[idx], bank.angles[idx] + jitter, bank.crop_size)


def train_cocked(
    synthetic: Sequence[Path],
    out: Path,
    config: ClassifierConfig,
    *,
    detectors: Sequence[Path] = (),
    limit: int | None = None,
    real_flat: Sequence[str] = (),
    recipe: BankRecipe = BankRecipe(),
) -> dict[str, Any]:
    """Bank, fit and export the cocked test; returns the record for ``training.json``.

    Args:
        synthetic: folders of generated scenes (their training part is used).
        out: where the ONNX file goes.
        config: epochs, steps, seed, threads, width and head grid (the jitter settings are not used).
        detectors: exported die detectors; half the copies are cut around their boxes, the
            detectors taking turns (:func:`build_cocked_bank`).
        limit: at most this many scenes per folder (smoke runs).
        real_flat: real sources (of :data:`farklecam.datasets.real.STRAIGHT_DOWN_SOURCES`) whose training photos,
            less their validation slice (which judges the test), add real flat dice.
        recipe: how the crops are cut and banked (:class:`BankRecipe`).
    """
    import torch

    from farklecam import __version__
    from farklecam.models.training.facenet import (
        FaceNet,
        LeadingOutputs,
        augment,
        class_loss,
        export_facenet,
        fit,
        grid_problem,
        scaled_widths,
        to_tensor,
    )

    start = time.monotonic()
    problem = grid_problem(recipe.crop_size, config.head_grid)
    if problem:
        raise ValueError(problem)
    missing = [str(p) for p in detectors if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"no detector at {', '.join(missing)}")
    frames = [f for folder in synthetic for f in synthetic_frames(folder, limit)]
    unknown = sorted(set(real_flat) - set(STRAIGHT_DOWN_SOURCES))
    if unknown:
        raise ValueError(f"real sources {unknown} were not shot straight down: their flat dice have no known vertical")
    frames += real_frames(real_flat, hold_validation=True)[:limit]
    detected = [detect_boxes(frames, path) for path in detectors]
    bank = build_cocked_bank(frames, config.seed, detected, recipe)
    print(  # noqa: T201 (progress for a person watching)
        f"cocked bank: {len(bank.labels)} crops ({int(bank.labels.sum())} cocked) from {len(frames)} frames"
        f" ({time.monotonic() - start:.0f} s)",
        flush=True,
    )
    torch.manual_seed(config.seed)

    def batch(idx: npt.NDArray[np.intp], rng: np.random.Generator, gen: torch.Generator) -> torch.Tensor:
        turned = _turned_centres(bank, idx, rng)
        near = torch.from_numpy(turned[..., 3:].transpose(0, 3, 1, 2) / 255.0).float() if bank.neighbours else None
        x = augment(to_tensor(turned[..., :3]), gen, flip_vertical=False, planes=near)
        steep = torch.from_numpy(bank.sines[idx]).float()[:, None, None, None].expand(-1, 1, *x.shape[2:])
        # The run-time order (farklecam.vision.pose.cocked.upright_inputs): RGB, steepness, then the neighbour plane.
        return torch.cat([x[:, :3], steep, x[:, 3:]], dim=1)

    widths = scaled_widths(config.width)
    classes = len(COCKED_TEST_NAMES)
    outputs = classes + (0 if bank.aux is None else bank.aux.shape[1])
    net = FaceNet(num_classes=outputs, widths=widths, in_channels=recipe.planes, head_grid=config.head_grid)
    loss = None
    if bank.aux is not None:
        labels, targets = torch.from_numpy(bank.labels), torch.from_numpy(bank.aux)

        def loss(out: torch.Tensor, idx: npt.NDArray[np.intp]) -> torch.Tensor:
            taught = torch.nn.functional.mse_loss(out[:, classes:], targets[idx])
            return class_loss(out[:, :classes], labels[idx]) + AUX_WEIGHT * taught

    model, stats = fit(net, bank.labels, batch, config, loss=loss)
    exported = model if outputs == classes else LeadingOutputs(model, classes)
    meta = {"threshold": str(DEFAULT_THRESHOLD), "trained_on": json.dumps([str(p) for p in synthetic])}
    if recipe.undo_foreshortening:
        meta[UNDO_FORESHORTENING_KEY] = "true"
    export_facenet(
        exported,
        out,
        __version__,
        meta,
        names=COCKED_TEST_NAMES,
        channels=recipe.planes,
        crop_size=recipe.crop_size,
        crop_context=recipe.context,
    )
    return {
        "file": out.name,
        "config": {
            "epochs": config.epochs,
            "max_steps": config.max_steps,
            "batch": config.batch,
            "lr": config.lr,
            "weight_decay": config.weight_decay,
            "mixup": config.mixup,
            "seed": config.seed,
            "flat_copies": recipe.flat_copies,
            "cocked_copies": COCKED_COPIES,
            "real_flat_copies": recipe.real_flat_copies if real_flat else 0,
            "angle_jitter_deg": ANGLE_JITTER_DEG,
            "crop_size": recipe.crop_size,
            "crop_context": recipe.context,
            "neighbour_plane": recipe.neighbours,
            "widths": list(widths),
            "head_grid": config.head_grid,
            "undo_foreshortening": recipe.undo_foreshortening,
            "misplaced_boxes": recipe.misplaced,
            "aux_targets": {"tilt_scale_deg": AUX_TILT_SCALE_DEG, "weight": AUX_WEIGHT} if recipe.aux else None,
        },
        "data": {
            "crops": len(bank.labels),
            "cocked_crops": int(bank.labels.sum()),
            "frames": len(frames),
            "folders": [str(p) for p in synthetic],
            "real_flat": list(real_flat),
        },
        "crops_around": "labelled and matched detector boxes" if detected else "labelled boxes",
        "detectors": [str(p) for p in detectors],
        "train_seconds": round(stats["seconds"], 1),
        "steps": int(stats["steps"]),
        "total_seconds": round(time.monotonic() - start, 1),
    }


def call_scores(called: npt.NDArray[np.bool_], truth: npt.NDArray[np.bool_]) -> dict[str, float]:
    """Recall, precision and F1 of cocked calls against the truth (0 where nothing is called or leaning)."""
    tp = float((called & truth).sum())
    recall = tp / max(1.0, float(truth.sum()))
    precision = tp / max(1.0, float(called.sum()))
    return {"f1": f1(recall, precision), "recall": recall, "precision": precision}


def mean_group_f1(called: npt.NDArray[np.bool_], truth: npt.NDArray[np.bool_], groups: npt.NDArray[np.int64]) -> float:
    """The mean of each group's own cocked F1 (one calibration folder per group), so sets weigh alike."""
    return float(np.mean([call_scores(called[groups == g], truth[groups == g])["f1"] for g in np.unique(groups)]))


def best_threshold(
    probs: npt.NDArray[np.float32], truth: npt.NDArray[np.bool_], groups: npt.NDArray[np.int64] | None = None
) -> tuple[float, dict[str, float]]:
    """The threshold on the cocked probability with the best F1 (ties: the higher threshold).

    With ``groups`` (one calibration folder index per row), the best mean of the groups'
    own F1 instead of the F1 of all rows together: a mostly flat set and a leaning-rich one
    then weigh alike, however many leaning dice each holds. The scores returned are over
    all rows, with ``mean_f1`` added where groups were given.
    """
    best: tuple[float, dict[str, float]] = (0.5, {"f1": -1.0, "recall": 0.0, "precision": 0.0})
    best_key = -1.0
    for t in np.round(np.arange(0.05, 0.96, 0.05), 2):
        # A Python float, as the reader holds it: compared at the probabilities' precision (float32),
        # so a die exactly at the threshold counts here as it will at run time.
        called = probs >= float(t)
        scores = call_scores(called, truth)
        key = scores["f1"]
        if groups is not None:
            key = mean_group_f1(called, truth, groups)
            scores = {**scores, "mean_f1": key}
        if key >= best_key:
            best, best_key = (float(t), scores), key
    return best


class BoxReads(NamedTuple):
    """The test's reads of labelled dice: one row per visible die."""

    probs: npt.NDArray[np.float32]  #: cocked probability
    truth: npt.NDArray[np.bool_]  #: leaning, per the labels
    boxes: npt.NDArray[np.float32]  #: (n, 4) the labelled box read, x1 y1 x2 y2 px
    paths: list[Path]  #: the scene each die is in
    #: each die's place among its scene's labelled dice (and sidecar's); the field shadows
    #: tuple.index, which no caller uses, and bench/cocked_fit_gap.py reads it by this name
    index: npt.NDArray[np.intp]  # type: ignore[assignment]


def labelled_box_probs(test: CockedTest, paths: Iterable[Path]) -> BoxReads:
    """The test's cocked probability and the truth for every visible labelled die of the scenes.

    Each die is read through its labelled box, so this measures the test alone, not the
    detector's boxes; scenes without labelled dice or a tray outline are skipped.
    """
    from farklecam.datasets.training_sets import read_synthetic_frame
    from farklecam.vision.images import load_image

    probs, truth, boxes = [np.zeros(0, np.float32)], [np.zeros(0, bool)], [np.zeros((0, 4), np.float32)]
    where: list[Path] = []
    index = [np.zeros(0, np.intp)]
    for path in paths:
        frame = read_synthetic_frame(path)
        scene = scene_view(path, frame.size, len(frame.boxes)) if frame is not None and len(frame.boxes) else None
        if frame is None or scene is None:
            continue
        view, occluded = scene
        p = test(load_image(path), frame.boxes, view)
        probs.append(p[~occluded])
        truth.append((frame.classes == COCKED_CLASS)[~occluded])
        boxes.append(frame.boxes[~occluded])
        where += [path] * int((~occluded).sum())
        index.append(np.flatnonzero(~occluded))
    return BoxReads(
        np.concatenate(probs).astype(np.float32),
        np.concatenate(truth),
        np.concatenate(boxes),
        where,
        np.concatenate(index),
    )


def choose_threshold(model: Path, dirs: Sequence[Path]) -> dict[str, float]:
    """The cocked F1-best threshold of ``model`` over the labelled dice of calibration scenes, with its scores."""
    # Every scene of the folder: calibration scenes are neither trained on nor held out.
    reads = labelled_box_probs(CockedTest(model), (p for folder in dirs for p in find_images(folder)))
    all_p, all_t = reads.probs, reads.truth
    if not len(all_t):
        raise ValueError(f"no generated scene with labelled dice and a tray outline in {', '.join(map(str, dirs))}")
    threshold, scores = best_threshold(all_p, all_t)
    return {"dice": len(all_t), "cocked": int(all_t.sum()), "threshold": threshold, **scores}


def calibrate(args: argparse.Namespace) -> int:
    """``calibrate``: print :func:`choose_threshold` and, with ``--write``, store the threshold."""
    report = choose_threshold(args.model, args.dirs)
    print(json.dumps(report))  # noqa: T201
    if args.write:
        write_threshold(args.model, report["threshold"])
    return 0


def write_threshold(model: Path, threshold: float) -> None:
    """Store the chosen threshold in the model's metadata (replacing any earlier one)."""
    set_metadata(model, "threshold", str(threshold))


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``train`` or ``calibrate``."""
    ap = argparse.ArgumentParser(prog="python -m farklecam.models.training.cocked", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("train", help="train and export the cocked test on generated scenes")
    tr.add_argument("--synthetic", type=Path, nargs="+", required=True, help="folders of generated scenes")
    tr.add_argument("--out", type=Path, required=True, help="where the ONNX file goes")
    tr.add_argument(
        "--detector",
        type=Path,
        nargs="+",
        default=[],
        help="die_detector.onnx files: bank half the copies around their boxes, the detectors taking turns",
    )
    tr.add_argument("--epochs", type=int, default=20)
    tr.add_argument("--steps", type=int, default=None, help="stop after this many steps")
    tr.add_argument("--threads", type=int, default=1)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--crop-size", type=crop_side, default=CROP_SIZE, help=f"input crop side, px (default {CROP_SIZE})")
    tr.add_argument("--width-scale", type=width_scale, default=1.0, help="factor on the channel widths (default 1)")
    tr.add_argument(
        "--context",
        type=crop_context,
        default=CROP_CONTEXT,
        help=f"context around each box in its crop, a fraction of its side per side (default {CROP_CONTEXT})",
    )
    tr.add_argument(
        "--head-grid",
        type=head_grid,
        default=1,
        metavar="N",
        help="pool the last feature map to an NxN grid before the head, so it learns where things lie (default 1)",
    )
    tr.add_argument(
        "--weight-decay", type=weight_decay, default=None, help="AdamW's weight decay (default: the classifiers')"
    )
    tr.add_argument(
        "--mixup",
        type=mixup_alpha,
        default=0.0,
        metavar="ALPHA",
        help="blend each batch with itself shuffled by a Beta(ALPHA, ALPHA) weight (default 0: off)",
    )
    tr.add_argument(
        "--real-flat",
        nargs="+",
        default=[],
        choices=STRAIGHT_DOWN_SOURCES,
        help="also learn real flat dice from these straight-down sources' training photos (not their validation ones)",
    )
    tr.add_argument(
        "--flat-copies",
        type=copy_count,
        default=FLAT_COPIES,
        metavar="N",
        help=f"crops banked per generated flat die (default {FLAT_COPIES})",
    )
    tr.add_argument(
        "--real-flat-copies",
        type=copy_count,
        default=REAL_FLAT_COPIES,
        metavar="N",
        help=f"crops banked per real flat die (default {REAL_FLAT_COPIES})",
    )
    tr.add_argument(
        "--undo-foreshortening",
        action="store_true",
        help="read crops squeezed across by the cosine of the camera's angle, so flat top faces look square",
    )
    tr.add_argument(
        "--misplaced-boxes",
        action="store_true",
        help="also bank each die around boxes placed as badly as the detector's worst (IoU 0.5-0.8 with the label)",
    )
    tr.add_argument(
        "--neighbours",
        action="store_true",
        help="a fifth input plane marks the other dice's boxes in each crop",
    )
    tr.add_argument(
        "--aux",
        action="store_true",
        help="also teach each die's tilt and hidden share on two outputs the export leaves out",
    )
    ca = sub.add_parser("calibrate", help="choose the threshold by cocked F1 on calibration scenes")
    ca.add_argument("dirs", type=Path, nargs="+", help="folders of generated scenes set apart for calibration")
    ca.add_argument("--model", type=Path, required=True)
    ca.add_argument("--write", action="store_true", help="store the threshold in the model's metadata")
    args = ap.parse_args(argv)
    if args.command == "calibrate":
        return calibrate(args)
    from farklecam.models.training.facenet import grid_problem
    from farklecam.models.training.offline import go_offline

    problem = grid_problem(args.crop_size, args.head_grid)
    if problem:
        ap.error(problem)
    go_offline()
    config = ClassifierConfig(
        epochs=args.epochs,
        max_steps=args.steps,
        threads=args.threads,
        seed=args.seed,
        width=args.width_scale,
        head_grid=args.head_grid,
        mixup=args.mixup,
    )
    if args.weight_decay is not None:
        config = dataclasses.replace(config, weight_decay=args.weight_decay)
    if config.mixup > 0 and args.aux:
        ap.error("--mixup blends the class loss only; it cannot be combined with --aux")
    try:
        record = train_cocked(
            args.synthetic,
            args.out,
            config,
            detectors=args.detector,
            real_flat=args.real_flat,
            recipe=BankRecipe(
                crop_size=args.crop_size,
                context=args.context,
                flat_copies=args.flat_copies,
                real_flat_copies=args.real_flat_copies,
                undo_foreshortening=args.undo_foreshortening,
                misplaced=args.misplaced_boxes,
                neighbours=args.neighbours,
                aux=args.aux,
            ),
        )
    except FileNotFoundError as exc:  # a detector or folder that is not there: one usage line
        ap.error(str(exc))
    print(json.dumps(record), flush=True)  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
