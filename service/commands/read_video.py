"""``farklecam read`` on a video: one report per throw, with its frame number and time."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from farklecam.scoring.rules import Rules
from farklecam.service.usecases.report import build_report
from farklecam.service.video_throws import read_video as throws_in_video
from farklecam.vision.pose.view_search import VerticalMemory
from farklecam.vision.reader import DiceReader

__all__ = ["read_video"]


def read_video(path: Path, reader: DiceReader, rules: Rules, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """Yield each settled throw of the video as the same report a photo gets, plus throw/frame/time.

    With ``--out`` the annotated video is written beside the annotated photos as ``NAME.annotated.mp4``.

    Raises:
        CameraError: the video cannot be opened or read, or the annotated copy cannot be written.
    """
    out = args.out / f"{path.stem}.annotated.mp4" if args.out is not None else None
    reader = reader.with_vertical_memory(VerticalMemory())  # one camera per video: learn its vertical once
    for result in throws_in_video(path, reader, out=out, progress=sys.stderr.isatty()):
        report = build_report(result.reading, rules, turn_total=args.turn_total, on_board=args.on_board)
        row = {
            "image": str(path),
            "throw": result.throw,
            "frame": result.frame_index,
            "time": round(result.timestamp, 3),
        }
        if out is not None:
            row["annotated"] = str(out)
        yield row | report.model_dump(mode="json")
