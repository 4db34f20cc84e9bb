"""How well does a tray found in the picture give the camera's vertical? Against the scenes' true corners.

    python bench/tray_sides.py DIR... [--limit N] [--clicked PX]

For each generated scene (YOLO folder with sidecars holding the floor's true
corners), the tray is looked for as the reader does (``detect_tray``, the
labelled dice as anchors) and the vertical drawn (``farklecam.vision.pose.upright``) from the
colour outline's corners, and from its sides fitted at full resolution
(``farklecam.vision.tray.sides``), is compared with the one the true corners give: the
angle between the two vertical directions in the camera's frame, in degrees.
With ``--clicked PX`` also the true corners moved at random by PX (as
``farklecam.models.evaluate.run --corner-noise`` moves them) and snapped to the edges
(``farklecam.vision.tray.sides.snap``): the vertical of the clicks, and of the snapped
sides where the snap holds. Prints how many scenes each gives a vertical for,
and the error's median, 90th percentile and largest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from farklecam.datasets.yolo import find_images
from farklecam.models.evaluate.run import sidecar_outline
from farklecam.vision.images import load_image
from farklecam.vision.pose.upright import upright_view
from farklecam.vision.tray.detect import detect_tray
from farklecam.vision.tray.sides import snap


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+", help="generated scenes with sidecars")
    parser.add_argument("--limit", type=int, default=None, help="at most this many scenes per folder")
    parser.add_argument("--clicked", type=float, default=None, metavar="PX", help="also clicked corners, snapped")
    args = parser.parse_args(argv)
    scenes = 0
    errors: dict[str, list[float]] = {"colour outline": [], "fitted sides": []}
    if args.clicked is not None:
        errors.update({"clicked corners": [], "clicked, snapped": []})
    for folder in args.dirs:
        for path in find_images(folder / "images")[: args.limit]:
            sidecar = path.parent.parent / "labels" / f"{path.stem}.json"
            if not sidecar.is_file():
                continue
            labels = json.loads(sidecar.read_text())
            frame = load_image(path)
            size = (frame.shape[1], frame.shape[0])
            truth = upright_view(np.asarray(labels["tray"], np.float64), size) if labels.get("tray") else None
            if truth is None:
                continue
            scenes += 1
            if args.clicked is not None:
                clicked = sidecar_outline(np.asarray(labels["tray"], np.float32), args.clicked, path.name)
                snapped = snap(clicked, frame)
                view = upright_view(clicked.polygon, size, clicked.corner_sigma_px)
                if view is not None:
                    errors["clicked corners"].append(view.angle_to(truth))
                if snapped.sides is not None and (view := upright_view(snapped.sides, size, 1.0)) is not None:
                    errors["clicked, snapped"].append(view.angle_to(truth))
            boxes = np.asarray([d["box"] for d in labels.get("dice", [])], np.float32).reshape(-1, 4)
            outline = detect_tray(frame, boxes, find_sides=True)
            if outline is None:
                continue
            for name, corners in (("colour outline", outline.polygon), ("fitted sides", outline.sides)):
                view = upright_view(corners, size) if corners is not None and len(corners) == 4 else None
                if view is not None:
                    errors[name].append(view.angle_to(truth))
    print(f"{scenes} scenes with true corners")
    print(f"{'vertical from':16} {'scenes':>7} {'median deg':>11} {'p90 deg':>8} {'max deg':>8}")
    for name, errs in errors.items():
        e = np.asarray(errs)
        row = f"{np.median(e):11.2f} {np.percentile(e, 90):8.2f} {e.max():8.2f}" if len(e) else f"{'-':>11}"
        print(f"{name:16} {len(e):7d} {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
