"""``farklecam read VIDEO --json`` on generated game videos, judged against their truth.

    python bench/read_videos.py VIDEO... [--models DIR]

Runs the command a user runs on each video (the real models, one JSON line per
throw) and judges its lines with :func:`tables.score_reports`: a throw is right when
its first reading after the dice came to rest has the true faces and rethrow count;
any other reading is extra. Prints one line per video and the totals: throws right
of throws, and readings made. The truth is the generator's
(``python -m datasets.synthetic.throw_videos``: ``NAME.json`` beside each video).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from tables import score_reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("videos", type=Path, nargs="+", help="game videos with NAME.json beside them")
    parser.add_argument("--models", type=Path, default=None, help="folder with the ONNX models (default: bundled)")
    parser.add_argument("--show", action="store_true", help="print each reading against its throw's truth")
    args = parser.parse_args(argv)
    exe = Path(sys.executable).with_name("farklecam")
    totals = [0, 0, 0, 0]  # throws, right, extra, readings
    for video in args.videos:
        truth = json.loads(video.with_suffix(".json").read_text())
        command = [str(exe), "read", str(video), "--json"] + (["--models", str(args.models)] if args.models else [])
        lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        reports = [(r["frame"], r["time"], tuple(r["reading"]["faces"]), int(r["reading"]["rethrow"])) for r in rows]
        throws, right, extra, _ = score_reports(truth, reports)
        for total, value in zip(range(4), (throws, right, extra, len(rows)), strict=True):
            totals[total] += value
        kind = truth["look"] + (", small dice" if truth["small_dice"] else "")
        print(f"{video.name}: {right}/{throws} throws right, {len(rows)} readings, {extra} extra ({kind} look)")
        if args.show:
            for r in reports:
                k = truth["frames"][min(r[0], len(truth["frames"]) - 1)]["throw"]
                want = next((t for t in truth["throws"] if t["throw"] == k), None)
                said = want and (want["faces"], want["rethrow"])
                print(f"    frame {r[0]} faces {list(r[2])} rethrow {r[3]}  truth: {said}")
    print(f"all: {totals[1]}/{totals[0]} throws right, {totals[3]} readings, {totals[2]} extra")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
