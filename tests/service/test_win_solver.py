"""Win tables solved in the background (farklecam.service.win_solver): a customised game's advice turns to the chance
to win."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from farklecam.scoring import winprob
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.service.app import create_app
from farklecam.service.settings import Settings
from farklecam.service.win_solver import BackgroundWinSolver, SolveState, installed

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

SMALL: dict[str, object] = {"target": 500, "last_round": False}  # a table solved in well under a second
OTHER: dict[str, object] = {"target": 600, "last_round": False}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path / "cache"))
    winprob.clear_memory_cache()


def wait_for(check: Callable[[], bool], seconds: float = 120.0) -> None:
    """Poll ``check`` until it holds (a child process imports numpy and numba first: seconds)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the background solve did not finish in time"
        time.sleep(0.2)


def rules_of(options: dict[str, object]) -> Rules:
    return get_rules("busche-neller").with_options(options)


def test_one_rule_set_is_solved_at_a_time_and_then_is_ready() -> None:
    solver = BackgroundWinSolver()
    try:
        small, other = rules_of(SMALL), rules_of(OTHER)
        assert solver.request(small) is SolveState.SOLVING
        assert solver.request(small) is SolveState.SOLVING  # not started twice
        assert solver.request(other) is SolveState.BUSY
        wait_for(lambda: solver.request(small) is SolveState.READY)
        assert winprob.ready(small, (0, 0)) and not winprob.ready(other, (0, 0))
        assert solver.request(other) is SolveState.SOLVING  # the next one starts once the first is done
    finally:
        solver.close()


def test_a_table_that_cannot_be_kept_is_not_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(blocker))  # the child's cache cannot be written
    solver = BackgroundWinSolver()
    small = rules_of(SMALL)
    assert solver.request(small) is SolveState.SOLVING
    wait_for(lambda: solver.request(small) is SolveState.FAILED)


def test_close_stops_a_solve_in_progress() -> None:
    solver = BackgroundWinSolver()
    assert solver.request(get_rules("house").with_options({"farkle_penalty": 500})) is SolveState.SOLVING
    solver.close()
    assert solver.request(rules_of(SMALL)) is SolveState.SOLVING  # free again
    solver.close()


def test_a_served_customised_game_turns_to_the_chance_to_win(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "games.sqlite3", solve_win_tables=True)
    body = {"dice": [1, 2, 3, 3, 4, 6], "scores": [400, 0], "preset": "busche-neller", "options": SMALL}
    with TestClient(create_app(settings)) as client:
        assert installed() is not None
        first = client.post("/api/advise", json=body).json()["win"]
        assert not first["available"] and "being solved now" in first["why"]
        wait_for(lambda: client.post("/api/advise", json=body).json()["win"]["available"])
    assert installed() is None  # the server's shutdown takes its solver away


def test_without_a_solver_the_advice_says_how_to_solve(tmp_path: Path) -> None:
    body = {"dice": [1, 2, 3, 3, 4, 6], "scores": [400, 0], "preset": "busche-neller", "options": SMALL}
    with TestClient(create_app(Settings(db_path=tmp_path / "games.sqlite3"))) as client:
        win = client.post("/api/advise", json=body).json()["win"]
    assert not win["available"] and "farklecam solve --players 2" in win["why"]
