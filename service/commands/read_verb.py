"""``farklecam read``: read dice in photos (files, folders, globs) and score them.

Each input is reported on its own; a bad file (not an image, truncated, empty,
huge) is reported and the batch goes on, so one broken photo never costs the
rest. Exit status 1 means some inputs failed.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from farklecam.errors import FarkleError, ImageError
from farklecam.scoring.rules import Rules
from farklecam.service.commands.base import (
    Command,
    add_json_flag,
    add_profile_option,
    add_rules_options,
    add_tray_option,
    add_turn_options,
    profile_from_args,
    rules_from_args,
    tray_from_args,
)
from farklecam.service.schemas import ReportPublic
from farklecam.service.usecases.report import advice_lines, build_report

if TYPE_CHECKING:  # the vision stack (OpenCV, onnxruntime) loads only when a verb reads images
    from farklecam.vision.reader import DiceReader

__all__ = ["READ", "expand_inputs"]

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}
VIDEO_SUFFIXES = {".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v"}


def expand_inputs(items: list[str]) -> Iterator[Path]:
    """Files as given, folders as the images and videos inside them, and quoted globs expanded.

    A path that does not exist, and a folder with no image or video inside, are still yielded,
    so that each is reported as an error in its place.
    """
    for item in items:
        path = Path(item)
        if path.is_dir():
            inside = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES | VIDEO_SUFFIXES
            )
            yield from inside or [path]
        elif not path.exists() and glob.has_magic(item):
            matches = sorted(glob.glob(item, recursive=True))
            yield from (Path(m) for m in matches) if matches else [path]
        else:
            yield path


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="images or videos, folders of them, or globs")
    add_rules_options(parser)
    add_json_flag(parser)
    parser.add_argument("--csv", action="store_true", help="print one CSV row per photo or throw")
    parser.add_argument("--out", type=Path, metavar="DIR", help="write annotated copies here")
    parser.add_argument("--models", type=Path, metavar="DIR", help="folder with the ONNX models (default: bundled)")
    add_tray_option(parser)
    parser.add_argument(
        "--fixed-camera",
        action="store_true",
        help="the photos come from one fixed camera: learn its vertical from their dice once, for all of them "
        "(leaning dice are then judged in photos of one or two dice too; a video always counts as one camera)",
    )
    add_turn_options(parser)
    add_profile_option(parser)


CSV_FIELDS = ("image", "throw", "frame", "time", "faces", "rethrow", "keep", "points", "action", "expected", "error")


def _csv_row(result: dict[str, Any]) -> dict[str, Any]:
    """One flat row: the faces and the advice, for spreadsheets."""
    advice = result.get("advice") or {}
    if advice.get("farkle"):
        advice = {"action": "farkle"}
    reading = result.get("reading") or {}
    return {
        "image": result["image"],
        "throw": result.get("throw", ""),
        "frame": result.get("frame", ""),
        "time": result.get("time", ""),
        "faces": " ".join(map(str, reading.get("faces", []))),
        "rethrow": reading.get("rethrow", ""),
        "keep": " ".join(map(str, advice.get("keep") or [])),
        "points": advice.get("points", ""),
        "action": advice.get("action", ""),
        "expected": round(advice["expected"], 1) if advice.get("expected") is not None else "",
        "error": result.get("error", ""),
    }


def _folder_error(path: Path) -> ImageError:
    kinds = ", ".join(sorted(IMAGE_SUFFIXES | VIDEO_SUFFIXES))
    return ImageError(f"no image or video in this folder (looked for {kinds})")


def _error_text(path: Path, exc: Exception) -> str:
    """The message of ``exc`` without the path in front, which the report names already."""
    text = str(exc)
    return text.removeprefix(f"{path}: ")


def _summary(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"{result['image']}: ERROR {result['error']}"
    report = ReportPublic.model_validate({k: v for k, v in result.items() if k in ReportPublic.model_fields})
    return f"{result['image']}: " + "; ".join(advice_lines(report))


def _read_image(
    path: Path, reader: DiceReader, rules: Rules, args: argparse.Namespace, out_names: set[str]
) -> dict[str, Any]:
    import cv2

    from farklecam.service.overlay import annotate_reading
    from farklecam.vision.images import load_image

    frame = load_image(path)
    reading = reader.read(frame)
    height, width = frame.shape[:2]
    public = build_report(
        reading, rules, turn_total=args.turn_total, on_board=args.on_board, image_size=(width, height)
    )
    report = public.model_dump(mode="json")
    if args.out is not None:
        keep = (public.advice.keep if public.advice is not None else None) or []
        scene = annotate_reading(frame, reading, keep_faces=keep, text_lines=advice_lines(public))
        name = path.stem
        while name in out_names:
            name += "_"
        out_names.add(name)
        target = args.out / f"{name}.jpg"
        if not cv2.imwrite(str(target), scene):
            raise ImageError(f"could not write {target}")
        report["annotated"] = str(target)
    return {"image": str(path), **report}


def _run(args: argparse.Namespace) -> int:
    from farklecam.vision.reader import DiceReader, ReaderConfig

    rules = rules_from_args(args)
    profile = profile_from_args(args)
    reader = DiceReader(args.models, tray=tray_from_args(args), config=ReaderConfig(straight_down=args.straight_down))
    if profile is not None:
        reader = reader.with_profile(profile)
    if args.fixed_camera:
        from farklecam.vision.pose.view_search import VerticalMemory

        reader = reader.with_vertical_memory(VerticalMemory())
    if args.json and args.csv:
        raise ImageError("choose one of --json and --csv")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    failures = 0
    out_names: set[str] = set()
    table = csv.DictWriter(sys.stdout, fieldnames=CSV_FIELDS, lineterminator="\n") if args.csv else None
    if table is not None:
        table.writeheader()

    def show(result: dict[str, Any]) -> None:
        if table is not None:
            table.writerow(_csv_row(result))
        else:
            sys.stdout.write((json.dumps(result) if args.json else _summary(result)) + "\n")
        sys.stdout.flush()

    inputs = list(expand_inputs(args.paths))
    if len(inputs) == 1 and inputs[0].is_dir():  # the one folder asked for holds nothing to read
        raise ImageError(f"{inputs[0]}: {_folder_error(inputs[0])}")
    for path in inputs:
        try:
            if path.is_dir():
                raise _folder_error(path)
            if path.suffix.lower() in VIDEO_SUFFIXES:
                from farklecam.service.commands.read_video import read_video

                for result in read_video(path, reader, rules, args):  # each throw shows as soon as it settles
                    show(result)
            else:
                show(_read_image(path, reader, rules, args, out_names))
        except FarkleError as exc:  # per-file problem: report it and go on with the batch
            failures += 1
            show({"image": str(path), "error": _error_text(path, exc)})
        except Exception as exc:  # a bug, but one file's bug must not lose the rest of the batch
            failures += 1
            show({"image": str(path), "error": f"unexpected error, please report it: {type(exc).__name__}: {exc}"})
    if failures:
        sys.stderr.write(f"farklecam: {failures} input(s) could not be read\n")
    return 1 if failures else 0


READ = Command("read", "read the dice in photos or videos and score them", _configure, _run)
