"""``python -m datasets.blender --out DIR --count N --seed S``: write Blender scenes as a YOLO folder.

Run it with the Blender venv's interpreter (``scripts/blender_venv.sh``), from the repo
root: ``.venv-blender/bin/python -m datasets.blender ...``. Same layout as
``python -m datasets.raytraced``: ``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` and
``OUT/labels/NAME.json`` (the sidecar, written last), scene ``i`` of seed ``s`` named
``b{s}_{i:06d}``; scenes whose sidecar is already there are skipped, so an interrupted
run resumes where it stopped. ``READY`` is written once every scene of the run is there.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from datasets.cli_args import non_negative, positive
from datasets.yolo import write_example

__all__ = ["main", "scene_name"]


def scene_name(seed: int, index: int) -> str:
    """File base name of a scene (``b`` for Blender: never clashes with the ``s`` and ``r`` scenes)."""
    return f"b{seed}_{index:06d}"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the run; returns the exit status (2 when bpy is missing)."""
    parser = argparse.ArgumentParser(prog="python -m datasets.blender", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=positive, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=non_negative, default=0)
    parser.add_argument("--width", type=positive, default=640)
    parser.add_argument("--height", type=positive, default=480)
    parser.add_argument("--samples", type=positive, default=16, help="Cycles samples per pixel, denoised (16)")
    parser.add_argument("--threads", type=positive, default=1, help="Cycles render threads (1)")
    args = parser.parse_args(argv)
    try:
        import bpy  # noqa: F401
    except ImportError:
        sys.stderr.write(
            "error: bpy is not installed in this interpreter: make the Blender venv with "
            "scripts/blender_venv.sh and run .venv-blender/bin/python -m datasets.blender\n"
        )
        return 2
    from datasets.blender.scene import generate_scene

    written, seconds = 0, 0.0
    for i in range(args.start, args.start + args.count):
        name = scene_name(args.seed, i)
        if (args.out / "labels" / f"{name}.json").exists():
            continue
        start = time.perf_counter()
        scene = generate_scene(args.seed, i, args.width, args.height, args.samples, args.threads)
        write_example(args.out, name, scene.image, scene.boxes, scene.sidecar)  # the sidecar last marks it done
        seconds += time.perf_counter() - start
        written += 1
        dice = scene.sidecar["dice"]
        sys.stderr.write(
            f"{name}: {len(dice)} dice ({sum(d['status'] == 'cocked' for d in dice)} cocked), "
            f"render {scene.sidecar['render_seconds']} s; {written} written, {seconds / written:.1f} s per scene\n"
        )
    (args.out / "READY").write_text(
        f"seed={args.seed} start={args.start} count={args.count} samples={args.samples} "
        f"size={args.width}x{args.height}\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
