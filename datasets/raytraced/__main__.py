"""``python -m datasets.raytraced --out DIR --count N --seed S``: write raytraced scenes as a YOLO folder.

``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` and ``OUT/labels/NAME.json`` (the
sidecar), scene ``i`` of seed ``s`` named ``r{s}_{i:06d}``; scenes whose sidecar is already
there are skipped, so an interrupted run resumes where it stopped. ``READY`` is written
once every scene of the run is there.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from datasets.cli_args import non_negative, positive
from datasets.raytraced.scene import generate_scene
from datasets.yolo import write_example

__all__ = ["main", "scene_name"]


def scene_name(seed: int, index: int) -> str:
    """File base name of a scene (``r`` for raytraced, so names never clash with the pybullet ``s`` scenes)."""
    return f"r{seed}_{index:06d}"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the run; returns the exit status (2 when mitsuba is missing)."""
    parser = argparse.ArgumentParser(prog="python -m datasets.raytraced", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=positive, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=non_negative, default=0)
    parser.add_argument("--width", type=positive, default=640)
    parser.add_argument("--height", type=positive, default=480)
    parser.add_argument("--spp", type=positive, default=25, help="samples per pixel, rounded up to a square (25)")
    args = parser.parse_args(argv)
    try:
        import mitsuba  # noqa: F401
    except ImportError:
        sys.stderr.write("error: mitsuba is not installed: pip install -e '.[train]' (or mitsuba==3.9.1)\n")
        return 2
    written, seconds = 0, 0.0
    for i in range(args.start, args.start + args.count):
        name = scene_name(args.seed, i)
        if (args.out / "labels" / f"{name}.json").exists():
            continue
        start = time.perf_counter()
        scene = generate_scene(args.seed, i, args.width, args.height, args.spp)
        write_example(args.out, name, scene.image, scene.boxes, scene.sidecar)  # the sidecar last marks it done
        seconds += time.perf_counter() - start
        written += 1
        sys.stderr.write(f"{name}: {written} written, {seconds / written:.1f} s per scene\n")
    (args.out / "READY").write_text(
        f"seed={args.seed} start={args.start} count={args.count} spp={args.spp} size={args.width}x{args.height}\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
