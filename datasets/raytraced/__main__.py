"""``python -m farklecam.datasets.raytraced --out DIR --count N --seed S``: write raytraced scenes as a YOLO folder.

``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` and ``OUT/labels/NAME.json`` (the
sidecar), scene ``i`` of seed ``s`` named ``r{s}_{i:06d}``; scenes whose sidecar is already
there are skipped, so an interrupted run resumes where it stopped. ``READY`` is written
once every scene of the run is there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from farklecam.datasets.cli_args import positive
from farklecam.datasets.raytraced.scene import generate_scene
from farklecam.datasets.scene_run import add_run_arguments, write_run
from farklecam.datasets.scene_run import scene_name as run_scene_name

__all__ = ["main", "scene_name"]

#: Raytraced scenes are ``r{seed}_{index:06d}``.
PREFIX = "r"


def scene_name(seed: int, index: int) -> str:
    """File base name of a scene (``r`` for raytraced, so names never clash with the pybullet ``s`` scenes)."""
    return run_scene_name(PREFIX, seed, index)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the run; returns the exit status (2 when mitsuba is missing)."""
    parser = argparse.ArgumentParser(prog="python -m farklecam.datasets.raytraced", description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--spp", type=positive, default=25, help="samples per pixel, rounded up to a square (25)")
    args = parser.parse_args(argv)
    try:
        import mitsuba  # noqa: F401
    except ImportError:
        sys.stderr.write("error: mitsuba is not installed: pip install -e '.[train]' (or mitsuba==3.9.1)\n")
        return 2
    return write_run(
        args, PREFIX, lambda i: generate_scene(args.seed, i, args.width, args.height, args.spp), f"spp={args.spp}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
