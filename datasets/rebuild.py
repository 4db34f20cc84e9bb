"""Rebuild ``data/`` on a fresh machine: ``python -m farklecam.datasets.rebuild [--training] [--jobs N]``.

``data/`` is git-ignored, and a new machine starts without it. The model card's
evaluation reads the held-out sets and the calibration scenes; retraining reads the
training scenes too. Their recipes (seed, count, lean rate, generator version) are
written once, here (:data:`RUNS`), and this command writes whichever folders are
missing or unfinished, in parallel, so that one command stands where a page of them did:

- ``data/eval/<source>`` and ``data/val/<source>``: the real held-out and validation
  photos, exported from ``../shared/datasets/real`` (:func:`farklecam.datasets.real.export_holdout`);
- ``data/eval/synthetic*``: the generated held-out sets, written alone
  (``--holdout-only``: the very scenes the training runs hold out);
- ``data/calib_synth``, ``data/calib_lean``: the calibration scenes (neither trained
  on nor held out);
- with ``--training``, ``data/synth``, ``data/synth_lean``, ``data/synth_v2``;
- with ``--out-of-world``, the other two renderers' held-out sets, ``data/eval/raytraced`` and
  ``data/eval/blender`` (:data:`OUT_OF_WORLD`: the leave-one-out judges), each by its
  own resumable command line in a child process; Blender's runs in its own venv
  (``scripts/blender_venv.sh``) and is skipped, saying so, where there is none.

A folder whose ``READY`` file already names its run is kept as it is; an unfinished one
is resumed (scenes already written are kept). The scenes are deterministic, so a rebuilt
folder holds the same images, byte for byte, as the one it replaces.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from farklecam.datasets.real import export_holdout
from farklecam.datasets.synthetic.dataset import READY_FILE, SceneRun, write_dataset_yaml, write_scenes

__all__ = ["OUT_OF_WORLD", "RUNS", "NamedRun", "RendererRun", "main", "plan", "rebuild_out_of_world", "rebuild_scenes"]

#: Scenes handed to one worker at a time (small enough to keep both cores busy to the end).
_CHUNK = 40


@dataclass(frozen=True, slots=True)
class NamedRun:
    """A generated folder of ``data/``: where it goes, what it is for, and its run."""

    folder: str
    role: str
    run: SceneRun


#: Every generated folder the model card names, as it was made.
RUNS: tuple[NamedRun, ...] = (
    NamedRun("eval/synthetic", "evaluation", SceneRun(1, 2000, version=1, holdout_only=True)),
    NamedRun("eval/synthetic_lean", "evaluation", SceneRun(7, 1500, lean_rate=1.0, version=1, holdout_only=True)),
    NamedRun("eval/synthetic_v2", "evaluation", SceneRun(21, 1600, lean_rate=0.4, version=2, holdout_only=True)),
    NamedRun("calib_synth", "calibration", SceneRun(11, 1000, version=1)),
    NamedRun("calib_lean", "calibration", SceneRun(41, 600, lean_rate=1.0, version=2)),
    NamedRun("synth", "training", SceneRun(1, 2000, version=1)),
    NamedRun("synth_lean", "training", SceneRun(7, 1500, lean_rate=1.0, version=1)),
    NamedRun("synth_v2", "training", SceneRun(21, 1600, lean_rate=0.4, version=2)),
)


@dataclass(frozen=True, slots=True)
class RendererRun:
    """A held-out set of a renderer no model trained on, written by that generator's own command line.

    Attributes:
        folder: where it goes under ``data/``.
        module: the generator (``python -m MODULE --out DIR --count N --seed S``).
        seed, count: the run.
        python: the interpreter, relative to the repo root; None: this one.
    """

    folder: str
    module: str
    seed: int
    count: int
    python: str | None = None

    def command(self, root: Path, data: Path) -> list[str]:
        """The child process's command line (run from ``root``, the repo root)."""
        python = sys.executable if self.python is None else str(root / self.python)
        return [python, "-m", self.module, "--out", str(data / self.folder), "--count", str(self.count),
                "--seed", str(self.seed)]  # fmt: skip

    def ready(self, data: Path) -> bool:
        """Whether the folder's ``READY`` says this whole run is written (:func:`datasets.scene_run.write_run`)."""
        ready = data / self.folder / READY_FILE
        return ready.is_file() and ready.read_text().startswith(f"seed={self.seed} start=0 count={self.count} ")


#: The other renderers' held-out sets, as the model card makes them (about 8 s a raytraced scene and a minute a
#: Blender one on two cores).
OUT_OF_WORLD: tuple[RendererRun, ...] = (
    RendererRun("eval/raytraced", "farklecam.datasets.raytraced", seed=30, count=300),
    RendererRun("eval/blender", "farklecam.datasets.blender", seed=40, count=300, python=".venv-blender/bin/python"),
)


def rebuild_out_of_world(data: Path, runs: Iterable[RendererRun], root: Path) -> dict[str, str]:
    """Write the runs one after another; returns ``{folder: "kept" | "written" | why it was not}``.

    Each generator skips the scenes already written, so an interrupted rebuild resumes.
    """
    result: dict[str, str] = {}
    for run in runs:
        if run.ready(data):
            result[run.folder] = "kept"
            continue
        command = run.command(root, data)
        if not Path(command[0]).is_file():
            result[run.folder] = f"skipped: no {run.python} (make it with scripts/blender_venv.sh)"
            continue
        code = subprocess.run(command, cwd=root, check=False).returncode
        result[run.folder] = "written" if code == 0 else f"failed: {run.module} exited {code}"
    return result


def plan(training: bool = False, only: Sequence[str] = ()) -> list[NamedRun]:
    """The runs to make: evaluation and calibration, training too with ``training``, or those named in ``only``.

    Raises:
        ValueError: ``only`` names a folder that is not in :data:`RUNS`.
    """
    known = {r.folder for r in RUNS}
    unknown = sorted(set(only) - known)
    if unknown:
        raise ValueError(f"no generated folder {', '.join(unknown)}; one of {', '.join(sorted(known))}")
    if only:
        return [r for r in RUNS if r.folder in only]
    return [r for r in RUNS if training or r.role != "training"]


def _write_chunk(out: Path, run: SceneRun, indices: list[int]) -> int:
    return write_scenes(out, run, indices, skip_existing=True)


def rebuild_scenes(data: Path, runs: Iterable[NamedRun], jobs: int = 2) -> dict[str, str]:
    """Write the runs' scenes under ``data`` with ``jobs`` processes; returns ``{folder: "kept" | "written"}``.

    A folder whose ``READY`` names its run is kept; any other is (re)filled, its written
    scenes kept, and marked ``READY`` once all of its scenes are there.
    """
    todo: list[tuple[NamedRun, Path]] = []
    result: dict[str, str] = {}
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    for named in runs:
        out = data / named.folder
        ready = out / READY_FILE
        if ready.is_file() and ready.read_text() == named.run.ready_text():
            result[named.folder] = "kept"
            continue
        out.mkdir(parents=True, exist_ok=True)
        ready.unlink(missing_ok=True)
        write_dataset_yaml(out)
        todo.append((named, out))
    chunks = [
        (named, out, idx[k : k + _CHUNK])
        for named, out in todo
        for idx in [named.run.indices()]
        for k in range(0, len(idx), _CHUNK)
    ]
    total = sum(len(c[2]) for c in chunks)
    # spawn, not fork: the caller may hold threads (onnxruntime, a web server) that fork would copy mid-flight.
    context = multiprocessing.get_context("spawn")
    with (
        ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool,
        tqdm(total=total, desc="scenes", unit="scene") as bar,
    ):
        futures = {pool.submit(_write_chunk, out, named.run, idx): len(idx) for named, out, idx in chunks}
        for future in as_completed(futures):
            future.result()  # a failed scene stops the rebuild with its error
            bar.update(futures[future])
    for named, out in todo:
        (out / READY_FILE).write_text(named.run.ready_text())
        result[named.folder] = "written"
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the missing folders of ``data/`` and print what each holds."""
    ap = argparse.ArgumentParser(prog="python -m farklecam.datasets.rebuild", description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("data"), help="the data folder (default data/)")
    ap.add_argument("--training", action="store_true", help="also the training scenes (5100, about 10 min)")
    ap.add_argument("--only", nargs="+", default=[], metavar="FOLDER", help="just these generated folders")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes (default: 2)")
    ap.add_argument("--no-real", action="store_true", help="skip exporting the real held-out and validation photos")
    ap.add_argument(
        "--out-of-world",
        action="store_true",
        help="also the raytraced and Blender held-out sets (about 40 min and 5 h on two cores; Blender needs its venv)",
    )
    args = ap.parse_args(argv)
    try:
        runs = plan(args.training, args.only)
    except ValueError as exc:
        ap.error(str(exc))
    if args.jobs < 1:
        ap.error(f"--jobs must be at least 1, not {args.jobs}")
    start = time.monotonic()
    if not args.no_real:
        try:
            for folder in [*export_holdout(args.data / "eval"), *export_holdout(args.data / "val", validation=True)]:
                sys.stdout.write(f"{folder}: {sum(1 for _ in (folder / 'images').iterdir())} real photos\n")
        except OSError as exc:  # no ../shared/datasets/real here (FARKLECAM_REAL_DATA points elsewhere)
            sys.stderr.write(f"real photos not exported ({exc}); the generated folders follow\n")
    for name, state in rebuild_scenes(args.data, runs, args.jobs).items():
        images = sum(1 for _ in (args.data / name / "images").iterdir())
        sys.stdout.write(f"{args.data / name}: {images} scenes ({state})\n")
    if args.out_of_world:
        root = Path(__file__).resolve().parent.parent
        for name, state in rebuild_out_of_world(args.data.resolve(), OUT_OF_WORLD, root).items():
            sys.stdout.write(f"{args.data / name}: {state}\n")
    sys.stdout.write(f"done in {time.monotonic() - start:.0f} s\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
