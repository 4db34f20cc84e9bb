"""Honest evaluation of the reader on labelled YOLO folders: ``python -m farklecam.models.evaluate DIR...``.

For each folder (``images/`` + ``labels/``, classes 0-5 = face - 1, 6 = cocked)
it reads every image with the real reader and prints: per-die face accuracy
over matched dice, whole-image exact accuracy (every die found and read right,
nothing extra, and where a sidecar says which dice are off the tray, exactly those
flagged), the accuracy of the dice given status ok and the share flagged
uncertain, detection recall and precision (matched by box centre, so
whole-die and pip-pattern boxes both work), cocked and off-tray recall and
precision where labelled, median read latency, and a 7x7 confusion matrix (as
text, and as a PNG with ``--confusion-png``).

A JSON sidecar beside a label file (``labels/x.json``, as the scene generator
writes) adds each die's ``status`` (for off-tray metrics), whether it is
``occluded`` (under half of it visible, or half out of the frame), and the
``tray`` corners, which are then used as the calibrated tray for that image.
Occluded dice are scored like PASCAL VOC's "difficult" objects: finding one is
no error and missing one is no miss (``--count-occluded`` scores them as any
other die); the ``ignored`` column says how many there were.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.datasets.yolo import find_images, label_file, read_labels, read_sidecar
from farklecam.errors import FarkleError, ImageError
from farklecam.models.evaluate.error_cases import ErrorCases
from farklecam.models.evaluate.metrics import FolderStats, ImageLabels
from farklecam.vision.images import load_image
from farklecam.vision.reader import DiceReader, ReaderConfig, config_override
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.tray.outline import TrayOutline

__all__ = [
    "evaluate_folder",
    "format_table",
    "load_labels",
    "main",
    "oracle_detector",
    "override_arg",
    "sidecar_outline",
]

_COLUMNS = (
    ("images", "images", "{}"),
    ("dice", "dice", "{}"),
    ("ignored", "ignored", "{}"),
    ("face_accuracy", "face acc", "{:.4f}"),
    ("exact_accuracy", "exact", "{:.4f}"),
    ("ok_accuracy", "ok acc", "{:.4f}"),
    ("ok_wrong", "ok wrong", "{}"),
    ("flat_ok_right", "flat ok+right", "{:.4f}"),
    ("uncertain_rate", "unsure", "{:.3f}"),
    ("recall", "recall", "{:.4f}"),
    ("precision", "precision", "{:.4f}"),
    ("cocked_recall", "cocked R", "{:.3f}"),
    ("cocked_precision", "cocked P", "{:.3f}"),
    ("cocked_rethrown", "cocked rethrown", "{:.3f}"),
    ("off_tray_recall", "off R", "{:.3f}"),
    ("off_tray_precision", "off P", "{:.3f}"),
    ("median_ms", "median ms", "{:.1f}"),
)


def load_labels(image_path: Path, width: int, height: int) -> ImageLabels:
    """The YOLO labels of an image, with the JSON sidecar's statuses and tray when present.

    Raises:
        ValueError: a malformed label line or a sidecar whose dice do not match the label lines.
    """
    label_path = label_file(image_path)
    boxes = read_labels(label_path)
    xyxy = np.array([b.to_xyxy(width, height) for b in boxes], np.float32).reshape(-1, 4)
    classes = np.array([b.cls for b in boxes], np.int64)
    sidecar = read_sidecar(image_path)
    if not sidecar:
        return ImageLabels(xyxy, classes)
    off_tray = tilt = None
    dice = sidecar.get("dice")
    if isinstance(dice, list):
        if len(dice) != len(boxes):
            raise ValueError(f"{label_path.with_suffix('.json')}: {len(dice)} dice but {len(boxes)} label lines")
        off_tray = np.array([d.get("status") == "off_tray" for d in dice], bool)
        occluded = np.array([bool(d.get("occluded", False)) for d in dice], bool)
        if all("tilt_deg" in d for d in dice):
            tilt = np.array([float(d["tilt_deg"]) for d in dice], np.float32)
    tray = sidecar.get("tray")
    tray_arr = np.asarray(tray, np.float32).reshape(-1, 2) if tray else None
    return ImageLabels(xyxy, classes, off_tray, tray_arr, occluded if isinstance(dice, list) else None, tilt_deg=tilt)


def place(
    frame: npt.NDArray[np.uint8], labels: ImageLabels, canvas: tuple[int, int], scale: float
) -> tuple[npt.NDArray[np.uint8], ImageLabels]:
    """``frame`` scaled by ``scale`` and set in the middle of a ``canvas`` = (width, height) picture.

    How a photo's dice look in a webcam-sized frame (scale 1: pixel for pixel) or closer up
    (scale > 1: the middle of the scaled photo fills the canvas). The canvas around the photo
    is the photo's own border colour; a die cut to less than half by the canvas's edge is
    occluded (scored as neither found nor missed), one wholly outside it is dropped, and the
    sidecar's tray moves with the photo.
    """
    width, height = canvas
    h, w = frame.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    scaled = cv2.resize(frame, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    border = np.concatenate([frame[0], frame[-1], frame[:, 0], frame[:, -1]]).reshape(-1, 3)
    out = np.empty((height, width, 3), np.uint8)
    out[:] = np.median(border, axis=0).astype(np.uint8)
    dx, dy = (width - size[0]) // 2, (height - size[1]) // 2  # negative: the scaled photo is cropped
    sx, sy = max(0, -dx), max(0, -dy)
    tx, ty = max(0, dx), max(0, dy)
    cw, ch = min(size[0] - sx, width - tx), min(size[1] - sy, height - ty)
    out[ty : ty + ch, tx : tx + cw] = scaled[sy : sy + ch, sx : sx + cw]
    xyxy = labels.xyxy * scale + np.array([dx, dy, dx, dy], np.float32)
    inside = np.clip(xyxy, 0, [width, height, width, height])
    area = np.prod(np.maximum(xyxy[:, 2:] - xyxy[:, :2], 1e-6), axis=1)
    shown = np.prod(np.maximum(inside[:, 2:] - inside[:, :2], 0), axis=1) / area
    keep = shown > 0
    occluded = shown < 0.5
    if labels.occluded is not None:
        occluded |= labels.occluded
    tray = None if labels.tray is None else labels.tray * scale + np.array([dx, dy], np.float32)
    placed = ImageLabels(
        xyxy[keep].astype(np.float32),
        labels.classes[keep],
        None if labels.off_tray is None else labels.off_tray[keep],
        tray,
        occluded[keep],
        None if labels.tilt_deg is None else labels.tilt_deg[keep],
    )
    return out, placed


def oracle_detector(labels: ImageLabels, width: int, height: int) -> Callable[[npt.NDArray[np.uint8]], Reading]:
    """A detector that "finds" exactly the labelled boxes: measures the rest of the reader alone."""
    n = len(labels.classes)
    found = Reading(
        xyxy=labels.xyxy,
        confidence=np.ones(n, np.float32),
        face=np.zeros(n, np.int64),
        face_confidence=np.zeros(n, np.float32),
        status=np.full(n, DieStatus.UNCERTAIN.value),
        image_size=(width, height),
    )
    return lambda _frame: found


def sidecar_outline(corners: np.ndarray, noise_px: float, name: str) -> TrayOutline:
    """A sidecar's tray: its exact corners (``"labelled"``), or, with ``noise_px``, as if clicked by a person."""
    if noise_px <= 0:
        return TrayOutline.from_corners(corners, source="labelled")
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return TrayOutline.from_corners(np.asarray(corners, np.float64) + rng.normal(0, noise_px, np.shape(corners)))


def evaluate_folder(
    reader: DiceReader,
    folder: Path,
    limit: int | None = None,
    sidecar_tray: bool = True,
    oracle: bool = False,
    errors: ErrorCases | None = None,
    count_occluded: bool = False,
    corner_noise_px: float = 0.0,
    canvas: tuple[int, int] | None = None,
    scale: float = 1.0,
) -> tuple[FolderStats, list[str]]:
    """Read and score every labelled image below ``folder``.

    Args:
        reader: the reader under test.
        folder: a YOLO-format folder.
        limit: read at most this many images (the first ones, sorted by path).
        sidecar_tray: use a sidecar's tray corners as the calibrated tray of its image.
        oracle: use the labelled boxes instead of the detector (needs whole-die boxes).
        errors: where to write the images not read exactly (none when None).
        count_occluded: score dice the sidecar marks occluded like any other.
        corner_noise_px: move each sidecar tray corner at random by this much (standard
            deviation, pixels; the same moves every run) and treat the corners as clicked:
            how the calibrated path reads for a person who clicks the corners.
        canvas: set each image, scaled by ``scale``, in a picture of this (width, height)
            (:func:`place`): real photos as a webcam-sized frame shows them, or closer up.
        scale: how much each image is scaled first (with ``canvas``; 1: pixel for pixel).

    Returns:
        The counts, and one message per image that could not be read (the run goes on).
    """
    stats = FolderStats()
    problems: list[str] = []
    images = find_images(folder)[:limit] if limit else find_images(folder)
    for path in images:
        try:
            frame = load_image(path)
            labels = load_labels(path, frame.shape[1], frame.shape[0])
            if canvas is not None:
                frame, labels = place(frame, labels, canvas, scale)
            if count_occluded:
                labels = dataclasses.replace(labels, occluded=None)
        except (ImageError, ValueError) as exc:
            problems.append(str(exc))
            continue
        image_reader = reader
        outline = None
        if sidecar_tray and labels.tray is not None and len(labels.tray) >= 3:
            outline = sidecar_outline(labels.tray, corner_noise_px, path.name)
            image_reader = reader.with_tray(outline)
        if oracle:
            image_reader = image_reader.with_detector(oracle_detector(labels, frame.shape[1], frame.shape[0]))
        t0 = time.perf_counter()
        reading = image_reader.read(frame)
        exact = stats.add(reading, labels, (time.perf_counter() - t0) * 1000.0)
        if errors is not None and not exact:
            errors.record(path, frame, reading, labels)
    return stats, problems


def format_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """Metrics as a plain table, one row per folder ("-" where a metric does not apply)."""
    columns = _COLUMNS
    headers = ["folder", *(title for _, title, _ in columns)]
    body = []
    for name, metrics in rows:
        cells = [name]
        for key, _, fmt in columns:
            value = metrics.get(key)
            cells.append("-" if value is None else fmt.format(value))
        body.append(cells)
    widths = [max(len(r[i]) for r in [headers, *body]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))])

    lines = [line(headers), *(line(cells) for cells in body)]
    return "\n".join(lines)


def _png_path(base: Path, name: str, many: bool) -> Path:
    return base.with_name(f"{base.stem}-{name}{base.suffix or '.png'}") if many else base


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m farklecam.models.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="YOLO-format folders (images/ + labels/)")
    parser.add_argument("--models", type=Path, default=None, help="model folder (default: the models package)")
    parser.add_argument("--confusion-png", type=Path, default=None, help="write the confusion matrix PNG here")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--limit", type=int, default=None, help="read at most this many images per folder")
    parser.add_argument("--views", type=int, choices=(1, 2, 4, 8), default=None, help="classifier views per die")
    parser.add_argument("--no-tray", action="store_true", help="ignore sidecar trays; detect as at run time")
    parser.add_argument(
        "--no-search",
        action="store_true",
        help="never search for the camera's vertical in the dice (with --no-tray: the classifier's own cocked call)",
    )
    parser.add_argument(
        "--corner-noise",
        type=float,
        default=0.0,
        metavar="PX",
        help="move each sidecar tray corner at random by PX (standard deviation) and treat it as clicked",
    )
    parser.add_argument(
        "--straight-down",
        action="store_true",
        help="where no sidecar tray gives it, take the camera's vertical as straight down (ReaderConfig.straight_down)",
    )
    parser.add_argument(
        "--set",
        type=override_arg,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="change one ReaderConfig field, e.g. --set straight_down_check_deg=None (repeatable)",
    )
    parser.add_argument(
        "--oracle-boxes", action="store_true", help="use the labelled (whole-die) boxes instead of the detector"
    )
    parser.add_argument(
        "--count-occluded",
        action="store_true",
        help="score dice a sidecar marks occluded like any other (default: ignored, as VOC's 'difficult')",
    )
    parser.add_argument(
        "--canvas",
        type=_canvas,
        default=None,
        metavar="WxH",
        help="set each image in a picture of this size, e.g. 1280x720: photos as a webcam-sized frame shows them",
    )
    parser.add_argument(
        "--scale", type=float, default=1.0, help="with --canvas, scale each image by this first (2: closer up)"
    )
    parser.add_argument(
        "--errors", type=Path, default=None, help="write each image not read exactly, drawn, to ERRORS/<folder>/"
    )
    return parser.parse_args(argv)


def _group_line(stats: FolderStats) -> str:
    """``<30 12: 0.917 / 1.000, ...``: each group's dice, recall and face accuracy."""

    def show(value: float | int | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    return ", ".join(
        f"{name} {g['dice']}: {show(g['recall'])} / {show(g['face_accuracy'])}" for name, g in stats.by_group().items()
    )


def _canvas(text: str) -> tuple[int, int]:
    """``1280x720`` -> (1280, 720) (argparse type)."""
    width, _, height = text.lower().partition("x")
    try:
        size = (int(width), int(height))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1280x720, got {text!r}") from exc
    if min(size) < 32 or max(size) > 8192:
        raise argparse.ArgumentTypeError(f"a canvas is 32 to 8192 pixels a side, got {text!r}")
    return size


def override_arg(text: str) -> tuple[str, object]:
    """``FIELD=VALUE`` -> ``(field, value)``: :func:`farklecam.vision.reader.config_override` as an argparse type."""
    try:
        return config_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation; returns the exit code (2 for a user error such as a missing model)."""
    args = _parse(argv)
    config = ReaderConfig()
    if args.views is not None:
        config = dataclasses.replace(config, face_views=args.views)
    if args.no_search:
        config = dataclasses.replace(config, vertical_search=False)
    if args.straight_down:
        config = dataclasses.replace(config, straight_down=True)
    if args.set:
        config = dataclasses.replace(config, **dict(args.set))
    if not 0.05 <= args.scale <= 20:
        sys.stderr.write(f"error: --scale must be between 0.05 and 20, got {args.scale}\n")
        return 2
    missing = [str(d) for d in args.dirs if not d.is_dir()]
    if missing:
        sys.stderr.write(f"error: not a folder: {', '.join(missing)}\n")
        return 2
    try:
        reader = DiceReader(args.models, config=config)
    except FarkleError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    many = len(args.dirs) > 1
    total = FolderStats()
    results: list[tuple[Path, FolderStats]] = []
    report: dict[str, Any] = {"folders": {}}
    for folder in args.dirs:
        errors = ErrorCases(args.errors / folder.resolve().name) if args.errors else None
        stats, problems = evaluate_folder(
            reader,
            folder,
            args.limit,
            sidecar_tray=not args.no_tray,
            oracle=args.oracle_boxes,
            errors=errors,
            count_occluded=args.count_occluded,
            corner_noise_px=args.corner_noise,
            canvas=args.canvas,
            scale=args.scale,
        )
        for problem in problems:
            sys.stderr.write(f"skipped: {problem}\n")
        total.merge(stats)
        results.append((folder, stats))
        entry: dict[str, Any] = {
            **stats.metrics(),
            "cocked_recall_by_lean": stats.cocked_recall_by_lean(),
            "by_size_and_touching": stats.by_group(),
            "confusion": stats.confusion.to_dict(),
            "problems": problems,
        }
        if args.confusion_png:
            png_path = _png_path(args.confusion_png, folder.resolve().name, many)
            entry["confusion_png"] = str(stats.confusion.write_png(png_path, title=str(folder)))
        report["folders"][str(folder)] = entry
    if many:
        report["all"] = {
            **total.metrics(),
            "cocked_recall_by_lean": total.cocked_recall_by_lean(),
            "by_size_and_touching": total.by_group(),
        }
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    rows = [(folder.resolve().name, stats.metrics()) for folder, stats in results]
    all_row = ("all", total.metrics())
    out = [format_table([*rows, all_row] if many else rows), ""]
    for folder, stats in results:
        out += [f"confusion ({folder}): rows = label, columns = predicted", stats.confusion.text(), ""]
        if by_lean := stats.cocked_recall_by_lean():
            bands = ", ".join(f"{band} deg {v['found']}/{v['dice']}" for band, v in by_lean.items())
            out += [f"cocked dice called, by lean ({folder}): {bands}", ""]
        out += [f"by die size (px) and touching ({folder}): recall / face accuracy", _group_line(stats), ""]
        if "confusion_png" in report["folders"][str(folder)]:
            out += [f"wrote {report['folders'][str(folder)]['confusion_png']}", ""]
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
