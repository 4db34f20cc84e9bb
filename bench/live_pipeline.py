"""How fast is the live pipeline, and does it find every throw exactly once?

    python bench/live_pipeline.py [--throws 20] [--seeds 5] [--clips 3] [--models DIR] [--no-model]
                                  [--compare-config FIELD=VALUE]

Speed: a scripted table (farklecam.service.live.demo) is recorded to an MJPG video at 640x480,
30 fps, then played back through what ``farklecam live`` runs per frame: decode, the
motion gate, the reader on still frames only, the settle layer; then also the table
session and the overlay (the window's work, without Tk). The reader is the
script's label reader (the pipeline's own cost) and, when the ONNX models load, the
real ``DiceReader`` (the cost a table pays). Frames per second above the camera's 30
mean the window keeps up without dropping frames.

Throw detection: scripted tables (hands, glare frames, cocked and flickering dice)
and pybullet-rendered throw clips (``farklecam.datasets.synthetic.render_throw_sequence``),
read by a reader built from their ground-truth labels plus a real reader's errors.
Counts the true throws, the results, the results with the right faces, duplicates
and misses. A benchmark, not a test: the numbers depend on the machine's load.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from farklecam.models.evaluate.run import override_arg
from farklecam.scoring.presets import get_rules
from farklecam.service.live.controller import ppm_bytes, render_scene
from farklecam.service.live.demo import DemoTable, demo_script
from farklecam.service.table import TableSession
from farklecam.vision.camera.sources import Frame, VideoFileSource, VideoSink
from farklecam.vision.reading import Reading
from farklecam.vision.settle.detector import FrameReader, SettleDetector

SIZE = (640, 480)


def table(headers: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    cells = [list(map(str, headers)), *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def record(path: Path, throws: int) -> list[dict[str, Any]]:
    """Record a scripted table to ``path``; returns each frame's sidecar."""
    demo = DemoTable(demo_script(throws, seed=11), size=SIZE, seed=11)
    with VideoSink(path, demo.fps, SIZE) as sink:
        for frame in demo:
            sink.write(frame.image)
    return demo.sidecars


class Replay:
    """The label reader of a recorded script: the bench points it at each frame's sidecar."""

    def __init__(self, sidecars: list[dict[str, Any]]) -> None:
        self.sidecars = sidecars
        self.table = DemoTable([], size=SIZE, seed=11)

    def at(self, index: int) -> Replay:
        self.table.current = self.sidecars[index]
        return self

    def read(self, frame: np.ndarray, /) -> Reading:
        return self.table.read(frame)


def speed(path: Path, sidecars: list[dict[str, Any]], readers: dict[str, FrameReader]) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []

    def run(name: str, work: Callable[[Frame], None], detector: SettleDetector | None = None) -> None:
        with VideoFileSource(path) as video:
            frames = 0
            t0, c0 = time.perf_counter(), time.process_time()
            for frame in video:
                work(frame)
                frames += 1
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        reads = "-" if detector is None else detector.reads
        rows.append((name, frames, reads, f"{wall:.2f}", f"{frames / wall:.0f}", f"{1000 * cpu / frames:.1f}"))

    run("decode only", lambda frame: None)
    replay = Replay(sidecars)
    for label, reader in readers.items():
        detector = SettleDetector()

        def settle(frame: Frame, reader: FrameReader = reader, detector: SettleDetector = detector) -> None:
            if isinstance(reader, Replay):
                reader.at(frame.index)
            detector.step(frame, reader)

        run(f"gate + {label} + settle", settle, detector)
    session = TableSession(get_rules("boxed"), ["Ann", "Bob"], reader=replay)

    def window(frame: Frame) -> None:
        view = session.on_frame(frame) if replay.at(frame.index) else None
        assert view is not None
        ppm_bytes(render_scene(frame.image, view))

    run("+ table session + overlay (label reader)", window, session.detector)
    return rows


def score(found: list[tuple[int, tuple[int, ...], int]], truth: list[tuple[tuple[int, ...], int]]) -> tuple[int, ...]:
    """(true, detected, right, duplicates, missed) from results (throw, faces, rethrow) and the truth."""
    per = {k: [r for r in found if r[0] == k] for k in range(len(truth))}
    right = sum(1 for k, rs in per.items() if len(rs) >= 1 and (rs[0][1], rs[0][2]) == truth[k])
    duplicates = sum(max(0, len(rs) - 1) for rs in per.values())
    missed = sum(1 for rs in per.values() if not rs)
    return len(truth), len(found), right, duplicates, missed


def demo_detection(throws: int, seeds: int) -> tuple[int, ...]:
    totals = np.zeros(5, int)
    for seed in range(seeds):
        script = demo_script(throws, seed=seed)
        demo = DemoTable(script, size=(320, 240), seed=seed)
        detector, found = SettleDetector(), []
        for frame in demo:
            state = detector.step(frame, demo)
            if state.is_new and state.reading is not None:
                found.append((demo.current["throw"], state.reading.faces, state.reading.rethrow))
        truth = [(t.expected_faces, len(t.cocked) + (t.flicker is not None)) for t in script]
        totals += score(found, truth)
    return tuple(int(v) for v in totals)


def synthetic_detection(clips: int) -> tuple[int, ...] | None:
    try:
        from farklecam.datasets.synthetic import render_throw_sequence
    except ImportError:
        return None
    totals = np.zeros(5, int)
    for seed in range(clips):
        detector, found, labels = SettleDetector(), [], Labels()
        clip = list(render_throw_sequence(seed, width=160, height=120, fps=10.0, settled_seconds=1.0))
        for image, sidecar in clip:
            labels.previous, labels.sidecar = labels.sidecar, sidecar
            state = detector.step(Frame(image, sidecar["frame"], sidecar["time_s"]), labels)
            if state.is_new and state.reading is not None:
                found.append((0, state.reading.faces, state.reading.rethrow))
        rest = [s for _, s in clip if s["phase"] == "settled"][-1]["dice"]
        truth = [
            (tuple(sorted(d["face"] for d in rest if d["status"] == "ok")), sum(d["status"] != "ok" for d in rest))
        ]
        totals += score(found, truth)
    return tuple(int(v) for v in totals)


class Labels:
    """A rendered clip's labels as readings: a die that moved since the last frame reads as a random face
    (motion blur), and the glare frame misreads one die."""

    def __init__(self) -> None:
        self.sidecar: dict[str, Any] = {"dice": [], "bad": None}
        self.previous: dict[str, Any] = self.sidecar
        self.rng = np.random.default_rng(0)

    def read(self, frame: np.ndarray, /) -> Reading:
        dice = self.sidecar["dice"]
        if not dice:
            return Reading.empty((frame.shape[1], frame.shape[0]))
        before = [d["box"] for d in self.previous["dice"]]
        moved = [not any(np.abs(np.subtract(d["box"], b)).max() < 1 for b in before) for d in dice]
        faces = [int(self.rng.integers(1, 7)) if m else d["face"] for d, m in zip(dice, moved, strict=True)]
        if self.sidecar["bad"] == "glare":
            faces[0] = faces[0] % 6 + 1
        return Reading(
            xyxy=[d["box"] for d in dice], confidence=[0.9] * len(dice),
            face=[0 if d["status"] == "cocked" else f for d, f in zip(dice, faces, strict=True)],
            face_confidence=[0.9] * len(dice), status=[d["status"] for d in dice],
        )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--throws", type=int, default=20, help="throws per scripted table (and in the video)")
    parser.add_argument("--seeds", type=int, default=5, help="scripted tables for throw detection")
    parser.add_argument("--clips", type=int, default=3, help="pybullet clips for throw detection (0: none)")
    parser.add_argument("--models", type=Path, help="ONNX model folder (default: bundled)")
    parser.add_argument("--no-model", action="store_true", help="skip the real DiceReader")
    parser.add_argument(
        "--compare-config",
        type=override_arg,
        default=None,
        metavar="FIELD=VALUE",
        help="also time a DiceReader with one ReaderConfig field changed, e.g. face_views=2",
    )
    args = parser.parse_args()

    readers: dict[str, FrameReader] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.avi"
        sidecars = record(path, args.throws)
        readers["label reader"] = Replay(sidecars)
        if not args.no_model:
            try:
                from farklecam.vision.pose.view_search import VerticalMemory
                from farklecam.vision.reader import DiceReader, ReaderConfig

                # As `farklecam live` builds it: one fixed camera, whose vertical is learned once.
                readers["DiceReader"] = DiceReader(args.models).with_vertical_memory(VerticalMemory())
                if args.compare_config is not None:
                    field, value = args.compare_config
                    config = dataclasses.replace(ReaderConfig(), **{field: value})
                    other = DiceReader(args.models, config=config).with_vertical_memory(VerticalMemory())
                    readers[f"DiceReader {field}={value!r}"] = other
            except Exception as exc:  # a benchmark reports what it could not measure
                print(f"(no DiceReader: {exc})")
        rows = speed(path, sidecars, readers)
    still = sum(s["phase"] != "moving" and s["phase"] != "clear" for s in sidecars)
    print(f"live pipeline speed: recorded scripted table, {SIZE[0]}x{SIZE[1]} MJPG, {len(sidecars)} frames "
          f"({still} still), {args.throws} throws")  # fmt: skip
    print(table(("stage", "frames", "reads", "wall s", "fps", "cpu ms/frame"), rows))
    print()
    detection = [("scripted tables", *demo_detection(args.throws, args.seeds))]
    if args.clips and (synthetic := synthetic_detection(args.clips)) is not None:
        detection.append(("rendered throw clips 160x120", *synthetic))
    print("throw detection (one result per throw)")
    print(table(("sequence", "true throws", "detected", "right faces", "duplicates", "missed"), detection))
    return 0


if __name__ == "__main__":
    sys.exit(main())
