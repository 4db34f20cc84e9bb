"""Writing a run of scenes to disk in the YOLO layout the trainer reads.

``OUT/images/NAME.jpg``, ``OUT/labels/NAME.txt`` (YOLO), ``OUT/labels/NAME.json``
(sidecar) and ``OUT/dataset.yaml``. Scene ``i`` of seed ``s`` is always named
``s{seed}_{i:06d}`` so partial runs (``--start``) fill the same folder without clashes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from farklecam.datasets.synthetic.scene import GENERATOR_VERSION, GENERATOR_VERSIONS, P_LEAN, Scene, generate_scene
from farklecam.datasets.training_sets import is_synthetic_holdout
from farklecam.datasets.yolo import CLASS_NAMES, write_example

__all__ = ["READY_FILE", "SceneRun", "scene_name", "write_dataset_yaml", "write_scene", "write_scenes"]

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
    """Write one scene's JPEG, YOLO labels and sidecar (:func:`datasets.yolo.write_example`); returns the image path."""
    return write_example(out, name, scene.image, scene.boxes, scene.sidecar)


@dataclass(frozen=True, slots=True)
class SceneRun:
    """One run of the generator: scenes ``start .. start+count-1`` of ``seed``, drawn alike.

    The one description of a run that the generator's command line and
    :mod:`farklecam.datasets.rebuild` share: which scenes it holds and the ``READY`` text that
    marks it finished (so a folder already holding the run is known by that text).

    Attributes:
        seed: the run's seed; scene ``i`` is seeded from ``(seed, i)``.
        count: scenes in the run (before ``holdout_only`` keeps about a tenth).
        start: first scene index.
        width: image width in pixels.
        height: image height in pixels.
        lean_rate: chance a scene gets a die placed leaning.
        version: the generator's version (1 regenerates the first training scenes exactly).
        holdout_only: only the scenes a full run holds out
        (:func:`farklecam.datasets.training_sets.is_synthetic_holdout`).
    """

    seed: int
    count: int
    start: int = 0
    width: int = 640
    height: int = 480
    lean_rate: float = P_LEAN
    version: int = GENERATOR_VERSION
    holdout_only: bool = False

    def __post_init__(self) -> None:
        if self.count < 0 or self.start < 0 or min(self.width, self.height) < 32:
            raise ValueError(f"a run needs count, start >= 0 and a size of at least 32x32, not {self}")
        if not 0.0 <= self.lean_rate <= 1.0 or self.version not in GENERATOR_VERSIONS:
            raise ValueError(f"lean_rate must be in 0..1 and version one of {GENERATOR_VERSIONS}, not {self}")

    def indices(self) -> list[int]:
        """The scene indices the run writes."""
        every = range(self.start, self.start + self.count)
        return [i for i in every if not self.holdout_only or is_synthetic_holdout(f"{scene_name(self.seed, i)}.jpg")]

    def ready_text(self) -> str:
        """What ``READY`` holds once the run is written."""
        held = " holdout_only" if self.holdout_only else ""
        return (
            f"seed={self.seed} start={self.start} count={self.count} lean_rate={self.lean_rate}"
            f" generator_version={self.version}{held}\n"
        )


def write_scenes(out: Path, run: SceneRun, indices: Iterable[int], skip_existing: bool = False) -> int:
    """Generate and write the given scenes of ``run`` (no ``READY``); returns how many were written.

    ``skip_existing`` leaves scenes whose sidecar is already there (a resumed run).
    """
    n = 0
    for i in indices:
        name = scene_name(run.seed, i)
        if skip_existing and (out / "labels" / f"{name}.json").exists():
            continue
        scene = generate_scene(run.seed, i, run.width, run.height, run.lean_rate, run.version)
        write_scene(out, name, scene)
        n += 1
    return n
