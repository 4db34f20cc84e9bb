"""Many camera tables on one server: frames answered per table, throws right, and the lag after rest.

    python bench/tables.py N VIDEO... [--url ws://HOST:PORT] [--jpeg-quality 80] [--seed 0] [--why]

Starts ``farklecam serve`` on a free loopback port (or uses ``--url``) and streams N
tables at once through ``/ws/table/-``, as the page does: each table is a camera
playing one of the VIDEOs in real time (table i plays VIDEO i mod the count, from a
start staggered by up to a second), keeps one frame in flight and, when an answer
comes, sends the newest frame the camera has (a slow server sees fewer frames, never
a queue). Each VIDEO needs the truth its generator wrote beside it
(``python -m farklecam.datasets.synthetic.throw_videos``: ``NAME.json``).

Per table it prints the frames answered a second, the throws reported right (the
first report of a throw has its faces and rethrow count; a die less than half in view
may be in it or not, as ``farklecam.models.evaluate`` judges occluded dice, unless
``--count-occluded``), extra reports (a second
report of a throw, or one outside any), and the lag from the moment the dice came to
rest to the answer that reported them; then the totals and the median lag. The
tables stream without a game (the ``-`` table: settle, read and advise), so no
count of dice is expected. A benchmark, not a test: its numbers depend on the
machine and its load (``os.getloadavg`` is printed with them). With ``--why`` it prints,
for every throw a table did not read right, the truth and what the table reported
(each die's face or status, and why a die was ``uncertain``), or that nothing came.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.datasets.yolo import OCCLUDED_BELOW


@dataclass
class Video:
    """A video's frames as the page would send them (JPEG), its frame rate and its truth."""

    name: str
    frames: list[bytes]
    fps: float
    truth: dict[str, Any]

    @classmethod
    def load(cls, path: Path, quality: int) -> Video:
        truth_path = path.with_suffix(".json")
        if not truth_path.exists():
            raise SystemExit(
                f"error: {truth_path} is missing "
                "(write videos with python -m farklecam.datasets.synthetic.throw_videos)"
            )
        capture = cv2.VideoCapture(str(path))
        fps = capture.get(cv2.CAP_PROP_FPS) or 15.0
        frames = []
        while True:
            ok, image = capture.read()
            if not ok:
                break
            ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
            frames.append(jpeg.tobytes())
        capture.release()
        if not frames:
            raise SystemExit(f"error: {path} has no frames that OpenCV can decode")
        return cls(path.name, frames, float(fps), json.loads(truth_path.read_text()))


@dataclass
class TableResult:
    """What one table saw: answers, and each report (video frame, arrival in video seconds, faces, rethrow)."""

    video: Video
    answered: int = 0
    seconds: float = 0.0
    reports: list[tuple[int, float, tuple[int, ...], int]] = field(default_factory=list)
    dice: list[list[dict[str, Any]]] = field(default_factory=list)  # each report's dice, as the page got them

    def score(self, *, count_occluded: bool = False) -> tuple[int, int, int, list[float]]:
        """(throws, right, extra, lags) of this table's reports; see :func:`score_reports`."""
        return score_reports(self.video.truth, self.reports, count_occluded=count_occluded)


def right_answers(throw: dict[str, Any], *, count_occluded: bool = False) -> set[tuple[tuple[int, ...], int]]:
    """Every ``(faces, rethrow)`` a report of ``throw`` may carry and be right.

    The truth's own, and (unless ``count_occluded``) the truth with any of its dice that
    show less than :data:`~farklecam.datasets.yolo.OCCLUDED_BELOW` of themselves left out: finding
    such a die is no error and missing one no miss, as ``python -m farklecam.models.evaluate``
    scores a scene's occluded dice. A die mostly cut off by the picture's edge is one:
    with a game the table then says the count is short rather than scoring it.
    """
    faces, rethrow = tuple(sorted(throw["faces"])), int(throw["rethrow"])
    answers = {(faces, rethrow)}
    if count_occluded:
        return answers
    for label in throw.get("labels", []):
        if float(label.get("visible", 1.0)) >= OCCLUDED_BELOW:
            continue
        for kept, again in list(answers):
            if label["status"] == "ok":
                rest = list(kept)
                rest.remove(int(label["face"]))
                answers.add((tuple(rest), again))
            else:
                answers.add((kept, again - 1))
    return answers


def score_reports(
    truth: dict[str, Any], reports: list[tuple[int, float, tuple[int, ...], int]], *, count_occluded: bool = False
) -> tuple[int, int, int, list[float]]:
    """Judge reports (video frame, time in video seconds, faces, rethrow) against a video's truth.

    A report belongs to the throw its frame belongs to. The first report of a throw made
    after its dice came to rest is judged: right when its faces and rethrow count are
    among :func:`right_answers`. Every other report is extra. Returns (throws, right,
    extra, lags in seconds).
    """
    judged = judge_reports(truth, reports)
    throws = {int(t["throw"]): t for t in truth["throws"]}
    right = sum(
        (tuple(sorted(reports[i][2])), reports[i][3]) in right_answers(throws[k], count_occluded=count_occluded)
        for k, i in judged.items()
    )
    lags = [reports[i][1] - throws[k]["rest_time"] for k, i in sorted(judged.items(), key=lambda kv: kv[1])]
    return len(throws), right, len(reports) - len(judged), lags


def _die_word(die: dict[str, Any]) -> str:
    """A reported die in a word: its face, or its status (and why it is uncertain, with the face it hints)."""
    if die.get("status") == "ok":
        return str(die.get("face"))
    why = f", {die['ambiguity']}" if die.get("ambiguity") else ""
    return f"{die.get('status')}({die.get('face')}{why})"


def wrong_throws(result: TableResult, *, count_occluded: bool = False) -> list[str]:
    """One line per throw of the table's video it did not read right: the truth, and what was reported."""
    judged = judge_reports(result.video.truth, result.reports)
    out = []
    for t in result.video.truth["throws"]:
        i = judged.get(int(t["throw"]))
        said_faces = tuple(sorted(result.reports[i][2])) if i is not None else ()
        if i is not None and (said_faces, result.reports[i][3]) in right_answers(t, count_occluded=count_occluded):
            continue
        said = "nothing reported" if i is None else " ".join(_die_word(d) for d in result.dice[i])
        events = f" [{', '.join(t['events'])}]" if t.get("events") else ""
        out.append(f"throw {t['throw']}{events}: truth {t['faces']} rethrow {t['rethrow']}; reported {said}")
    return out


def judge_reports(truth: dict[str, Any], reports: list[tuple[int, float, tuple[int, ...], int]]) -> dict[int, int]:
    """Which report is judged for which throw: ``{throw: index into reports}`` (see :func:`score_reports`)."""
    throws = {int(t["throw"]): t for t in truth["throws"]}
    frames = truth["frames"]
    judged: dict[int, int] = {}
    for i, (index, arrived, _faces, _rethrow) in enumerate(reports):
        k = int(frames[min(index, len(frames) - 1)]["throw"])
        match = throws.get(k)
        if match is not None and k not in judged and arrived >= match["rest_time"]:
            judged[k] = i
    return judged


async def play(url: str, video: Video, delay: float) -> TableResult:
    """One table: the camera plays ``video`` in real time; one frame in flight, the newest sent."""
    import websockets

    result = TableResult(video)
    await asyncio.sleep(delay)
    async with websockets.connect(url, max_size=None, origin=url.replace("ws://", "http://").split("/ws/")[0]) as ws:  # type: ignore[arg-type]
        start = time.monotonic()
        last = -1
        while True:
            now = time.monotonic() - start
            index = int(now * video.fps)
            if index >= len(video.frames):
                break
            if index == last:  # the answer came before the camera's next frame
                await asyncio.sleep((index + 1) / video.fps - now)
                continue
            await ws.send(video.frames[index])
            answer = json.loads(await ws.recv())
            last = index
            if answer.get("type") != "frame":
                continue
            result.answered += 1
            settle, throw = answer.get("settle") or {}, answer.get("throw")
            if settle.get("phase") == "settled" and throw is not None:
                arrived = time.monotonic() - start
                result.reports.append((index, arrived, tuple(throw["faces"]), int(throw["rethrow"])))
                result.dice.append(list(throw.get("dice", [])))
        result.seconds = time.monotonic() - start
    return result


COUNT_OCCLUDED_HELP = "judge dice under half in view like any other (default: either way is right)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: Path, log: IO[str]) -> tuple[subprocess.Popen[bytes], str]:
    """``farklecam serve`` on a free loopback port, its errors to ``log``; returns it and its table URL once up."""
    port = free_port()
    exe = Path(sys.executable).with_name("farklecam")
    command = [str(exe), "serve", "--port", str(port), "--db", str(db), "--log-level", "warning"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"error: farklecam serve exited with status {server.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return server, f"ws://127.0.0.1:{port}/ws/table/-"
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("error: farklecam serve did not answer within 60 s")


async def run_tables(url: str, videos: list[Video], n: int, seed: int) -> list[TableResult]:
    rng = np.random.default_rng(seed)
    # every table first sends one frame and waits for it: the models load once, before the clock starts
    warm = await play(url, Video("warm-up", videos[0].frames[:2], videos[0].fps, videos[0].truth), 0.0)
    del warm
    tasks = [play(url, videos[i % len(videos)], float(rng.uniform(0, 1))) for i in range(n)]
    return list(await asyncio.gather(*tasks))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, help="tables streaming at once")
    parser.add_argument("videos", type=Path, nargs="+", help="game videos with their truth (NAME.json) beside them")
    parser.add_argument("--url", default=None, help="a running server's table URL (default: start farklecam serve)")
    parser.add_argument("--jpeg-quality", type=int, default=80, help="JPEG quality of the frames sent (default 80)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tables' start offsets")
    parser.add_argument("--why", action="store_true", help="print each throw a table did not read right")
    parser.add_argument("--count-occluded", action="store_true", help=COUNT_OCCLUDED_HELP)
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("N must be at least 1")
    videos = [Video.load(path, args.jpeg_quality) for path in args.videos]
    server = None
    with tempfile.TemporaryDirectory(prefix="farklecam-tables-") as tmp, open(Path(tmp) / "serve.log", "w") as log:
        if args.url is None:
            server, url = start_server(Path(tmp) / "games.sqlite3", log)
        else:
            url = args.url
        try:
            results = asyncio.run(run_tables(url, videos, args.n, args.seed))
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
    total_throws = total_right = total_extra = 0
    all_lags: list[float] = []
    print(f"{args.n} tables on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} after the run")
    print(f"{'table':>5}  {'video':<14} {'answered/s':>10} {'throws right':>12} {'extra':>5} {'median lag s':>12}")
    for i, result in enumerate(results):
        throws, right, extra, lags = result.score(count_occluded=args.count_occluded)
        total_throws, total_right, total_extra = total_throws + throws, total_right + right, total_extra + extra
        all_lags += lags
        lag = f"{statistics.median(lags):.2f}" if lags else "-"
        rate = result.answered / max(result.seconds, 1e-9)
        print(f"{i:>5}  {result.video.name:<14} {rate:>10.1f} {f'{right}/{throws}':>12} {extra:>5} {lag:>12}")
        if args.why:
            for line in wrong_throws(result, count_occluded=args.count_occluded):
                print(f"        {line}")
    rates = [r.answered / max(r.seconds, 1e-9) for r in results]
    median_lag = f"{statistics.median(all_lags):.2f} s" if all_lags else "-"
    print(
        f"all: {total_right}/{total_throws} throws right, {total_extra} extra, answered {min(rates):.1f}-"
        f"{max(rates):.1f} frames/s per table, median lag {median_lag}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
