"""The picture a camera-scored throw keeps: made from the frame it settled on, handed on with its event's number."""

from __future__ import annotations

import numpy as np

from farklecam.errors import StorageError
from farklecam.scoring.actions import Roll
from farklecam.scoring.presets import get_rules
from farklecam.service.live.demo import DemoTable, DemoThrow
from farklecam.service.table import TableSession
from farklecam.service.throw_picture import ThrowPicture, reading_from_record

BOXED = get_rules("boxed")


class Kept:
    """An ``on_throw`` hook that keeps what it is given."""

    def __init__(self) -> None:
        self.pictures: list[tuple[int, ThrowPicture]] = []

    def __call__(self, seq: int, picture: ThrowPicture) -> None:
        self.pictures.append((seq, picture))


def play(session: TableSession, demo: DemoTable) -> None:
    for frame in demo:
        session.on_frame(frame)


def test_a_camera_throw_keeps_its_settled_frame_and_a_throw_entered_by_hand_none() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6), glare=False)], size=(1280, 720), seed=2)
    kept = Kept()
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo, on_throw=kept)
    session.roll((2, 2, 3, 4, 6, 6))  # Ann farkles, typed by hand: no picture
    play(session, demo)  # Bob throws in view of the camera
    assert [str(e.action) for e in session.game.events] == ["roll 2,2,3,4,6,6", "roll 1,2,3,4,5,6"]
    [(seq, picture)] = kept.pictures
    assert seq == 2 and (picture.width, picture.height) == (640, 360) and picture.told == ()
    image = np.frombuffer(picture.jpeg, np.uint8)
    assert image[:3].tolist() == [0xFF, 0xD8, 0xFF]  # a JPEG
    read = reading_from_record(picture.reading)
    assert read.faces == (1, 2, 3, 4, 5, 6) and read.image_size == (640, 360)
    settled = session.settled_throw
    assert settled is not None
    assert np.allclose(read.xyxy, settled.xyxy / 2, atol=0.1)  # the dice where they lie in the small picture
    assert picture.reading["frame_size"] == [1280, 720]


def test_a_throw_held_back_keeps_what_the_players_said_before_it_was_scored() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4), glare=False)], size=(320, 240), seed=2)  # five of six seen
    kept = Kept()
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo, on_throw=kept)
    play(session, demo)
    assert kept.pictures == [] and session.game.events == ()  # held back: nothing scored, nothing kept
    throw = session.settled_throw
    assert throw is not None
    far = (5.0, 5.0) if throw.xyxy[:, :2].min() > 60 else (315.0, 235.0)
    session.add_die(*far, 6)
    assert session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)
    [(seq, picture)] = kept.pictures
    assert seq == 1 and picture.told == ("a missed 6 is added",)
    assert len(picture.reading["dice"]) == 5  # the reading as read: the camera saw five


def test_a_throw_not_saved_keeps_no_picture_and_a_picture_not_kept_is_only_reported() -> None:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6), glare=False)], size=(320, 240), seed=2)
    kept = Kept()

    def broken(_: str) -> None:
        raise StorageError("disk full")

    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo, saver=broken, on_throw=kept)
    play(session, demo)
    assert len(session.game.events) == 1 and kept.pictures == []  # the throw is not kept: nor its picture
    assert "NOT SAVED" in session.view().message

    def refused(_: int, __: ThrowPicture) -> None:
        raise ValueError("this game keeps 1000 pictures")

    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6), glare=False)], size=(320, 240), seed=2)
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo, on_throw=refused)
    play(session, demo)
    assert [str(e.action) for e in session.game.events] == ["roll 1,2,3,4,5,6"]  # scored all the same
    assert session.view().message.endswith("; the throw's picture was not kept: this game keeps 1000 pictures")
