"""``python -m farklecam.datasets.blender --out DIR --count N --seed S``: write Blender scenes as a YOLO folder.

Run it with the Blender venv's interpreter (``scripts/blender_venv.sh``), from the repo
root: ``.venv-blender/bin/python -m farklecam.datasets.blender ...``. Same layout as
``python -m farklecam.datasets.raytraced``: ``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` and
``OUT/labels/NAME.json`` (the sidecar, written last), scene ``i`` of seed ``s`` named
``b{s}_{i:06d}``; scenes whose sidecar is already there are skipped, so an interrupted
run resumes where it stopped. ``READY`` is written once every scene of the run is there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from farklecam.datasets.cli_args import positive
from farklecam.datasets.scene_run import add_run_arguments, write_run
from farklecam.datasets.scene_run import scene_name as run_scene_name

__all__ = ["main", "scene_name"]

#: Blender scenes are ``b{seed}_{index:06d}``.
PREFIX = "b"


def scene_name(seed: int, index: int) -> str:
    """File base name of a scene (``b`` for Blender: never clashes with the ``s`` and ``r`` scenes)."""
    return run_scene_name(PREFIX, seed, index)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the run; returns the exit status (2 when bpy is missing)."""
    parser = argparse.ArgumentParser(prog="python -m farklecam.datasets.blender", description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--samples", type=positive, default=16, help="Cycles samples per pixel, denoised (16)")
    parser.add_argument("--threads", type=positive, default=1, help="Cycles render threads (1)")
    args = parser.parse_args(argv)
    try:
        import bpy  # noqa: F401
    except ImportError:
        sys.stderr.write(
            "error: bpy is not installed in this interpreter: make the Blender venv with "
            "scripts/blender_venv.sh and run .venv-blender/bin/python -m farklecam.datasets.blender\n"
        )
        return 2
    from farklecam.datasets.blender.scene import generate_scene

    return write_run(
        args,
        PREFIX,
        lambda i: generate_scene(args.seed, i, args.width, args.height, args.samples, args.threads),
        f"samples={args.samples}",
    )


if __name__ == "__main__":
    raise SystemExit(main())
