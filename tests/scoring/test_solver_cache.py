"""Policy caching: disk round trip, corrupt and stale files, an unwritable directory, memory."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from farklecam.scoring import policy_cache, solver
from farklecam.scoring.presets import get_rules
from farklecam.scoring.solver import SOLVER_VERSION, clear_memory_cache, solve

RULES = get_rules("busche-neller")  # the quickest preset to solve
NAME = f"{RULES.key()}-v{SOLVER_VERSION}"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(policy_cache.CACHE_ENV, str(tmp_path))
    clear_memory_cache()
    yield tmp_path / "policies"
    clear_memory_cache()


def _forbid_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(_: object) -> None:
        raise AssertionError("recomputed although a valid cache file exists")

    monkeypatch.setattr(solver, "compute_policy", fail)


def test_env_overrides_directory(cache_dir: Path) -> None:
    assert policy_cache.cache_dir() == cache_dir
    assert policy_cache.cache_path(NAME) == cache_dir / f"{NAME}.npz"


def test_round_trip(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = solve(RULES)
    assert (cache_dir / f"{NAME}.npz").is_file()
    assert not list(cache_dir.glob("*.tmp"))
    clear_memory_cache()
    _forbid_compute(monkeypatch)
    again = solve(RULES)
    assert again is not first
    assert again.expected_turn == first.expected_turn
    assert again.roll_value(350, 3) == first.roll_value(350, 3)
    assert again.bank_at(6) == first.bank_at(6)


def test_memory_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = solve(RULES)
    (cache_dir / f"{NAME}.npz").unlink()
    _forbid_compute(monkeypatch)
    assert solve(RULES) is first
    renamed = RULES.with_options({})
    object.__setattr__(renamed, "name", "my-table")  # same play, another name: same key
    assert solve(renamed) is first


def _npy_bytes() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.arange(3))
    return buffer.getvalue()


@pytest.mark.parametrize("content", [b"", b"not a zip file", b"PK\x03\x04broken", _npy_bytes()])
def test_corrupt_file_is_recomputed(cache_dir: Path, content: bytes) -> None:
    cache_dir.mkdir(parents=True)
    (cache_dir / f"{NAME}.npz").write_bytes(content)
    policy = solve(RULES)
    assert policy.expected_turn == pytest.approx(446.5714403437267)
    clear_memory_cache()
    assert policy_cache.load_arrays(NAME, ("W",)) is not None  # rewritten


def test_stale_or_mismatched_arrays_are_recomputed(cache_dir: Path) -> None:
    good = solve(RULES).to_arrays()
    clear_memory_cache()
    bad = dict(good, W=good["W"][:, :5])
    policy_cache.store_arrays(NAME, bad)
    assert solve(RULES).expected_turn == pytest.approx(446.5714403437267)
    clear_memory_cache()
    policy_cache.store_arrays(NAME, {k: v for k, v in good.items() if k != "S1"})
    assert solve(RULES).roll_value(0, 6) == pytest.approx(446.5714403437267)
    clear_memory_cache()
    policy_cache.store_arrays(NAME, dict(good, W=np.full_like(good["W"], np.nan)))
    assert solve(RULES).expected_turn == pytest.approx(446.5714403437267)


def test_unwritable_directory_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(policy_cache.CACHE_ENV, str(blocker))
    clear_memory_cache()
    assert not policy_cache.store_arrays("x", {"a": np.zeros(1)})
    assert policy_cache.load_arrays("x", ("a",)) is None
    assert solve(RULES).expected_turn == pytest.approx(446.5714403437267)
    clear_memory_cache()


def _touch(path: Path, size: int, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (mtime, mtime))
    return path


def test_disk_cache_keeps_the_most_recently_used_files(cache_dir: Path) -> None:
    files = [_touch(cache_dir / f"k{i}-v{SOLVER_VERSION}.npz", 100, 1_000_000 + i) for i in range(6)]
    removed = policy_cache.prune(max_files=4, max_bytes=10_000)
    assert sorted(removed) == sorted(files[:2])  # the two least recently used
    assert sorted(cache_dir.glob("*.npz")) == sorted(files[2:])
    assert sorted(policy_cache.prune(max_files=4, max_bytes=250)) == sorted(files[2:4])  # bytes bound too
    assert sorted(p.name for p in cache_dir.glob("*.npz")) == [files[4].name, files[5].name]


def test_reading_a_policy_file_makes_it_recent(cache_dir: Path) -> None:
    solve(RULES)
    path = cache_dir / f"{NAME}.npz"
    os.utime(path, (1_000_000, 1_000_000))
    other = _touch(cache_dir / "other-v2.npz", 10, 2_000_000)
    clear_memory_cache()
    solve(RULES)  # read from disk: now the most recently used
    assert policy_cache.prune(max_files=1, max_bytes=10**9) == [other]
    assert path.exists()


def test_writing_prunes_the_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = [_touch(cache_dir / f"old{i}.npz", 10, 1_000_000 + i) for i in range(3)]
    monkeypatch.setattr(policy_cache, "MAX_FILES", 2)
    monkeypatch.setattr(policy_cache.prune, "__defaults__", (2, policy_cache.MAX_BYTES))
    solve(RULES)
    assert sorted(p.name for p in cache_dir.glob("*.npz")) == sorted([stale[2].name, f"{NAME}.npz"])


def test_memory_cache_forgets_the_least_recently_used(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "_MEMORY_SIZE", 2)
    a, b, c = RULES, RULES.with_options({"three_ones": 1500}), RULES.with_options({"three_ones": 500})
    first = solve(a)
    solve(b)
    assert solve(a) is first  # a is now the most recently used ...
    solve(c)  # ... so b is forgotten, not a
    assert solve(a) is first
    assert len(solver._MEMORY) == 2
    assert f"{b.key()}-v{SOLVER_VERSION}" not in solver._MEMORY
