"""``python -m datasets.synthetic --out DIR --count N --seed S``: write a run of scenes."""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from datasets.synthetic.dataset import READY_FILE, scene_name, write_dataset_yaml, write_scene
from datasets.synthetic.scene import GENERATOR_VERSION, GENERATOR_VERSIONS, P_LEAN, generate_scene
from datasets.training_sets import is_synthetic_holdout
from farklecam.cli_types import share


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
    ap = argparse.ArgumentParser(prog="python -m datasets.synthetic", description=__doc__)
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
    out.mkdir(parents=True, exist_ok=True)
    (out / READY_FILE).unlink(missing_ok=True)
    write_dataset_yaml(out)
    width, height = args.size
    for i in tqdm(range(args.start, args.start + args.count), desc="scenes", unit="scene"):
        name = scene_name(args.seed, i)
        if args.holdout_only and not is_synthetic_holdout(f"{name}.jpg"):
            continue
        if args.skip_existing and (out / "labels" / f"{name}.json").exists():
            continue
        write_scene(out, name, generate_scene(args.seed, i, width, height, args.lean_rate, args.generator_version))
    (out / READY_FILE).write_text(
        f"seed={args.seed} start={args.start} count={args.count} lean_rate={args.lean_rate}"
        f" generator_version={args.generator_version}"
        f"{' holdout_only' if args.holdout_only else ''}\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
