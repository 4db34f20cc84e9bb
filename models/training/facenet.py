"""The small crop CNN both crop networks use, and how it is trained and exported.

The face classifier (:mod:`farklecam.models.training.classifier`: faces, cocked, not a die, from
an RGB crop) and the cocked test (:mod:`farklecam.models.training.cocked`: flat or leaning, from
the crop turned upright plus a plane of the camera's angle) are the same
:class:`FaceNet` with different inputs and classes; they share the training
loop (:func:`fit`), the photometric augmentation (:func:`augment`) and the
ONNX export (:func:`export_facenet`, per ``docs/model-contract.md``).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import torch
from torch import nn
from torch.nn import functional as F

from farklecam.models.training.classifier_config import ClassifierConfig
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE

__all__ = [
    "FACENET_WIDTHS",
    "FaceNet",
    "LeadingOutputs",
    "augment",
    "class_loss",
    "export_facenet",
    "feature_side",
    "fit",
    "grid_problem",
    "scaled_widths",
    "to_tensor",
]

ModelT = TypeVar("ModelT", bound=nn.Module)

FACENET_WIDTHS: tuple[int, ...] = (16, 24, 48, 96, 128)
"""Channels of the five conv blocks at width 1 (the cocked test's; the shipped classifier's are 1.5x)."""


def scaled_widths(scale: float) -> tuple[int, ...]:
    """:data:`FACENET_WIDTHS` times ``scale``, rounded: multiply-adds grow about as ``scale`` squared."""
    return tuple(max(1, round(w * scale)) for w in FACENET_WIDTHS)


def feature_side(crop_size: int) -> int:
    """Side of :class:`FaceNet`'s last feature map for a square crop: the stride-2 conv, then three 2x2 pools."""
    side = (crop_size + 1) // 2
    for _ in range(3):
        side //= 2
    return side


def grid_problem(crop_size: int, head_grid: int) -> str | None:
    """Why a ``head_grid`` does not fit crops of ``crop_size`` px, or None when it does."""
    side = feature_side(crop_size)
    if head_grid < 1 or side % head_grid:
        return (
            f"a {head_grid}x{head_grid} head grid does not split the {side}x{side} feature map of {crop_size} px crops"
        )
    return None


class FaceNet(nn.Module):
    """Five conv blocks (conv 3x3, batch norm, ReLU), average pool, linear.

    The first conv has stride 2 and the next three end in a 2x2 max-pool
    (64 -> 32 -> 16 -> 8 -> 4 pixels): about 11 M multiply-adds per crop, so six
    crops take about a millisecond on a laptop CPU and a training step stays
    cheap on two cores. A pip (6-8 pixels in a crop) survives the first stride.

    ``head_grid`` is the side of the grid the last feature map is averaged to
    before the linear head: 1 (a global pool) keeps what the network sees and
    forgets where, which suits a face read any way up; 4 keeps each cell of the
    4x4 map apart, so the head also learns where in the crop a feature lies
    (the cocked test's crops are turned so that down is down). The final map's
    side (:func:`feature_side`) must be a multiple of it (:func:`grid_problem`),
    so that the pool exports to ONNX as a plain average pool.
    """

    def __init__(
        self,
        num_classes: int,
        widths: Sequence[int] = FACENET_WIDTHS,
        in_channels: int = 3,
        head_grid: int = 1,
    ):
        super().__init__()
        if head_grid < 1:
            raise ValueError(f"head_grid must be at least 1, but got {head_grid}")
        self.head_grid = head_grid
        layers: list[nn.Module] = []
        channels = in_channels
        for i, width in enumerate(widths):
            stride = 2 if i == 0 else 1
            layers += [
                nn.Conv2d(channels, width, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(),
            ]
            if 0 < i < len(widths) - 1:
                layers.append(nn.MaxPool2d(2))
            channels = width
        self.features = nn.Sequential(*layers)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(channels * head_grid * head_grid, num_classes)

    def forward(self, crops: torch.Tensor) -> torch.Tensor:
        """RGB crops (n, 3, 64, 64) in 0..1 -> logits (n, classes)."""
        x = self.features(crops)
        x = torch.flatten(F.adaptive_avg_pool2d(x, self.head_grid), 1)
        logits: torch.Tensor = self.head(self.dropout(x))
        return logits


class LeadingOutputs(nn.Module):
    """A network's first ``n`` outputs: what is exported of one that also learned auxiliary targets.

    A network trained to predict more than its classes (the cocked test's ``--aux``: each
    die's tilt and hidden share beside flat or cocked) keeps those outputs only to shape
    its features; the run-time contract (``docs/model-contract.md``) is one logit per class.
    """

    def __init__(self, model: nn.Module, n: int):
        super().__init__()
        self.model, self.n = model, n

    def forward(self, crops: torch.Tensor) -> torch.Tensor:
        """The wrapped network's logits, its first ``n`` outputs."""
        logits: torch.Tensor = self.model(crops)
        return logits[:, : self.n]


def class_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy with 0.05 label smoothing: the loss every crop network's classes are fitted by."""
    return F.cross_entropy(logits, labels, label_smoothing=0.05)


def to_tensor(crops: npt.NDArray[np.uint8]) -> torch.Tensor:
    """BGR uint8 crops -> RGB float tensor in 0..1, as :func:`farklecam.vision.crops.crops_to_tensor`."""
    return torch.from_numpy(np.ascontiguousarray(crops[..., ::-1])).permute(0, 3, 1, 2).float() / 255.0


def augment(
    x: torch.Tensor,
    gen: torch.Generator,
    *,
    flip_vertical: bool = True,
    flip_horizontal: bool = True,
    planes: torch.Tensor | None = None,
) -> torch.Tensor:
    """Photometric and flip augmentation of a batch: flips, colour jitter, blur, noise.

    ``flip_vertical`` False keeps up and down (crops turned so the nadir is below);
    ``flip_horizontal`` False keeps left and right (a target that a mirror changes, the pose
    network's up-axis, is flipped by its caller with its crop). The draws stay the same.
    ``planes`` (n, k, h, w), further input planes that are not colours (the cocked test's
    neighbour plane), are flipped with their crops, left otherwise as they are and
    appended after the RGB planes; the random draws are the same with or without them.
    """
    n = x.shape[0]

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen)

    flip_h = rand(n) < (0.5 if flip_horizontal else 0.0)
    x = torch.where(flip_h[:, None, None, None], x.flip(3), x)
    flip_v = rand(n) < (0.5 if flip_vertical else 0.0)
    x = torch.where(flip_v[:, None, None, None], x.flip(2), x)
    if planes is not None:
        planes = torch.where(flip_h[:, None, None, None], planes.flip(3), planes)
        planes = torch.where(flip_v[:, None, None, None], planes.flip(2), planes)
    # Brightness, contrast, per-channel gain (white balance), saturation.
    x = x * (0.6 + 0.8 * rand(n, 1, 1, 1)) * (0.85 + 0.3 * rand(n, 3, 1, 1))
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * (0.6 + 0.8 * rand(n, 1, 1, 1)) + mean
    grey = x.mean(dim=1, keepdim=True)
    x = grey + (x - grey) * (0.3 + 1.2 * rand(n, 1, 1, 1))
    # Inverted dice (light pips on dark bodies) exist; a few swapped colours help generalise.
    invert = rand(n) < 0.05
    x = torch.where(invert[:, None, None, None], 1 - x, x)
    # Blur (defocus / motion) on a third of the batch.
    blur = rand(n) < 0.3
    if blur.any():
        k = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0]) / 16
        kernel = (k[:, None] * k[None, :]).expand(3, 1, 5, 5)
        blurred = F.conv2d(F.pad(x[blur], (2, 2, 2, 2), mode="replicate"), kernel, groups=3)
        x = x.clone()
        x[blur] = blurred
    # Sensor noise.
    x = x + torch.randn(x.shape, generator=gen) * (0.04 * rand(n, 1, 1, 1))
    return x.clamp(0, 1) if planes is None else torch.cat([x.clamp(0, 1), planes], dim=1)


def _log(message: str) -> None:
    print(message, flush=True)  # noqa: T201 (training progress for a person watching, flushed for log files)


def _mixup_loss(
    model: nn.Module, x: torch.Tensor, labels: torch.Tensor, rng: np.random.Generator, alpha: float
) -> torch.Tensor:
    """The class loss of a batch blended with itself shuffled, by a Beta(alpha, alpha) weight."""
    lam = float(rng.beta(alpha, alpha))
    perm = torch.from_numpy(rng.permutation(len(labels)))
    out = model(lam * x + (1.0 - lam) * x[perm])
    return lam * class_loss(out, labels) + (1.0 - lam) * class_loss(out, labels[perm])


def fit(
    model: ModelT,
    labels_np: npt.NDArray[np.int64],
    batch: Callable[[npt.NDArray[np.intp], np.random.Generator, torch.Generator], torch.Tensor],
    config: ClassifierConfig,
    log: Callable[[str], None] | None = None,
    loss: Callable[[torch.Tensor, npt.NDArray[np.intp]], torch.Tensor] | None = None,
) -> tuple[ModelT, dict[str, float]]:
    """The training loop both crop classifiers share: AdamW, one-cycle schedule, label smoothing.

    With ``config.mixup`` > 0 each batch is blended with itself shuffled, by a weight drawn
    from Beta(alpha, alpha) on its own random stream (so the batches, jitter and augmentation
    stay those of the same run without it), and the loss is the same blend of the two
    label sets' losses (Zhang et al., 2018): a network that can no longer memorise single
    crops. Only the default class loss is blended; a custom ``loss`` with mixup is refused.

    Args:
        model: the network to train (in place).
        labels_np: class id of every banked crop.
        batch: makes the (augmented) input tensor of the crops at the given indices.
        config: epochs, batch size, learning rate, seed, threads, step limit.
        log: progress lines go here (default: printed).
        loss: the loss of the network's outputs on the crops at the given indices
            (default :func:`class_loss` on their labels); one that adds auxiliary terms.
    """
    log = log or _log
    if config.mixup > 0 and loss is not None:
        raise ValueError("mixup blends the class loss only; it cannot be combined with a custom loss")
    torch.set_num_threads(config.threads)
    mix_rng = np.random.default_rng([config.seed, 3])
    rng = np.random.default_rng(config.seed)
    gen = torch.Generator().manual_seed(config.seed)
    steps_per_epoch = max(1, math.ceil(len(labels_np) / config.batch))
    total = steps_per_epoch * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=total, pct_start=0.15)
    labels = torch.from_numpy(labels_np)
    start = time.monotonic()
    step, seen_loss = 0, 0.0
    model.train()
    while step < total:
        order = rng.permutation(len(labels_np))
        for i in range(0, len(order), config.batch):
            if step >= total:
                break
            idx = order[i : i + config.batch]
            x = batch(idx, rng, gen)
            if config.mixup > 0:
                value = _mixup_loss(model, x, labels[idx], mix_rng, config.mixup)
            else:
                value = class_loss(model(x), labels[idx]) if loss is None else loss(model(x), idx)
            opt.zero_grad()
            value.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
            opt.step()
            sched.step()
            step += 1
            seen_loss = 0.98 * seen_loss + 0.02 * value.item() if step > 1 else value.item()
            if step % steps_per_epoch == 0 or step == total:
                log(f"classifier step {step}/{total} loss {seen_loss:.4f} ({time.monotonic() - start:.0f} s)")
    model.eval()
    return model, {"steps": float(step), "seconds": time.monotonic() - start, "final_loss": seen_loss}


def export_facenet(
    model: nn.Module,
    out: Path,
    version: str,
    extra: dict[str, str] | None = None,
    *,
    names: Sequence[str],
    channels: int = 3,
    crop_size: int = CROP_SIZE,
    crop_context: float = CROP_CONTEXT,
) -> Path:
    """Export to ONNX per docs/model-contract.md: ``crops`` (n, channels, crop_size, crop_size) in, ``logits`` out.

    The batch axis is dynamic; metadata holds the class ``names`` (JSON),
    ``crop_size``, ``crop_context`` (the context the network was trained with, which the
    run-time reader cuts its crops with) and ``farklecam_version``.
    """
    import onnx

    out.parent.mkdir(parents=True, exist_ok=True)
    model = model.eval()
    dummy = torch.zeros(2, channels, crop_size, crop_size)
    # The TorchScript exporter needs no onnxscript and handles this plain CNN; torch calls it legacy.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        torch.onnx.export(
            model,
            (dummy,),
            str(out),
            input_names=["crops"],
            output_names=["logits"],
            dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
            dynamo=False,
            opset_version=17,
        )
    proto = onnx.load(str(out))
    meta = {
        "names": json.dumps(list(names)),
        "crop_size": str(crop_size),
        "crop_context": str(crop_context),
        "farklecam_version": version,
        **(extra or {}),
    }
    for key, value in meta.items():
        proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(out))
    return out
