"""How far off is the camera's vertical when a person clicks the tray's corners? Against the renderer's camera.

    python bench/click_noise.py DIR... [--noise PX ...] [--sigma PX ...]

For each generated scene (sidecars hold the floor's true corners and the
renderer's camera), the corners are moved at random by each ``--noise`` (a
standard deviation in pixels, the same moves every run) and the vertical is
drawn from them (:func:`farklecam.vision.pose.upright.upright_view`) assuming each ``--sigma``
(the corner error the focal length's estimate is weighed against; 0 trusts it
as it is). Prints the angle between that vertical and the camera's true one:
median, 90th and 95th percentile and largest, in degrees. ``--known-focal F``
gives the vertical the renderer's own focal length times F instead of an
estimate (1: a camera whose field of view is known exactly; 1.1: known 10 %
wrong), as ``"known xF"`` rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from farklecam.vision.pose.upright import upright_view


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


def _focal(camera: dict[str, float], size: tuple[int, int], factor: float | None) -> float | None:
    """The renderer's focal length in pixels (its field of view is vertical) times ``factor``; None without one."""
    if factor is None:
        return None
    return factor * size[1] / 2 / float(np.tan(np.radians(camera["fov_deg"]) / 2))


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+", help="generated scenes with sidecars")
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0, 2.0, 4.0], help="corner noise, px")
    parser.add_argument("--sigma", type=float, nargs="+", default=[0.0, 2.0], help="assumed corner error, px")
    parser.add_argument(
        "--known-focal", type=float, nargs="*", default=[], metavar="F", help="the true focal length times F"
    )
    args = parser.parse_args(argv)
    scenes = []
    for folder in args.dirs:
        for sidecar in sorted((folder / "labels").glob("*.json")):
            labels = json.loads(sidecar.read_text())
            truth = true_vertical(labels["camera"]) if labels.get("tray") and labels.get("camera") else None
            if truth is not None:
                scenes.append((np.asarray(labels["tray"], np.float64), tuple(labels["size"]), truth, labels["camera"]))
    print(f"{len(scenes)} scenes")
    print(f"{'noise px':>8} {'sigma px':>10} {'median':>7} {'p90':>6} {'p95':>6} {'max':>6}  (degrees)")
    for noise in args.noise:
        rng = np.random.default_rng(0)
        moved = [(c + rng.normal(0, noise, c.shape), size, truth, cam) for c, size, truth, cam in scenes]
        rows: list[tuple[str, float, float | None]] = [(f"{sigma:10.1f}", sigma, None) for sigma in args.sigma]
        rows += [(f"known x{f:g}".rjust(10), max(noise, 0.5), f) for f in args.known_focal]
        for label, sigma, factor in rows:
            errors = [
                view.angle_to(truth)
                for corners, size, truth, camera in moved
                if (view := upright_view(corners, size, sigma, _focal(camera, size, factor))) is not None
            ]
            e = np.asarray(errors)
            print(
                f"{noise:8.1f} {label} {np.median(e):7.2f} {np.percentile(e, 90):6.2f} "
                f"{np.percentile(e, 95):6.2f} {e.max():6.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
