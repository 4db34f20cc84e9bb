"""Progressive at a camera table: passed dice are a pass (six after hot dice too), the pass advice reaches the view."""

from __future__ import annotations

from farklecam.scoring.actions import PassedRoll, Roll
from farklecam.scoring.pass_advice import advise_pass
from farklecam.scoring.presets import get_rules
from farklecam.service.live.controller import panel_lines
from farklecam.service.table import TableSession
from farklecam.vision.reading import Reading

PROGRESSIVE = get_rules("progressive")


def reading(faces: list[int]) -> Reading:
    n = len(faces)
    return Reading(
        xyxy=[[40.0 * i, 0.0, 40.0 * i + 30, 30.0] for i in range(n)],
        confidence=[0.9] * n,
        face=faces,
        face_confidence=[0.95] * n,
        status=["ok"] * n,
        image_size=(320, 240),
    )


def _bank_hot_dice(session: TableSession) -> None:
    """Ann throws a straight (hot dice, 1500) and banks it: all six dice pass to Bob with 1500."""
    session.throw(reading([1, 2, 3, 4, 5, 6]))
    session.keep((1, 2, 3, 4, 5, 6))
    session.bank()


def test_six_passed_dice_after_hot_dice_are_a_pass_and_keep_the_total() -> None:
    session = TableSession(PROGRESSIVE, ["Ann", "Bob"])
    _bank_hot_dice(session)
    view = session.view()
    assert view.pass_advice is not None and view.pass_advice.take
    assert (view.pass_advice.dice, view.pass_advice.total) == (6, 1500)
    assert view.to_dict()["pass_advice"]["text"].startswith("take the 6 passed dice for 1500")
    panel = " ".join(line.strip() for line in panel_lines(view))  # wrapped to the panel's width
    assert f"passed: {view.pass_advice.text}" in panel  # the live window's panel says it too
    view = session.throw(reading([5, 2, 2, 3, 4, 6]))
    assert session.game.actions_in_force[-1] == PassedRoll((2, 2, 3, 4, 5, 6))
    assert view.turn_total == 1500 and "passed dice, on 1500" in view.message and view.pass_advice is None


def test_fewer_passed_dice_or_all_six_fresh_are_told_apart_by_their_count() -> None:
    session = TableSession(PROGRESSIVE, ["Ann", "Bob"])
    session.throw(reading([1, 1, 1, 2, 3, 4]))
    session.keep((1, 1, 1))
    session.bank()  # Ann banks 1000 with three dice to pass
    offered = session.game.passed
    assert offered is not None and offered.dice == 3 and offered.total == 1000
    view = session.view()
    # By the chance to win from the scores in turn order: Bob (0) to move, Ann (1000) banked the pass.
    assert view.pass_advice == advise_pass(PROGRESSIVE, 1000, 3, scores=[0, 1000], streaks=[0, 0])
    assert view.pass_advice is not None and view.pass_advice.win is not None
    session.throw(reading([2, 3, 4, 6, 6, 2]))  # Bob throws all six: a fresh start
    assert session.game.actions_in_force[-1] == Roll((2, 2, 3, 4, 6, 6))


def test_the_table_follows_an_organisers_switch_to_progressive() -> None:
    house = get_rules("house")
    session = TableSession(house, ["Ann", "Bob"])
    session.game.apply("rules progressive")
    assert session.rules.piggyback
    _bank_hot_dice(session)
    assert session.view().pass_advice is not None
