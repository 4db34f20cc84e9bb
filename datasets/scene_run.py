"""A resumable run of generated scenes: the command line and the loop the path-traced generators share.

Scene ``i`` of seed ``s`` is written as ``{prefix}{s}_{i:06d}`` (the prefix keeps the
generators' names apart: ``r`` raytraced, ``b`` Blender, ``s`` pybullet), sidecar last, so a
scene whose sidecar exists is done and is skipped when the run starts again; ``READY``
says the whole run is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.datasets.cli_args import non_negative, positive
from farklecam.datasets.yolo import YoloBox, write_example

__all__ = ["GeneratedScene", "add_run_arguments", "scene_name", "write_run"]

READY_FILE = "READY"


@dataclass(frozen=True, slots=True)
class GeneratedScene:
    """One rendered scene: the photo (BGR ``uint8``), its YOLO boxes and its sidecar dictionary."""

    image: npt.NDArray[np.uint8]
    boxes: list[YoloBox]
    sidecar: dict[str, Any]


def scene_name(prefix: str, seed: int, index: int) -> str:
    """File base name of scene ``index`` of run ``seed``."""
    return f"{prefix}{seed}_{index:06d}"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``--out``, ``--count``, ``--seed``, ``--start``, ``--width`` and ``--height``."""
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=positive, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=non_negative, default=0)
    parser.add_argument("--width", type=positive, default=640)
    parser.add_argument("--height", type=positive, default=480)


def write_run(args: argparse.Namespace, prefix: str, generate: Callable[[int], GeneratedScene], settings: str) -> int:
    """Write scenes ``args.start`` .. ``+ args.count`` of ``args.seed`` into ``args.out``; returns 0.

    ``generate(index)`` makes one scene; ``settings`` (the renderer's own options) goes into
    ``READY`` beside the run's seed, range and size.
    """
    written, seconds = 0, 0.0
    for i in range(args.start, args.start + args.count):
        name = scene_name(prefix, args.seed, i)
        if (args.out / "labels" / f"{name}.json").exists():
            continue
        start = time.perf_counter()
        scene = generate(i)
        write_example(args.out, name, scene.image, scene.boxes, scene.sidecar)  # the sidecar last marks it done
        seconds += time.perf_counter() - start
        written += 1
        dice = scene.sidecar["dice"]
        sys.stderr.write(
            f"{name}: {len(dice)} dice ({sum(d['status'] == 'cocked' for d in dice)} cocked); "
            f"{written} written, {seconds / written:.1f} s per scene\n"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / READY_FILE).write_text(
        f"seed={args.seed} start={args.start} count={args.count} {settings} size={args.width}x{args.height}\n"
    )
    return 0
