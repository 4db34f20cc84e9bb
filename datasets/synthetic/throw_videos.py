"""Write game videos for the live-play benchmarks: ``python -m farklecam.datasets.synthetic.throw_videos OUT``.

Each video is :func:`~farklecam.datasets.synthetic.sequence.render_game_video` written as
``OUT/game_NN.mp4`` (640x480, 15 fps, ``mp4v``) with ``OUT/game_NN.json`` beside it:
the truth per throw (:class:`~farklecam.datasets.synthetic.sequence.ThrowTruth`), what the
video holds, and each frame's phase. The JSON is written last, so an interrupted
run resumes at the first video without one (rendering is the slow part: about
0.6 s of CPU a frame, each rendered at twice the size; 6 minutes a video), and
``--first``/``--videos`` split a run over cores. Videos cycle through four kinds:
the training look, a look the reader did not train on
(:func:`~farklecam.datasets.synthetic.sequence.unseen_look`), small dice with that look, and
small dice with the training look.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from farklecam.datasets.synthetic.sequence import ThrowTruth, render_game_video
from farklecam.vision.camera.sources import VideoSink

__all__ = ["KINDS", "main", "write_game_video"]

#: (unseen look, small dice) of video ``i`` is ``KINDS[i % 4]``.
KINDS: tuple[tuple[bool, bool], ...] = ((False, False), (True, False), (True, True), (False, True))


def write_game_video(
    path: Path, seed: int, *, throws: int, unseen: bool, small_dice: bool, fps: float = 15.0
) -> dict[str, Any]:
    """Render one game video to ``path`` (``.mp4``) and its truth beside it (``.json``); returns the truth."""
    truths: list[ThrowTruth] = []
    frames: list[dict[str, Any]] = []
    meta: dict[str, Any] = {}
    size = (640, 480)
    with VideoSink(path, fps, size) as sink:
        for image, sidecar in render_game_video(
            seed, throws=throws, width=size[0], height=size[1], fps=fps, small_dice=small_dice, unseen=unseen,
            truths=truths, meta=meta,
        ):  # fmt: skip
            sink.write(image)
            frames.append({"phase": sidecar["phase"], "throw": sidecar["throw"], "bad": sidecar["bad"]})
    truth = {
        "video": path.name,
        "seed": seed,
        "fps": fps,
        "size": list(size),
        "look": "unseen" if unseen else "trained",
        "small_dice": small_dice,
        **meta,
        "throws": [t.to_dict() for t in truths],
        "frames": frames,
    }
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(truth))
    partial.replace(path.with_suffix(".json"))
    return truth


def main(argv: list[str] | None = None) -> int:
    """Write the videos that are missing; print one line per video."""
    parser = argparse.ArgumentParser(prog="python -m farklecam.datasets.synthetic.throw_videos", description=__doc__)
    parser.add_argument("out", type=Path, help="folder for the videos (data/throw_videos is git-ignored)")
    parser.add_argument("--videos", type=int, default=4, help="how many videos (default 4)")
    parser.add_argument("--throws", type=int, default=6, help="throws per video (default 6)")
    parser.add_argument("--seed", type=int, default=31, help="seed of video 0; video i uses seed + i")
    parser.add_argument("--first", type=int, default=0, help="index of the first video to write (split a run)")
    args = parser.parse_args(argv)
    if args.videos < 1 or args.throws < 1:
        sys.stderr.write("error: --videos and --throws must be at least 1\n")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for i in range(args.first, args.videos):
        path = args.out / f"game_{i:02d}.mp4"
        if path.with_suffix(".json").exists():
            sys.stdout.write(f"{path}: done before, kept\n")
            continue
        unseen, small = KINDS[i % len(KINDS)]
        truth = write_game_video(path, args.seed + i, throws=args.throws, unseen=unseen, small_dice=small)
        kind = f"{truth['look']} look" + (", small dice" if small else "")
        sys.stdout.write(f"{path}: {len(truth['frames'])} frames, {len(truth['throws'])} throws, {kind}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
