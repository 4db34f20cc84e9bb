"""Real ``uvicorn`` processes on a free loopback port over a given database, for tests that kill or share them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from farklecam.service.db.target import DatabaseTarget, PostgresTarget

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def database_env(target: DatabaseTarget) -> dict[str, str]:
    """The server's ``FARKLECAM_DB``: the file's path, or the URL with its password."""
    return {"FARKLECAM_DB": target.url if isinstance(target, PostgresTarget) else str(target.path)}


@contextmanager
def server(target: DatabaseTarget) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A real ``uvicorn --factory farklecam.service.app:create_app`` process on a free loopback port."""
    port = free_port()
    env = {**os.environ, **database_env(target)}
    cmd = [sys.executable, "-m", "uvicorn", "farklecam.service.app:create_app", "--factory"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("server did not start within 90 s")
            time.sleep(0.2)
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()
