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
        assert solver.request(other) is SolveState.BUSY  # queued behind it
        wait_for(lambda: solver.request(small) is SolveState.READY)
        assert winprob.ready(small, (0, 0))
        assert solver.request(other) in (SolveState.SOLVING, SolveState.READY)  # it started once the first was done
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


LONG: dict[str, object] = {"farkle_penalty": 500}  # minutes to solve: holds the solver while a test queues others


def long_rules(step: int = 0) -> Rules:
    """A rule set that takes minutes, one per ``step`` (each a different table)."""
    return get_rules("house").with_options({**LONG, "target": 10_000 + 50 * step})


def test_rule_sets_asked_for_meanwhile_are_queued_within_bounds_per_client_and_in_all() -> None:
    solver = BackgroundWinSolver(per_client=2, queued=3)
    try:
        assert solver.request(long_rules(0), client="a") is SolveState.SOLVING
        assert solver.request(long_rules(1), client="a") is SolveState.BUSY  # queued behind it
        assert solver.request(long_rules(1), client="b") is SolveState.BUSY  # the same rules: not queued twice
        assert solver.request(long_rules(2), client="a") is SolveState.REFUSED  # a's share is two
        assert solver.request(long_rules(3), client="b") is SolveState.BUSY
        assert solver.request(long_rules(4), client="c") is SolveState.BUSY
        assert solver.request(long_rules(5), client="d") is SolveState.REFUSED  # three wait already
        assert solver.waiting == 3
    finally:
        solver.close()
    assert solver.waiting == 0


def test_the_next_rule_set_in_the_queue_starts_by_itself() -> None:
    solver = BackgroundWinSolver()
    try:
        small, other = rules_of(SMALL), rules_of(OTHER)
        assert solver.request(small, client="a") is SolveState.SOLVING
        assert solver.request(other, client="b") is SolveState.BUSY
        wait_for(lambda: winprob.ready(other, (0, 0)))  # no one asked again: the queue moved on its own
        assert solver.request(other) is SolveState.READY and solver.waiting == 0
    finally:
        solver.close()


def test_each_client_of_a_served_app_has_its_own_share(tmp_path: Path) -> None:
    """Through the app: the requests' address counts, and rules past its share are advised by points only."""
    settings = Settings(db_path=tmp_path / "games.sqlite3", solve_win_tables=True)
    with TestClient(create_app(settings)) as client:
        whys = []
        for step in range(3):
            options = {**LONG, "target": 10_000 + 50 * step}
            body = {"dice": [1, 2, 3, 3, 4, 6], "scores": [400, 0], "preset": "house", "options": options}
            answer = client.post("/api/advise", json=body)
            assert answer.status_code == 200 and answer.json()["action"]  # advice by points all the same
            win = answer.json()["win"]
            assert not win["available"]
            whys.append(win["why"])
        assert "being solved now" in whys[0] and "these rules follow" in whys[1]
        assert "being" not in whys[2] and "follow" not in whys[2]  # past the share: not queued
        solver = installed()
        assert solver is not None and solver.waiting == 1
        assert solver.share("testclient") == 2  # the address the test client connects from
