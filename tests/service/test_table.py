"""The table session with the real scoring engine: throws become rolls, commands become actions."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from farklecam.errors import IllegalActionError, StorageError
from farklecam.scoring.actions import Keep, Roll
from farklecam.scoring.advisor import advise
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.presets import get_rules
from farklecam.scoring.setasides import legal_set_asides
from farklecam.scoring.solver import solve
from farklecam.service.live.demo import DemoTable, DemoThrow
from farklecam.service.table import TableSession
from farklecam.vision.reading import Reading

BOXED = get_rules("boxed")


def reading(faces: list[int], statuses: list[str] | None = None) -> Reading:
    n = len(faces)
    statuses = statuses or ["ok"] * n
    return Reading(
        xyxy=[[40.0 * i, 0.0, 40.0 * i + 30, 30.0] for i in range(n)],
        confidence=[0.9] * n,
        face=[0 if s == "cocked" else f for f, s in zip(faces, statuses, strict=True)],
        face_confidence=[0.95] * n,
        status=statuses,
        image_size=(320, 240),
    )


@pytest.fixture
def saved() -> list[str]:
    return []


@pytest.fixture
def table(saved: list[str]) -> TableSession:
    return TableSession(BOXED, ["Ann", "Bob"], saver=saved.append)


def test_a_settled_throw_becomes_a_roll_and_the_suggestion_a_keep() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6), hand=True)], size=(320, 240), seed=2)
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo)
    views = [session.on_frame(frame) for frame in demo]
    assert session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)  # once, despite the hand
    view = views[-1]
    tip = advise((1, 2, 3, 4, 5, 6), BOXED, turn_total=0, on_board=False)
    assert view.options == legal_set_asides((1, 2, 3, 4, 5, 6), BOXED)
    assert view.advice is not None and view.advice.keep == tip.keep and view.expected == pytest.approx(tip.expected)
    assert view.keep_faces == tip.keep and view.reading is not None and view.reading.faces == (1, 2, 3, 4, 5, 6)
    after = session.accept_suggestion()
    assert session.game.actions_in_force[-1] == Keep(tip.keep)
    assert after.game_phase is Phase.CAN_BANK_OR_ROLL and after.turn_total == tip.points
    action, value, _ = solve(BOXED).decide(tip.points, tip.dice_left, on_board=False)
    assert (after.next_action, after.expected) == (action, pytest.approx(value))


def test_dice_lying_in_the_tray_when_the_game_starts_are_shown_but_never_scored() -> None:
    before = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6))], size=(320, 240), seed=2)
    lying = list(before)[-1]  # the script's dice at rest; the demo reads them from its last frame

    class Camera:  # the demo whose frames are being shown reads them
        demo = before

        def read(self, frame: np.ndarray, /) -> Reading:
            return self.demo.read(frame)

    camera = Camera()
    session = TableSession(BOXED, ["Ann", "Bob"], reader=camera)
    views = [session.on_frame(dataclasses.replace(lying, index=i, timestamp=i / 15)) for i in range(40)]
    assert session.game.actions_in_force == ()  # more than a second of still dice: no throw recorded
    assert views[-1].reading is not None and views[-1].reading.faces == (1, 2, 3, 4, 5, 6)  # but shown
    assert "lay in the tray before" in views[-1].message
    camera.demo = DemoTable([DemoThrow((2, 2, 3, 3, 5, 6))], size=(320, 240), seed=7)
    for frame in camera.demo:  # the dice are thrown: they move, then settle elsewhere
        session.on_frame(dataclasses.replace(frame, index=frame.index + 40, timestamp=40 / 15 + frame.timestamp))
    assert session.game.actions_in_force == (Roll((2, 2, 3, 3, 5, 6)),)


def test_after_a_farkle_the_dice_left_lying_are_not_the_next_players_throw() -> None:
    demo = DemoTable([DemoThrow((2, 2, 3, 3, 4, 6))], size=(320, 240), seed=2)  # no scoring die
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo)
    frames, views = [], []
    for frame in demo:  # the demo reads the frame it showed last
        frames.append(frame)
        views.append(session.on_frame(frame))
    assert session.game.actions_in_force == (Roll((2, 2, 3, 3, 4, 6)),) and session.game.current_player == "Bob"
    assert "FARKLE" in " ".join(v.message for v in views)
    end = frames[-1]
    for i in range(1, 40):  # Ann's six dice lie on, more than a second
        session.on_frame(dataclasses.replace(end, index=end.index + i, timestamp=end.timestamp + i / 15))
    assert session.game.actions_in_force == (Roll((2, 2, 3, 3, 4, 6)),) and session.game.current_player == "Bob"
    reopened = TableSession(BOXED, game=Game.from_json(session.game.to_json()), reader=demo)  # a server restart
    for i in range(40):
        reopened.on_frame(dataclasses.replace(end, index=i, timestamp=i / 15))
    assert reopened.game.actions_in_force == (Roll((2, 2, 3, 3, 4, 6)),) and reopened.game.current_player == "Bob"


def test_keep_and_bank_score_for_the_player(table: TableSession) -> None:
    table.throw(reading([1, 1, 1, 1, 2, 3]))
    assert table.game.phase is Phase.AWAITING_KEEP
    table.keep([1, 1, 1, 1])
    view = table.bank()
    assert table.game.scores == {"Ann": 1000, "Bob": 0}
    assert view.player == "Bob" and view.message == "Ann banked 1000"
    assert [line.to_dict() for line in view.scores] == [
        {"player": "Ann", "score": 1000, "on_board": True, "current": False},
        {"player": "Bob", "score": 0, "on_board": False, "current": True},
    ]


def test_accepting_the_advice_throws_on_after_hot_dice_and_banks_a_good_total(table: TableSession) -> None:
    policy = solve(BOXED)
    table.throw(reading([1, 1, 1, 1, 5, 5]))
    table.accept_suggestion()  # four of a kind with a pair: all six dice, hot dice
    assert (table.game.turn_total, table.game.hot_dice) == (1500, True)
    assert table.view().next_action == policy.decide(1500, 0, on_board=False)[0] == "roll"
    view = table.accept_suggestion()
    assert table.expects_throw and "throw 6 dice (hot dice!)" in view.message

    fresh = TableSession(BOXED, ["Ann", "Bob"])
    fresh.throw(reading([1, 1, 1, 1, 2, 3]))
    assert fresh.accept_suggestion().turn_total == 1000
    assert fresh.view().next_action == policy.decide(1000, 2, on_board=False)[0] == "bank"
    fresh.accept_suggestion()
    assert fresh.game.scores == {"Ann": 1000, "Bob": 0}


def test_a_die_to_rethrow_holds_the_roll_back(table: TableSession) -> None:
    view = table.throw(reading([1, 5, 2, 3, 4, 6], ["ok", "ok", "cocked", "ok", "ok", "ok"]))
    assert table.game.actions_in_force == () and view.rethrow == 1 and view.message.startswith("RETHROW 1")
    assert table.expects_throw
    table.throw(reading([1, 5, 2, 3, 4, 6]))
    assert table.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)


@pytest.mark.parametrize(
    ("faces", "message"),
    [([1, 5, 2, 3, 4], "saw 5 dice but 6 must be thrown"), ([1, 5, 2, 3, 4, 6, 6], "saw 7 dice but 6")],
)
def test_the_wrong_number_of_dice_is_not_a_roll(table: TableSession, faces: list[int], message: str) -> None:
    view = table.throw(reading(faces))
    assert table.game.actions_in_force == () and message in view.message


def test_a_throw_before_keeping_is_ignored(table: TableSession) -> None:
    table.throw(reading([1, 5, 2, 3, 4, 6]))
    view = table.throw(reading([2, 2, 3, 3, 4, 6]))
    assert len(table.game.actions_in_force) == 1 and "keep dice from the last roll first" in view.message


def test_picking_dice_with_the_number_keys(table: TableSession) -> None:
    table.throw(reading([1, 5, 5, 2, 3, 4]))
    assert table.toggle(5).selected == (5,)
    assert table.toggle(5).selected == (5, 5)
    assert table.toggle(5).selected == ()  # past the number of 5s: unpick them
    assert "no 6 to keep" in table.toggle(6).message
    table.toggle(1)
    assert table.toggle(5).keep_faces == (1, 5)
    table.keep()
    assert table.game.actions_in_force[-1] == Keep((1, 5)) and table.view().selected == ()


def test_illegal_commands_raise_and_change_nothing(table: TableSession, saved: list[str]) -> None:
    with pytest.raises(IllegalActionError, match="cannot bank"):
        table.bank()
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        table.undo()
    table.throw(reading([1, 5, 2, 3, 4, 6]))
    with pytest.raises(IllegalActionError, match="pick dice to keep first"):
        table.keep()
    with pytest.raises(IllegalActionError):
        table.keep([2])
    with pytest.raises(IllegalActionError, match="cannot throw now"):
        table.roll_again()
    table.keep([1])
    with pytest.raises(IllegalActionError, match="cannot bank"):  # 100 is below the 500 opening minimum
        table.bank()
    assert len(saved) == 2


def test_undo_takes_back_a_misread_roll(table: TableSession) -> None:
    table.throw(reading([2, 2, 3, 3, 4, 6]))
    assert table.game.current_player == "Bob"  # a farkle ends Ann's turn at once
    assert table.view().message.startswith("FARKLE! Ann threw 2 2 3 3 4 6")
    view = table.undo()
    assert view.player == "Ann" and view.game_phase is Phase.AWAITING_ROLL and view.can_undo is False
    table.roll([1, 2, 3, 3, 4, 6])
    assert table.game.current_roll == (1, 2, 3, 3, 4, 6)


def test_every_action_is_saved_and_the_game_replays(table: TableSession, saved: list[str]) -> None:
    table.throw(reading([1, 1, 1, 1, 2, 3]))
    table.keep([1, 1, 1, 1])
    table.roll_again()  # not an action: nothing saved
    table.throw(reading([5, 2]))
    table.keep([5])
    table.bank()
    assert len(saved) == 5
    restored = Game.from_json(saved[-1])
    assert restored == table.game and restored.scores["Ann"] == 1050
    resumed = TableSession(BOXED, game=restored)
    assert resumed.view().player == "Bob" and resumed.view().scores[0].score == 1050


def test_a_failing_saver_is_reported_but_play_goes_on() -> None:
    def broken(_: str) -> None:
        raise StorageError("disk full")

    table = TableSession(BOXED, ["Ann", "Bob"], saver=broken)
    view = table.throw(reading([1, 5, 2, 3, 4, 6]))
    assert table.game.phase is Phase.AWAITING_KEEP and "NOT SAVED: disk full" in view.message


def test_view_is_json_ready(table: TableSession) -> None:
    table.throw(reading([1, 5, 2, 3, 4, 6]))
    data = json.loads(json.dumps(table.view().to_dict()))
    assert data["phase"] == "awaiting_keep" and data["roll"] == [1, 2, 3, 4, 5, 6]
    assert data["advice"]["keep"] and data["options"][0]["points"] == 1500
    assert data["reading"] is None and data["settle"] == "idle"  # no camera frame yet
    assert table.view().to_dict()["scores"][0] == {"player": "Ann", "score": 0, "on_board": False, "current": True}


def test_a_table_without_a_reader_takes_throws_but_not_frames(table: TableSession) -> None:
    from farklecam.vision.camera.sources import Frame

    with pytest.raises(ValueError, match="no reader"):
        table.on_frame(Frame(np.zeros((8, 8, 3), np.uint8), 0, 0.0))


def test_a_game_over_ignores_throws() -> None:
    rules = BOXED.with_options({"target": 1000})
    table = TableSession(rules, ["Ann", "Bob"])
    table.throw(reading([1, 1, 1, 1, 2, 3]))
    table.keep([1, 1, 1, 1])
    table.bank()
    table.throw(reading([2, 2, 3, 3, 4, 6]))  # Bob's last chance: a farkle
    assert table.game.is_over and table.view().winners == ("Ann",)
    assert "game is over" in table.throw(reading([1, 5, 2, 3, 4, 6])).message


def test_a_throw_read_under_its_dices_vertical_asks_for_the_tray_corners() -> None:
    """A camera said to look straight down whose dice showed it tilted: the throw counts, and the table says so."""
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6))], size=(320, 240), seed=2)

    class Tilted:
        def read(self, frame: np.ndarray, /) -> Reading:
            return dataclasses.replace(demo.read(frame), straight_down_doubted=True)

    session = TableSession(BOXED, ["Ann", "Bob"], reader=Tilted())
    views = [session.on_frame(frame) for frame in demo]
    assert session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)
    assert "does not look straight down" in views[-1].message


def test_a_throw_read_with_its_marked_tray_set_aside_asks_for_the_corners_again() -> None:
    """A throw whose settled reading set the marked tray aside (the camera moved) still counts, and says so."""
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6))], size=(320, 240), seed=2)

    class Moved:
        def __init__(self, moved: bool) -> None:
            self.moved = moved

        def read(self, frame: np.ndarray, /) -> Reading:
            return dataclasses.replace(demo.read(frame), tray_set_aside=self.moved)

    session = TableSession(BOXED, ["Ann", "Bob"], reader=Moved(True))
    views = [session.on_frame(frame) for frame in demo]
    assert session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)  # the throw still counts
    assert "mark its corners again" in views[-1].message
    still = TableSession(BOXED, ["Ann", "Bob"], reader=Moved(False))
    quiet = [still.on_frame(frame) for frame in demo]
    assert still.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)  # the same throw, read again
    assert "mark its corners" not in quiet[-1].message


def test_the_player_tells_an_unread_die_and_the_throw_is_scored(table: TableSession) -> None:
    # The one-click fix: the camera could not tell die 2; the player says it shows a 5.
    table.throw(reading([1, 1, 0, 2, 3, 4], ["ok", "ok", "uncertain", "uncertain", "ok", "ok"]))
    assert table.game.actions_in_force == () and table.view().message.startswith("CHECK: say what the 2 unclear")
    with pytest.raises(IllegalActionError, match="not uncertain"):
        table.confirm_face(0, 5)  # a die the camera read is not the player's to tell
    with pytest.raises(IllegalActionError, match="a face is 1-6"):
        table.confirm_face(2, 7)
    told = table.confirm_face(2, 5)  # one die still unread: nothing scored
    assert told.message.startswith("CHECK: say what the 1 unclear die shows")
    assert table.game.actions_in_force == ()
    table.confirm_face(3, 2)
    assert table.game.actions_in_force == (Roll((1, 1, 2, 3, 4, 5)),)
    with pytest.raises(IllegalActionError, match="no settled throw"):
        table.confirm_face(3, 2)  # scored already: a keep is awaited
