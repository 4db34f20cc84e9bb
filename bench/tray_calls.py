"""Off-tray calls and tray verdicts as a player meets them: nothing marked, the tray found in each picture.

    python bench/tray_calls.py DIR [DIR ...] [--limit N] [--models DIR]

Each folder holds ``images/`` (a YOLO folder, such as ``data/eval/byler_d6``). Per folder it prints the
images, the dice, the dice called ``off_tray``, the images with any such call, and how many images
read each tray verdict (``Reading.tray_state``: marked / found / unsure / none). The real photos have
no labels for off-tray dice (none of them shows one), so every call there is a false one; the
generated scenes' recall and precision come from ``python -m farklecam.models.evaluate --no-tray``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.vision.camera.sources import ImageFolderSource
from farklecam.vision.reader import DiceReader
from farklecam.vision.reading import DieStatus


def tally(reader: DiceReader, folder: Path, limit: int | None) -> dict[str, object]:
    """Read every image of ``folder/images`` and count its off-tray calls and tray verdicts."""
    states: Counter[str] = Counter()
    images = dice = calls = images_with_calls = 0
    with ImageFolderSource(folder / "images") as source:
        for frame in source:
            if limit is not None and images >= limit:
                break
            images += 1
            reading = reader.read(frame.image)
            off = int((reading.status == DieStatus.OFF_TRAY).sum())
            dice += len(reading)
            calls += off
            images_with_calls += int(off > 0)
            states[str(getattr(reading, "tray_state", "?"))] += 1
    return {
        "images": images,
        "dice": dice,
        "off_tray": calls,
        "images_with_off_tray": images_with_calls,
        **{f"tray_{k}": v for k, v in sorted(states.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="read at most this many images per folder")
    parser.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    args = parser.parse_args(argv)
    reader = DiceReader(args.models)
    for folder in args.dirs:
        row = tally(reader, folder, args.limit)
        print(folder, " ".join(f"{k}={v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
