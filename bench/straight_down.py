"""How far off straight down may a camera be that is said to look straight down? Per band of its true tilt.

    python bench/straight_down.py DIR... [--models DIR] [--limit N] [--band DEG] [--check DEG...]

``ReaderConfig.straight_down`` (``farklecam read --straight-down``) takes the
picture's centre as the nadir, so the cocked test runs without marked tray
corners. A camera that is in fact tilted shows flat dice's sides where the
test expects none. On generated scenes (their sidecars hold the renderer's
camera), each die on the tray is read with that setting and counted by how far
the camera looked off straight down: flat dice called cocked, and leaning dice
found. A benchmark of a setting, not a test: the rate depends on the models.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from farklecam.datasets.yolo import find_images, read_sidecar
from farklecam.models.evaluate.metrics import COCKED_CLASS, ImageLabels, match_by_centre
from farklecam.models.evaluate.run import load_labels
from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader, ReaderConfig
from farklecam.vision.reading import Reading


def camera_tilt_deg(camera: dict[str, list[float]]) -> float:
    """Angle between the renderer's line of sight (eye to target) and straight down, in degrees."""
    eye, target = np.asarray(camera["eye"], np.float64), np.asarray(camera["target"], np.float64)
    forward = (target - eye) / np.linalg.norm(target - eye)
    return float(np.degrees(np.arccos(np.clip(-forward[2], -1.0, 1.0))))


@dataclasses.dataclass
class Band:
    """Dice on the tray under cameras of one tilt band, read with one setup."""

    scenes: int = 0
    doubted: int = 0
    flat: int = 0
    flat_called: int = 0
    cocked: int = 0
    cocked_found: int = 0


def tally(band: Band, reading: Reading, labels: ImageLabels) -> None:
    """Add one scene's dice on the tray to ``band``: flat dice called cocked, leaning dice found."""
    band.scenes += 1
    band.doubted += int(reading.straight_down_doubted)
    for i, j in match_by_centre(reading.xyxy, labels.xyxy):
        if labels.off_tray is not None and labels.off_tray[j]:
            continue  # off the tray a die is rethrown whatever it shows
        called = reading.status[i] == "cocked"
        if labels.classes[j] == COCKED_CLASS:
            band.cocked, band.cocked_found = band.cocked + 1, band.cocked_found + int(called)
        else:
            band.flat, band.flat_called = band.flat + 1, band.flat_called + int(called)


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+", help="generated scenes with sidecars")
    parser.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many scenes per folder")
    parser.add_argument("--band", type=float, default=5.0, help="width of a tilt band, degrees")
    parser.add_argument(
        "--check",
        type=float,
        nargs="*",
        default=[],
        metavar="DEG",
        help="also read with ReaderConfig.straight_down_check_deg at each of these angles",
    )
    args = parser.parse_args(argv)
    base = DiceReader(args.models, config=ReaderConfig(straight_down=True, straight_down_check_deg=None))
    readers = {"as said": base}
    for deg in args.check:
        config = dataclasses.replace(base.config, straight_down_check_deg=deg)
        readers[f"check {deg:g}"] = DiceReader(args.models, config=config)
    bands: dict[str, dict[int, Band]] = {name: {} for name in readers}
    for folder in args.dirs:
        for path in find_images(folder)[: args.limit]:
            camera = read_sidecar(path).get("camera")
            if camera is None:
                continue
            frame = load_image(path)
            labels = load_labels(path, frame.shape[1], frame.shape[0])
            index = int(camera_tilt_deg(camera) // args.band)
            for name, reader in readers.items():
                tally(bands[name].setdefault(index, Band()), reader.read(frame), labels)
    header = f"{'camera tilt':>12} {'scenes':>6} {'flat':>5} {'leaning':>7}"
    header += "".join(f" | {name + ': called':>16} {'share':>6} {'found':>5} {'doubted':>7}" for name in readers)
    print(header)
    for index in sorted(bands["as said"]):
        first = bands["as said"][index]
        row = f"{f'{index * args.band:.0f}-{(index + 1) * args.band:.0f} deg':>12} {first.scenes:6d}"
        row += f" {first.flat:5d} {first.cocked:7d}"
        for name in readers:
            b = bands[name][index]
            share = b.flat_called / b.flat if b.flat else float("nan")
            row += f" | {b.flat_called:16d} {share:6.3f} {b.cocked_found:5d} {b.doubted:7d}"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
