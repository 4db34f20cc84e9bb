"""What decides a face-classifier training run: one frozen dataclass, apart from torch.

The crop bank, the training loop, the cocked and pose trainers and the command line
all read it; keeping it free of torch lets each import it at the top without
pulling the training stack in (and without the import loop it once closed).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ClassifierConfig"]


@dataclass(frozen=True)
class ClassifierConfig:
    """Everything that decides a classifier training run.

    Attributes:
        epochs: passes over the crop bank (each with fresh augmentation).
        batch: crops per step.
        lr: peak learning rate of the one-cycle schedule (AdamW).
        weight_decay: AdamW weight decay.
        mixup: alpha of mixup's Beta(alpha, alpha) blend of each batch with itself shuffled (0: off).
        real_jitters: jittered crops banked per real die (the real photos are few).
        synth_jitters: jittered crops banked per generated die.
        cocked_jitters: jittered crops banked per cocked die (rare in generated scenes, absent from real).
        negative_jitters: jittered crops banked per mined detector false alarm ("not_die").
        background_boxes: die-sized patches clear of every die banked per frame ("not_die").
        shift: box centre jitter, fraction of the box side (standard deviation).
        scale: box size jitter, log-normal standard deviation.
        streaks: share of training crops given marble streaks (:mod:`farklecam.models.bank.marbling`).
        motion_blur: share of training crops smeared along a line (:mod:`farklecam.models.bank.motion_blur`).
        width: factor on the network's channel widths (:func:`farklecam.models.training.facenet.scaled_widths`).
        head_grid: side of the grid the last feature map is pooled to before the linear head
            (:class:`farklecam.models.training.facenet.FaceNet`; 1 is a global average pool).
        seed: seed for jitter, augmentation, initialisation and batch order.
        max_steps: stop after this many steps (smoke tests); None trains every epoch.
        threads: torch CPU threads.
    """

    epochs: int = 12
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4
    mixup: float = 0.0
    real_jitters: int = 8
    synth_jitters: int = 2
    cocked_jitters: int = 10
    negative_jitters: int = 4
    background_boxes: int = 1
    shift: float = 0.06
    scale: float = 0.1
    streaks: float = 0.0
    motion_blur: float = 0.0
    width: float = 1.0
    head_grid: int = 1
    seed: int = 0
    max_steps: int | None = None
    threads: int = 1
