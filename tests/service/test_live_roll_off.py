"""The roll-off at a camera table (the live window, a tournament table): one settled die per contender, in turn."""

from __future__ import annotations

import argparse
from pathlib import Path

from farklecam.scoring.actions import RollOff
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.presets import get_rules
from farklecam.service.commands.live_verb import LIVE
from farklecam.service.live.app import LiveOptions, open_session
from farklecam.service.live.controller import panel_lines
from farklecam.service.live.demo import DemoTable, DemoThrow
from farklecam.service.live.gamefile import GameFile
from farklecam.service.table import TableSession
from tests.service.test_live import reading

BOXED = get_rules("boxed")


def test_the_live_window_holds_the_roll_off_and_saves_it(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    session = open_session(LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=path, roll_off=True), None)
    view = session.view()
    assert view.game_phase is Phase.ROLL_OFF and "roll-off: Ann throws one die first" in view.message
    assert view.roll_off == ("Ann", "Bob") and "roll-off: Ann throws one die (the highest starts)" in panel_lines(view)
    assert session.expects_throw
    view = session.throw(reading([2, 3]))
    assert "the roll-off is one die: roll-off: Ann throws one die" in view.message and not session.game.events
    view = session.throw(reading([3]))
    assert "Ann threw a 3 in the roll-off; roll-off: Bob throws one die" in view.message
    view = session.throw(reading([3]))  # a tie: both throw again
    assert view.roll_off == ("Ann", "Bob") and "roll-off: Ann throws one die" in view.message
    session.throw(reading([2]))
    view = session.throw(reading([5]))
    assert view.game_phase is Phase.AWAITING_ROLL and view.player == "Bob" and "Bob throws first" in view.message
    assert view.roll_off == () and view.to_dict()["roll_off"] == []
    saved = GameFile(path).load()
    assert saved is not None and saved.actions_in_force[-1] == RollOff("Bob", 5) and saved.current_player == "Bob"


def test_a_settled_single_die_from_the_camera_is_the_roll_off_throw() -> None:
    demo = DemoTable([DemoThrow((4,), hand=True)], size=(320, 240), seed=3)
    session = TableSession(BOXED, reader=demo, game=Game(BOXED, ["Ann", "Bob"]))  # a tournament table: no first player
    for frame in demo:
        session.on_frame(frame)
    assert session.game.actions_in_force == (RollOff("Ann", 4),)


def test_without_the_flag_the_first_player_starts_and_the_verb_takes_it(tmp_path: Path) -> None:
    session = open_session(LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=tmp_path / "g.json"), None)
    assert session.game.phase is Phase.AWAITING_ROLL and session.game.current_player == "Ann"
    parser = argparse.ArgumentParser()
    LIVE.configure(parser)
    assert parser.parse_args(["--demo", "--roll-off"]).roll_off and not parser.parse_args(["--demo"]).roll_off
