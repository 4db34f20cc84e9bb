"""What does a profile cost a read? The whole read with and without one, in alternating blocks.

    python bench/profile_speed.py data/eval/matteop65_webcam --taught 200 [--image PATH] [--runs 200]

A profile is taught the first ``--taught`` labelled dice of the folder (``farklecam teach``), then
one frame (the bundled ``examples/tray_ok.jpg`` unless ``--image``) is read ``--runs`` times
without and with it, the two readers taking turns read by read, so that a slow moment of a
shared machine slows both alike. Prints how long the teaching took, the median milliseconds of
each read and their ratio (the target is at most 1.1), the profile's own share (its votes on
the frame's dice), and how long a correction takes to reach the next read: a new profile is
told the frame's first die is no die, and the next read must drop it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profile_curve import teach_folder

from farklecam.datasets.yolo import find_images
from farklecam.service.cli import main as farklecam
from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore
from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, metavar="DIR", help="a YOLO folder to teach from")
    parser.add_argument("--taught", type=int, default=200)
    parser.add_argument("--image", type=Path, default=ROOT / "examples" / "tray_ok.jpg")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[PROFILES_ENV] = str(Path(tmp) / "profiles")
        teach_folder(find_images(args.folder), args.taught, Path(tmp) / "labels")
        start = time.perf_counter()
        status = farklecam(["teach", "bench", "--labels", str(Path(tmp) / "labels")])
        taught_s = time.perf_counter() - start
        if status:
            return status
        profile = ProfileStore().open("bench")
        frame = load_image(args.image)
        plain = DiceReader()
        adapted = plain.with_profile(profile)
        for reader in (plain, adapted):
            for _ in range(5):
                reader.read(frame)
        times: dict[str, list[float]] = {"without": [], "with": []}
        for _ in range(args.runs):
            for name, reader in (("without", plain), ("with", adapted)):
                start = time.perf_counter()
                reader.read(frame)
                times[name].append(1000 * (time.perf_counter() - start))
        without, with_ = statistics.median(times["without"]), statistics.median(times["with"])
        print(f"taught {len(profile)} dice in {taught_s:.1f} s (farklecam teach, models loaded included)")
        ratio = with_ / without
        print(f"read {args.image.name}: {without:.2f} ms without, {with_:.2f} ms with the profile: {ratio:.3f}x")
        assert adapted.profile is not None
        scores = plain.classifier(frame, plain.detector(frame).xyxy)
        start = time.perf_counter()
        for _ in range(args.runs):
            adapted.profile.adapt(scores)
        each = 1000 * (time.perf_counter() - start) / args.runs
        print(f"the profile's votes on {len(scores.face)} dice: {each:.3f} ms")
        fresh = plain.with_profile(ProfileStore().open_or_create("fresh"))
        assert fresh.profile is not None
        before = fresh.read(frame)
        start = time.perf_counter()
        fresh.profile.correct(frame, before.xyxy[:1], ["not_die"])
        after = fresh.read(frame)
        print(
            f"a correction reached the next read {1000 * (time.perf_counter() - start):.0f} ms after it was given "
            f"(correction and read): {len(before)} dice before, {len(after)} after"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
