"""How fast is the service? /score requests per second and a page frame's round trip through the WebSocket.

    python bench/service_speed.py [--seconds 5] [--frames 60] [--models DIR | --stub]

Starts a real uvicorn server on a free loopback port in a child process (this
same file, ``--serve``), then measures from this process:

* ``POST /api/score``: one client on a keep-alive connection (latency), and four
  clients at once (throughput); each loop stops after ``--seconds`` or 20,000 requests.
* ``POST /api/games/{id}/actions``: actions per second, each committed to SQLite
  (WAL, synchronous=FULL) before the answer.
* ``/ws/table``: a page frame (the example picture at 640 px, JPEG quality 0.8,
  as the page sends it) to its JSON answer: decode, motion gate, read, settle,
  score, advice; without a game and at a game's table.

The frames are read by the real :class:`~farklecam.vision.reader.DiceReader` when the
models are installed (or ``--models`` names them), else (or with ``--stub``) by a
stub that returns the example's labelled dice, which measures everything but the
models (the table says which). The last column is the server process's CPU time
per request or frame, the sturdier number on a busy machine. A benchmark, not a
test: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

EXAMPLE = ROOT / "examples" / "tray_ok.jpg"
LABELS = ROOT / "examples" / "labels" / "tray_ok.json"
MAX_REQUESTS = 20_000


# ----------------------------------------------------------------------------- server side
class StubReader:
    """The example's labelled dice, whatever the frame (the models are measured by bench/read_speed.py)."""

    def __init__(self) -> None:
        self.dice = json.loads(LABELS.read_text(encoding="utf-8"))["dice"]

    def read(self, frame: Any) -> Any:
        from farklecam.vision.reading import Reading

        return Reading(
            xyxy=[d["box"] for d in self.dice],
            confidence=[0.95] * len(self.dice),
            face=[d["face"] for d in self.dice],
            face_confidence=[0.95] * len(self.dice),
            status=[d["status"] for d in self.dice],
            image_size=(frame.shape[1], frame.shape[0]),
        )


def serve(port: int, db: Path, models: Path | None) -> None:
    """The child process: the app with the real reader (``models``) or the stub, on loopback."""
    import uvicorn

    from farklecam.service.app import create_app
    from farklecam.service.deps import ReaderSlot, get_reader_slot
    from farklecam.service.settings import Settings

    app = create_app(Settings(db_path=db, model_dir=models))
    if models is None:
        slot = ReaderSlot(StubReader)
        app.dependency_overrides[get_reader_slot] = lambda: slot
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# ----------------------------------------------------------------------------- client side
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: Path, models: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, __file__, "--serve", str(port), "--db", str(db)]
    if models is not None:
        cmd += ["--models", str(models)]
    proc = subprocess.Popen(cmd, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the server exited during start-up")
        try:
            if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start within 120 s")


def server_cpu_ms(pid: int) -> float | None:
    """CPU time the server process has used (user + system), in ms; None where /proc is missing.

    The sturdier number on a busy machine: other processes stretch the wall clock, not the work done.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def score_loop(base: str, seconds: float, clients: int) -> tuple[int, float, list[float]]:
    """Requests done, elapsed seconds and per-request latencies (ms) of ``clients`` threads."""
    import httpx

    body = {"dice": [1, 1, 1, 5, 3, 4]}
    latencies: list[float] = []
    count = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker() -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            while time.monotonic() < stop:
                with lock:
                    if count[0] >= MAX_REQUESTS:
                        return
                    count[0] += 1
                t0 = time.perf_counter()
                response = client.post("/api/score", json=body)
                ms = (time.perf_counter() - t0) * 1000
                assert response.status_code == 200, response.text
                with lock:
                    latencies.append(ms)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(latencies), time.perf_counter() - started, latencies


def action_loop(base: str, seconds: float) -> tuple[int, float, list[float]]:
    """Committed game actions per second (a turn that always banks 1000, repeated)."""
    import httpx

    turn = ["roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank"]
    latencies: list[float] = []
    with httpx.Client(base_url=base, timeout=10) as client:
        body = {"players": ["Ann", "Bob"], "first_player": "Ann", "options": {"target": 1_000_000}}
        game_id = client.post("/api/games", json=body).json()["id"]
        started = time.perf_counter()
        while time.perf_counter() - started < seconds and len(latencies) < MAX_REQUESTS:
            t0 = time.perf_counter()
            response = client.post(f"/api/games/{game_id}/actions", json={"text": turn[len(latencies) % 3]})
            latencies.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, response.text
    return len(latencies), time.perf_counter() - started, latencies


def page_frame() -> bytes:
    """The example picture as the page sends it: 640 px wide, JPEG quality 0.8."""
    import cv2

    image = cv2.imread(str(EXAMPLE))
    scale = 640 / image.shape[1]
    image = cv2.resize(image, (640, round(image.shape[0] * scale)), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert ok
    return buf.tobytes()


def ws_loop(base: str, path: str, frames: int) -> tuple[int, float, list[float], tuple[list[float], dict[str, Any]]]:
    """Round trips (ms) of ``frames`` page frames, one in flight (as the page does), and the server's own ms.

    Returns:
        frames measured, their seconds, round-trip ms, and (server ms, the last answer).
    """
    from websockets.sync.client import connect

    data = page_frame()
    rtt, server = [], []
    last: dict[str, Any] = {}
    with connect("ws" + base.removeprefix("http") + path, max_size=2**24) as ws:
        for _ in range(3):  # the first frames load the models and warm the caches
            ws.send(data)
            ws.recv(timeout=120)
        started = time.perf_counter()
        for _ in range(frames):
            t0 = time.perf_counter()
            ws.send(data)
            last = json.loads(ws.recv(timeout=60))
            rtt.append((time.perf_counter() - t0) * 1000)
            server.append(float(last.get("ms", 0.0)))
    return frames, time.perf_counter() - started, rtt, (server, last)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each request loop (default 5)")
    parser.add_argument("--frames", type=int, default=60, help="WebSocket frames per table (default 60)")
    parser.add_argument("--models", type=Path, default=None, help="model folder (default: installed, else a stub)")
    parser.add_argument("--stub", action="store_true", help="read frames with the stub even if models are installed")
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve, args.db, args.models)
        return 0

    import tempfile

    models = args.models
    if models is None and not args.stub and (ROOT / "models" / "die_detector.onnx").is_file():
        models = ROOT / "models"
    reader = f"DiceReader ({models})" if models is not None else "the stub reader (labelled example, no models)"
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(Path(tmp) / "bench.sqlite3", models)
        try:
            rows: list[tuple[str, ...]] = []

            def measure(label: str, unit: str, run: Any) -> tuple[list[float], Any]:
                cpu0 = server_cpu_ms(proc.pid)
                n, elapsed, lat, extra = run()
                cpu1 = server_cpu_ms(proc.pid)
                cpu = "" if cpu0 is None or cpu1 is None else f"{(cpu1 - cpu0) / n:.2f}"
                rate = f"{n / elapsed:,.0f} {unit}"
                rows.append((label, rate, f"{statistics.median(lat):.2f}", f"{pct(lat, 0.9):.2f}", cpu))
                return lat, extra

            measure("POST /api/score, 1 client", "req/s", lambda: (*score_loop(base, args.seconds, 1), None))
            measure("POST /api/score, 4 clients", "req/s", lambda: (*score_loop(base, args.seconds, 4), None))
            measure(
                "POST /api/games/{id}/actions (committed)",
                "actions/s",
                lambda: (*action_loop(base, args.seconds), None),
            )
            import httpx

            body = {"players": ["Ann", "Bob"], "first_player": "Ann"}
            game_id = httpx.post(f"{base}/api/games", json=body).json()["id"]
            for label, path in (("no game", "/ws/table/-"), ("game table", f"/ws/table/{game_id}")):
                _, (server, last) = measure(f"WS page frame -> answer, {label}", "frames/s",
                                            lambda path=path: ws_loop(base, path, args.frames))  # fmt: skip
                rows.append((f"  of which server work, {label}", "", f"{statistics.median(server):.2f}",
                             f"{pct(server, 0.9):.2f}", ""))  # fmt: skip
            faces = (last.get("reading") or {}).get("faces")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    headers = ("measure", "rate", "median ms", "p90 ms", "server CPU ms each")
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(5)]
    print(f"farklecam service speed: uvicorn on 127.0.0.1, frames read by {reader}, {os.cpu_count()} CPUs")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(f"last frame's faces: {faces}; frame = {len(page_frame()):,} bytes of JPEG, 640 px wide;")
    print("load average at the end:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
