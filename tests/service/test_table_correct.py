"""Correcting any die of a settled throw at the table: through the game's log when the game took the throw."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from farklecam.errors import IllegalActionError
from farklecam.scoring.actions import Correct, Keep, Roll, Undo
from farklecam.scoring.advisor import advise
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.presets import get_rules
from farklecam.service.corrections import DieCorrection
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


def test_a_misread_face_of_a_recorded_roll_is_corrected_through_the_log(table: TableSession, saved: list[str]) -> None:
    table.throw(reading([1, 6, 2, 3, 5, 5]))  # the second die is a 5, read as a 6
    assert table.game.current_roll == (1, 2, 3, 5, 5, 6)
    view = table.correct(1, "face", 5)
    assert table.game.actions_in_force == (Roll((1, 2, 3, 5, 5, 6)), Correct(2, "face", 5, (1, 2, 3, 5, 5, 5)))
    assert view.message == "die #2 is a 5: Ann threw 1 2 3 5 5 5"
    assert view.roll == (1, 2, 3, 5, 5, 5) and view.options[0].points == 600  # rescored: three 5s and the 1
    tip = advise((1, 2, 3, 5, 5, 5), BOXED, turn_total=0, on_board=False)
    assert view.advice is not None and view.advice.keep == tip.keep  # the advice follows
    assert table.settled_throw is not None and table.settled_throw.faces == (1, 2, 3, 5, 5, 5)
    assert Game.from_json(saved[-1]) == table.game and len(saved) == 2  # saved as an event, replayed alike
    view = table.undo()  # the correction is taken back: the roll as read, and the throw as the camera read it
    assert view.roll == (1, 2, 3, 5, 5, 6) and table.settled_throw is not None
    assert table.settled_throw.faces == (1, 2, 3, 5, 5, 6)


def test_a_misread_that_farkled_gives_the_turn_back(table: TableSession) -> None:
    table.throw(reading([2, 2, 3, 4, 6, 6]))
    assert table.game.current_player == "Bob"
    view = table.correct(5, "face", 5)
    assert (view.player, view.game_phase, view.roll) == ("Ann", Phase.AWAITING_KEEP, (2, 2, 3, 4, 5, 6))
    table.correct(4, "face", 3)  # a second misread die of the same throw: one more correction
    assert table.game.current_roll == (2, 2, 3, 3, 4, 5)
    view = table.correct(5, "face", 6)  # that one was a 6 after all: nothing scores, the farkle is back
    assert view.message == "FARKLE! die #6 is a 6: Ann threw 2 2 3 3 4 6; Bob is next"
    assert table.game.current_player == "Bob" and table.game.turns[-1].last_roll == (2, 2, 3, 3, 4, 6)
    view = table.undo()
    assert (view.player, view.roll) == ("Ann", (2, 2, 3, 3, 4, 5))


def test_a_die_said_to_lean_takes_the_throw_back_until_it_is_thrown_again(table: TableSession) -> None:
    table.throw(reading([1, 5, 2, 3, 4, 6]))
    view = table.correct(3, "cocked")
    assert table.game.actions_in_force[-1] == Correct(4, "cocked")
    assert view.game_phase is Phase.AWAITING_ROLL and view.rethrow == 1 and table.expects_throw
    assert view.message == "die #4 leans: the throw is taken back; RETHROW 1: throw the leaning or off-tray dice again"
    table.correct(3, "face", 1)  # it lay flat after all: the same throw comes back, corrected
    assert table.game.current_roll == (1, 1, 2, 4, 5, 6)
    assert [str(e.action) for e in table.game.events] == [
        "roll 1,2,3,4,5,6",
        "correct 4 cocked",
        "correct 4 face 1 roll 1,1,2,4,5,6",
    ]
    table.throw(reading([1, 1, 2, 4, 5, 6]))  # a new throw: nothing to correct from the last one
    assert "keep dice from the last roll first" in table.view().message


def test_a_throw_held_back_is_offered_again_as_corrected(table: TableSession) -> None:
    # The camera called a flat die leaning: nothing was scored, the players say it shows a 5.
    view = table.throw(reading([1, 5, 2, 3, 4, 6], ["ok", "ok", "cocked", "ok", "ok", "ok"]))
    assert table.game.actions_in_force == () and view.rethrow == 1
    view = table.correct(2, "face", 5)
    assert table.game.actions_in_force == (Roll((1, 3, 4, 5, 5, 6)),)  # the throw itself goes in the log
    assert view.message == "die #3 is a 5: Ann threw 1 3 4 5 5 6"
    table.undo()
    assert table.game.actions_in_force == ()


def test_corrections_that_do_not_fit_are_refused_and_change_nothing(table: TableSession, saved: list[str]) -> None:
    with pytest.raises(IllegalActionError, match="no settled throw to correct"):
        table.correct(0, "face", 5)
    table.throw(reading([1, 5, 2, 3, 4, 6]))
    for args, match in (
        ((6, "face", 5), "no die #7: this throw has dice #1-#6"),
        ((0, "face", 7), "a face is 1-6"),
        ((0, "face", 1), "die #1 already reads 1"),
        ((0, "flipped", None), "a die is corrected with face, cocked, off-tray or not-a-die"),
    ):
        with pytest.raises(IllegalActionError, match=match):
            table.correct(*args)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="lies there already"):
        table.add_die(10, 10, 4)
    with pytest.raises(IllegalActionError, match="outside the picture"):
        table.add_die(400, 10, 4)
    table.keep([1])
    with pytest.raises(IllegalActionError, match="the game has moved on from this throw"):
        table.correct(1, "face", 1)
    assert len(saved) == 2 and table.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)), Keep((1,)))


def test_an_undo_from_another_device_takes_the_correction_back_here_too(table: TableSession) -> None:
    table.throw(reading([1, 6, 2, 3, 5, 5]))
    table.correct(1, "face", 5)
    table.game.apply(Undo())  # the page's Undo button: the same game object, changed outside the table
    assert table.settled_throw is not None and table.settled_throw.faces == (1, 2, 3, 5, 5, 6)
    table.correct(1, "face", 4)  # corrections build on the throw as the game has it now
    assert [str(e.action) for e in table.game.events][-1] == "correct 2 face 4 roll 1,2,3,4,5,5"


def test_each_correction_is_handed_on_and_a_failure_there_is_only_reported() -> None:
    handed: list[DieCorrection] = []
    table = TableSession(BOXED, ["Ann", "Bob"], on_correct=handed.append)
    first = reading([1, 6, 2, 3, 5, 5])
    table.throw(first)
    table.correct(1, "face", 5)
    table.add_die(300, 100, 4)  # a seventh die: the throw is taken back (7 dice, 6 thrown)
    assert [(c.fix, c.index, c.face) for c in handed] == [("face", 1, 5), ("add", None, 4)]
    assert handed[0].reading is first and handed[0].box == (40.0, 0.0, 70.0, 30.0)
    assert handed[1].box == pytest.approx((285.0, 85.0, 315.0, 115.0))  # as large as the other dice
    assert table.game.phase is Phase.AWAITING_ROLL and "7 dice but 6 were thrown" in table.view().message

    def broken(_: DieCorrection) -> None:
        raise RuntimeError("profile store is read-only")

    table.on_correct = broken
    view = table.correct(6, "not-a-die")  # the throw of six comes back; the learner's failure is only news
    assert table.game.current_roll == (1, 2, 3, 5, 5, 5)
    assert view.message.endswith("; the correction was not handed on: profile store is read-only")


# ------------------------------------------------------------------ from the camera
class Misread:
    """The demo table's reader, with one die of every read changed (the reader's mistake to correct)."""

    def __init__(self, demo: DemoTable, die: int, face: int) -> None:
        self.demo, self.die, self.face = demo, die, face

    def read(self, frame: np.ndarray, /) -> Reading:
        read = self.demo.read(frame)
        if len(read) <= self.die:
            return read
        faces = read.face.copy()
        faces[self.die] = self.face
        return dataclasses.replace(read, face=faces)


def play(session: TableSession, demo: DemoTable) -> None:
    for frame in demo:
        session.on_frame(frame)


def test_a_camera_throw_misread_is_corrected_and_the_view_shows_it_corrected() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6), glare=False)], size=(320, 240), seed=2)
    session = TableSession(BOXED, ["Ann", "Bob"], reader=Misread(demo, 0, 2))  # the 1 read as a 2
    play(session, demo)
    assert session.game.actions_in_force == (Roll((2, 2, 3, 4, 5, 6)),)
    throw = session.settled_throw
    assert throw is not None
    die = int(np.flatnonzero(throw.face == 2)[0])
    view = session.correct(die, "face", 1)
    assert session.game.current_roll == (1, 2, 3, 4, 5, 6) and view.options[0].points == 1500
    assert view.corrected and view.reading is not None and view.reading.faces == (1, 2, 3, 4, 5, 6)
    assert view.to_dict()["reading"]["faces"] == [1, 2, 3, 4, 5, 6] and view.to_dict()["corrected"] is True


def test_a_die_the_camera_missed_is_added_and_the_throw_scored() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4), glare=False)], size=(320, 240), seed=2)  # five of six seen
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo)
    play(session, demo)
    assert session.game.actions_in_force == () and "saw 5 dice but 6 must be thrown" in session.view().message
    throw = session.settled_throw
    assert throw is not None and len(throw) == 5
    x1, y1, x2, y2 = throw.xyxy.min(axis=0)[0], throw.xyxy.min(axis=0)[1], *throw.xyxy.max(axis=0)[2:]
    spot = next((x, y) for x in np.linspace(5, 315, 32) for y in np.linspace(5, 235, 24)
                if not (x1 - 40 < x < x2 + 40 and y1 - 40 < y < y2 + 40))  # fmt: skip
    view = session.add_die(*spot, 6)
    assert session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)
    assert view.message == "a missed 6 is added: Ann threw 1 2 3 4 5 6"
    assert view.reading is not None and len(view.reading) == 6 and view.corrected


def test_dice_that_lay_in_the_tray_before_are_no_throw_to_correct() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6))], size=(320, 240), seed=2)
    lying = list(demo)[-1]
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo)
    for i in range(40):
        session.on_frame(dataclasses.replace(lying, index=i, timestamp=i / 15))
    assert session.view().reading is not None and session.settled_throw is None
    with pytest.raises(IllegalActionError, match="no settled throw to correct"):
        session.correct(0, "face", 2)
