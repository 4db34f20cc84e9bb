"""``farklecam read VIDEO --json`` on generated game videos, judged against their truth.

    python bench/read_videos.py VIDEO... [--models DIR] [--why]

Runs the command a user runs on each video (the real models, one JSON line per
throw) and judges its lines with :func:`tables.score_reports`: a throw is right when
its first reading after the dice came to rest has the true faces and rethrow count
(a die less than half in view may be in it or not, unless ``--count-occluded``);
any other reading is extra. Prints one line per video and the totals: throws right
of throws, and readings made. The truth is the generator's
(``python -m farklecam.datasets.synthetic.throw_videos``: ``NAME.json`` beside each video).

With ``--why`` it prints, for every throw not read right, what went wrong die by die
(:func:`explain_throw`): each true die matched to the reading's box over it, and what
the reading said of it (another face, ``uncertain``, another status, no box), with
the die's size in pixels and the sharpness of its crop in the frame that was
reported (variance of the Laplacian of its grey pixels; a die at rest in a webcam
frame is well over 100, a blurred one under 50).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from tables import COUNT_OCCLUDED_HELP, judge_reports, right_answers, score_reports

__all__ = ["explain_throw", "main", "sharpness"]


def sharpness(image: np.ndarray, box: list[float]) -> float:
    """Variance of the Laplacian of the grey pixels inside ``box`` (xyxy): how sharp the die's crop is."""
    x1, y1, x2, y2 = (round(v) for v in box)
    crop = image[max(y1, 0) : max(y2, 1), max(x1, 0) : max(x2, 1)]
    if crop.size == 0:
        return 0.0
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    return float(cv2.Laplacian(grey, cv2.CV_64F).var())


def _iou(a: list[float], b: list[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def explain_throw(
    throw: dict[str, Any], dice: list[dict[str, Any]] | None, image: np.ndarray | None = None
) -> list[str]:
    """What a reading got wrong of one throw, one phrase per wrong die (empty when every die is right).

    Args:
        throw: the throw's truth (its ``labels``: box, face, status, size_px per die).
        dice: the judged reading's dice (``face``, ``box``, ``status``), or None when no reading came.
        image: the frame that was reported (BGR), to measure each die's sharpness; None leaves it out.
    """
    if dice is None:
        return ["never reported"]
    labels = throw.get("labels", [])
    pairs = sorted(
        ((_iou(t["box"], d["box"]), i, j) for i, t in enumerate(labels) for j, d in enumerate(dice)), reverse=True
    )
    match: dict[int, int] = {}
    for iou, i, j in pairs:
        if iou >= 0.3 and i not in match and j not in match.values():
            match[i] = j
    out = []
    for i, t in enumerate(labels):
        what = f"{t['face']}" if t["status"] == "ok" else t["status"]
        sharp = f", sharpness {sharpness(image, t['box']):.0f}" if image is not None else ""
        where = f"({what}, {t['size_px']:.0f} px{sharp})"
        if i not in match:
            out.append(f"{where} no box")
            continue
        d = dice[match[i]]
        said = f"{d['face']}" if d["status"] == "ok" else d["status"]
        if d["status"] == "uncertain":
            said += f" (hint {d['face']})"
        if said != what:
            out.append(f"{where} read {said}")
    out += [f"box with no die read {d['face'] if d['status'] == 'ok' else d['status']}" for j, d in
            enumerate(dice) if j not in match.values()]  # fmt: skip
    return out


def _frame(video: Path, index: int) -> np.ndarray | None:
    capture = cv2.VideoCapture(str(video))
    capture.set(cv2.CAP_PROP_POS_FRAMES, index)
    ok, image = capture.read()
    capture.release()
    return image if ok else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("videos", type=Path, nargs="+", help="game videos with NAME.json beside them")
    parser.add_argument("--models", type=Path, default=None, help="folder with the ONNX models (default: bundled)")
    parser.add_argument("--show", action="store_true", help="print each reading against its throw's truth")
    parser.add_argument("--why", action="store_true", help="print what went wrong, die by die, in each wrong throw")
    parser.add_argument("--count-occluded", action="store_true", help=COUNT_OCCLUDED_HELP)
    args = parser.parse_args(argv)
    exe = Path(sys.executable).with_name("farklecam")
    totals = [0, 0, 0, 0]  # throws, right, extra, readings
    for video in args.videos:
        truth = json.loads(video.with_suffix(".json").read_text())
        command = [str(exe), "read", str(video), "--json"] + (["--models", str(args.models)] if args.models else [])
        lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        reports = [(r["frame"], r["time"], tuple(r["reading"]["faces"]), int(r["reading"]["rethrow"])) for r in rows]
        throws, right, extra, _ = score_reports(truth, reports, count_occluded=args.count_occluded)
        for total, value in zip(range(4), (throws, right, extra, len(rows)), strict=True):
            totals[total] += value
        kind = truth["look"] + (", small dice" if truth["small_dice"] else "")
        styles = f"; dice {', '.join(truth['dice_styles'])}" if "dice_styles" in truth else ""
        print(f"{video.name}: {right}/{throws} throws right, {len(rows)} readings, {extra} extra ({kind} look{styles})")
        if args.show:
            for r in reports:
                k = truth["frames"][min(r[0], len(truth["frames"]) - 1)]["throw"]
                want = next((t for t in truth["throws"] if t["throw"] == k), None)
                said = want and (want["faces"], want["rethrow"])
                print(f"    frame {r[0]} faces {list(r[2])} rethrow {r[3]}  truth: {said}")
        if args.why:
            judged = judge_reports(truth, reports)
            for t in truth["throws"]:
                i = judged.get(int(t["throw"]))
                said = (tuple(sorted(reports[i][2])), reports[i][3]) if i is not None else None
                if said in right_answers(t, count_occluded=args.count_occluded):
                    continue
                dice = rows[i]["reading"]["dice"] if i is not None else None
                image = _frame(video, rows[i]["frame"]) if i is not None else None
                wrong = explain_throw(t, dice, image)
                if wrong:
                    events = f" [{', '.join(t['events'])}]" if t["events"] else ""
                    print(f"    throw {t['throw']}{events}: " + "; ".join(wrong))
    print(f"all: {totals[1]}/{totals[0]} throws right, {totals[3]} readings, {totals[2]} extra")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
