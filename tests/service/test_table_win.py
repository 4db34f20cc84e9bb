"""The camera table's view carries advice by the chance to win from the game's scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from farklecam.scoring import winprob
from farklecam.scoring.presets import get_rules
from farklecam.service.table import TableSession


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARKLECAM_CACHE_DIR", str(tmp_path))
    winprob.clear_memory_cache()


def test_unsolved_rules_say_so_in_the_view() -> None:
    table = TableSession(get_rules("boxed").with_options({"target": 5000}), ["Ann", "Bob"])
    view = table.roll((1, 5, 2, 3, 4, 6))
    assert view.win is not None and view.win["available"] is False
    assert view.to_dict()["win"] == view.win


def test_a_preset_advises_by_the_chance_to_win_from_the_first_roll() -> None:
    view = TableSession(get_rules("zilch"), ["Ann", "Bob"]).roll((1, 5, 2, 3, 4, 6))
    assert view.win is not None and view.win["available"]  # its table ships solved: nothing to wait for


def test_solved_rules_advise_by_the_chance_to_win() -> None:
    rules = get_rules("busche-neller").with_options({"target": 500, "last_round": False})
    winprob.solve_win(rules)
    table = TableSession(rules, ["Ann", "Bob"])
    view = table.roll((1, 5, 2, 3, 4, 6))
    assert view.win is not None and view.win["available"] and view.win["scores"] == [0, 0]
    expected = winprob.advise_win((1, 2, 3, 4, 5, 6), rules, (0, 0))
    assert (tuple(view.win["keep"]), view.win["action"]) == (expected.keep, expected.action)
    assert view.win["win_probability"] == pytest.approx(expected.win)


def test_no_roll_no_win_advice() -> None:
    assert TableSession(get_rules("boxed"), ["Ann", "Bob"]).view().win is None
