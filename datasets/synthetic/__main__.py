"""``python -m farklecam.datasets.synthetic --out DIR --count N --seed S``: write a run of scenes."""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from farklecam.datasets.cli_args import share
from farklecam.datasets.synthetic.dataset import READY_FILE, SceneRun, write_dataset_yaml, write_scenes
from farklecam.datasets.synthetic.scene import GENERATOR_VERSION, GENERATOR_VERSIONS, P_LEAN


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"size must look like 640x480, got {text!r}") from err
    if w < 32 or h < 32:
        raise argparse.ArgumentTypeError(f"size must be at least 32x32, got {text!r}")
    return w, h


def main(argv: list[str] | None = None) -> int:
    """Generate scenes ``start .. start+count-1`` of ``seed`` into ``out``; READY marks a full run."""
    ap = argparse.ArgumentParser(prog="python -m farklecam.datasets.synthetic", description=__doc__)
    ap.add_argument("--out", type=Path, required=True, help="output folder (images/, labels/, dataset.yaml)")
    ap.add_argument("--count", type=int, required=True, help="number of scenes to write")
    ap.add_argument("--seed", type=int, default=0, help="run seed; scene i is seeded from (seed, i)")
    ap.add_argument("--size", type=_size, default=(640, 480), help="image size WxH (default 640x480)")
    ap.add_argument("--start", type=int, default=0, help="first scene index (to resume or split a run)")
    ap.add_argument(
        "--lean-rate",
        type=share,
        default=P_LEAN,
        help=f"chance a scene gets a die placed leaning (cocked); default {P_LEAN}, 1.0 for a cocked-rich batch",
    )
    ap.add_argument(
        "--generator-version",
        type=int,
        choices=GENERATOR_VERSIONS,
        default=GENERATOR_VERSION,
        help=f"1 regenerates the first training scenes exactly; default {GENERATOR_VERSION} (wider dice palette)",
    )
    ap.add_argument("--skip-existing", action="store_true", help="do not regenerate scenes already written")
    ap.add_argument(
        "--holdout-only",
        action="store_true",
        help="write only the run's held-out scenes (about a tenth): the evaluation set, without the training scenes",
    )
    args = ap.parse_args(argv)
    out: Path = args.out
    width, height = args.size
    try:
        run = SceneRun(
            args.seed, args.count, args.start, width, height, args.lean_rate, args.generator_version, args.holdout_only
        )
    except ValueError as exc:
        ap.error(str(exc))
    out.mkdir(parents=True, exist_ok=True)
    (out / READY_FILE).unlink(missing_ok=True)
    write_dataset_yaml(out)
    for i in tqdm(run.indices(), desc="scenes", unit="scene"):
        write_scenes(out, run, [i], skip_existing=args.skip_existing)
    (out / READY_FILE).write_text(run.ready_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
