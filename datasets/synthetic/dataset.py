"""Writing a run of scenes to disk in the YOLO layout the trainer reads.

``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` (YOLO), ``OUT/labels/NAME.json``
(sidecar) and ``OUT/dataset.yaml``. Scene ``i`` of seed ``s`` is always named
``s{seed}_{i:06d}`` so partial runs (``--start``) fill the same folder without clashes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import cv2

from datasets.synthetic.scene import Scene, generate_scene
from datasets.yolo import CLASS_NAMES, write_labels

__all__ = ["READY_FILE", "scene_name", "write_dataset_yaml", "write_scene", "write_scenes"]

#: Written into the output folder once a whole run has finished (the trainer waits for it).
READY_FILE = "READY"


def scene_name(seed: int, index: int) -> str:
    """File base name of a scene."""
    return f"s{seed}_{index:06d}"


def write_dataset_yaml(out: Path) -> Path:
    """Write a coco8-style ``dataset.yaml`` (absolute path; train and val both ``images``)."""
    names = "\n".join(f"  {i}: {n if n.isdigit() is False else repr(n)}" for i, n in enumerate(CLASS_NAMES))
    text = f"path: {out.resolve()}\ntrain: images\nval: images\nnames:\n{names}\n"
    path = out / "dataset.yaml"
    path.write_text(text)
    return path


def write_scene(out: Path, name: str, scene: Scene) -> Path:
    """Write one scene's JPEG, YOLO labels and sidecar; returns the image path."""
    image = out / "images" / f"{name}.jpg"
    image.parent.mkdir(parents=True, exist_ok=True)
    quality = int(scene.sidecar.get("post", {}).get("jpeg_quality", 90))
    cv2.imwrite(str(image), scene.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    write_labels(out / "labels" / f"{name}.txt", scene.boxes)
    (out / "labels" / f"{name}.json").write_text(json.dumps(scene.sidecar, indent=1))
    return image


def write_scenes(out: Path, seed: int, indices: Iterable[int], width: int, height: int) -> int:
    """Generate and write the given scenes; returns how many were written."""
    n = 0
    for i in indices:
        write_scene(out, scene_name(seed, i), generate_scene(seed, i, width, height))
        n += 1
    return n
