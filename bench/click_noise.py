"""How far off is the camera's vertical when a person clicks the tray's corners? Against the renderer's camera.

    python bench/click_noise.py DIR... [--noise PX ...] [--sigma PX ...]

For each generated scene (sidecars hold the floor's true corners and the
renderer's camera), the corners are moved at random by each ``--noise`` (a
standard deviation in pixels, the same moves every run) and the vertical is
drawn from them (:func:`vision.upright.upright_view`) assuming each ``--sigma``
(the corner error the focal length's estimate is weighed against; 0 trusts it
as it is). Prints the angle between that vertical and the camera's true one:
median, 90th and 95th percentile and largest, in degrees.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from vision.upright import upright_view


def true_vertical(camera: dict[str, list[float]]) -> np.ndarray | None:
    """World down (-z) in the camera's frame (x right, y down, z forward), from the sidecar's eye and target."""
    eye, target = np.asarray(camera["eye"], np.float64), np.asarray(camera["target"], np.float64)
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    if np.linalg.norm(right) < 1e-9:
        return None  # looking straight down: the renderer's up vector is undefined
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    down = np.array([-right[2], up[2], -forward[2]])
    return down / np.linalg.norm(down)


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+", help="generated scenes with sidecars")
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0, 2.0, 4.0], help="corner noise, px")
    parser.add_argument("--sigma", type=float, nargs="+", default=[0.0, 2.0], help="assumed corner error, px")
    args = parser.parse_args(argv)
    scenes = []
    for folder in args.dirs:
        for sidecar in sorted((folder / "labels").glob("*.json")):
            labels = json.loads(sidecar.read_text())
            truth = true_vertical(labels["camera"]) if labels.get("tray") and labels.get("camera") else None
            if truth is not None:
                scenes.append((np.asarray(labels["tray"], np.float64), tuple(labels["size"]), truth))
    print(f"{len(scenes)} scenes")
    print(f"{'noise px':>8} {'sigma px':>8} {'median':>7} {'p90':>6} {'p95':>6} {'max':>6}  (degrees)")
    for noise in args.noise:
        rng = np.random.default_rng(0)
        moved = [(corners + rng.normal(0, noise, corners.shape), size, truth) for corners, size, truth in scenes]
        for sigma in args.sigma:
            errors = [
                view.angle_to(truth)
                for corners, size, truth in moved
                if (view := upright_view(corners, size, sigma)) is not None
            ]
            e = np.asarray(errors)
            print(
                f"{noise:8.1f} {sigma:8.1f} {np.median(e):7.2f} {np.percentile(e, 90):6.2f} "
                f"{np.percentile(e, 95):6.2f} {e.max():6.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
