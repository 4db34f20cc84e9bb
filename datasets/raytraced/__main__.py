"""``python -m datasets.raytraced --out DIR --count N --seed S``: write raytraced scenes as a YOLO folder.

``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` and ``OUT/labels/NAME.json`` (the
sidecar), scene ``i`` of seed ``s`` named ``r{s}_{i:06d}``; scenes whose sidecar is already
there are skipped, so an interrupted run resumes where it stopped. ``READY`` is written
once every scene of the run is there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2

from datasets.raytraced.scene import RayScene, generate_scene
from datasets.yolo import write_labels

__all__ = ["main", "scene_name", "write_scene"]


def scene_name(seed: int, index: int) -> str:
    """File base name of a scene (``r`` for raytraced, so names never clash with the pybullet ``s`` scenes)."""
    return f"r{seed}_{index:06d}"


def write_scene(out: Path, name: str, scene: RayScene) -> Path:
    """Write one scene's JPEG, YOLO labels and sidecar (the sidecar last: it marks the scene done)."""
    image = out / "images" / f"{name}.jpg"
    image.parent.mkdir(parents=True, exist_ok=True)
    quality = int(scene.sidecar.get("post", {}).get("jpeg_quality", 90))
    cv2.imwrite(str(image), scene.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    write_labels(out / "labels" / f"{name}.txt", scene.boxes)
    (out / "labels" / f"{name}.json").write_text(json.dumps(scene.sidecar, indent=1))
    return image


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Write the run; returns the exit status (2 when mitsuba is missing)."""
    parser = argparse.ArgumentParser(prog="python -m datasets.raytraced", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=_positive, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--width", type=_positive, default=640)
    parser.add_argument("--height", type=_positive, default=480)
    parser.add_argument("--spp", type=_positive, default=25, help="samples per pixel, rounded up to a square (25)")
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
        write_scene(args.out, name, generate_scene(args.seed, i, args.width, args.height, args.spp))
        seconds += time.perf_counter() - start
        written += 1
        sys.stderr.write(f"{name}: {written} written, {seconds / written:.1f} s per scene\n")
    (args.out / "READY").write_text(
        f"seed={args.seed} start={args.start} count={args.count} spp={args.spp} size={args.width}x{args.height}\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
