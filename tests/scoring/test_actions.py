from __future__ import annotations

import json
from contextlib import AbstractContextManager
from contextlib import nullcontext as does_not_raise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError, InvalidDiceError
from farklecam.scoring.actions import (
    ACTION_TYPES,
    Action,
    Bank,
    Correct,
    Farkle,
    InvalidActionError,
    Keep,
    PassedRoll,
    Roll,
    RollOff,
    Undo,
    action_from_dict,
    parse_action,
)
from farklecam.scoring.events import Event, effective_actions

faces = st.lists(st.integers(1, 6), min_size=1, max_size=6).map(tuple)
names = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
dice_numbers = st.integers(1, 99)
corrections: st.SearchStrategy[Correct] = st.one_of(
    st.builds(Correct, dice_numbers, st.just("face"), st.integers(1, 6), st.none() | faces),
    st.builds(Correct, dice_numbers, st.sampled_from(["cocked", "off-tray"])),
    st.builds(Correct, dice_numbers, st.just("not-a-die"), st.none(), st.none() | faces),
    st.builds(Correct, st.none(), st.just("add"), st.integers(1, 6), st.none() | faces),
)
actions: st.SearchStrategy[Action] = st.one_of(
    corrections,
    st.builds(RollOff, names, st.integers(1, 6)),
    st.builds(Roll, faces),
    st.builds(PassedRoll, faces),
    st.builds(Keep, faces),
    st.just(Bank()),
    st.just(Farkle()),
    st.just(Undo()),
)


@given(actions)
def test_text_json_and_repr_round_trip(action: Action) -> None:
    assert parse_action(str(action)) == action
    assert action_from_dict(json.loads(json.dumps(action.to_dict()))) == action
    namespace = {cls.__name__: cls for cls in ACTION_TYPES}
    assert eval(repr(action), namespace) == action
    assert hash(action) == hash(parse_action(str(action)))


def test_dice_are_sorted_so_reads_of_one_throw_are_equal() -> None:
    assert Roll((5, 5, 2, 3, 4, 6)) == Roll((2, 3, 4, 5, 5, 6)) == parse_action("ROLL 5 5 2 3 4 6")
    assert str(Roll((5, 5, 2, 3, 4, 6))) == "roll 2,3,4,5,5,6"
    assert Roll((1,)) != Keep((1,)) != PassedRoll((1,))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bank", Bank()),
        ("  Farkle ", Farkle()),
        ("undo", Undo()),
        ("keep 1, 5", Keep((1, 5))),
        ("passed-roll 3,5", PassedRoll((3, 5))),
        ('rolloff "Ann Lee" 6', RollOff("Ann Lee", 6)),
        ("rolloff Ann Lee 6", RollOff("Ann Lee", 6)),
        ('rolloff "say \\"hi\\"" 2', RollOff('say "hi"', 2)),
        ("correct 3 face 5 roll 5,5,4,3,2,1", Correct(3, "face", 5, (1, 2, 3, 4, 5, 5))),
        ("Correct #3 FACE 5", Correct(3, "face", 5)),
        ("correct 2 cocked", Correct(2, "cocked")),
        ("correct 4 off-tray", Correct(4, "off-tray")),
        ("correct 7 not-a-die roll 1 2 3 4 5 6", Correct(7, "not-a-die", None, (1, 2, 3, 4, 5, 6))),
        ("correct add 4 roll 1,1,2,3,4,5", Correct(None, "add", 4, (1, 1, 2, 3, 4, 5))),
    ],
)
def test_parse_forms(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    ("text", "raises"),
    [
        ("bank now", pytest.raises(InvalidActionError, match="takes no arguments")),
        ("jump", pytest.raises(InvalidActionError, match="unknown action")),
        ("roll", pytest.raises(InvalidActionError, match="expects faces")),
        ("roll 116", pytest.raises(InvalidActionError, match="expects faces")),
        ("roll 1,7", pytest.raises(InvalidDiceError, match="1-6")),
        ("roll 1,0", pytest.raises(InvalidDiceError, match="1-6")),
        ("keep 1,1,1,1,1,1,1", pytest.raises(InvalidDiceError, match="at most 6")),
        ("rolloff Ann", pytest.raises(InvalidActionError, match="rolloff expects")),
        ("rolloff Ann 9", pytest.raises(InvalidActionError, match="rolloff expects")),
        ('rolloff "Ann 3', pytest.raises(InvalidActionError, match="quoted")),
        ("", pytest.raises(InvalidActionError)),
        ("correct", pytest.raises(InvalidActionError, match="correct N face F")),
        ("correct 3 face 7", pytest.raises(InvalidActionError, match="correct N face F")),
        ("correct add", pytest.raises(InvalidActionError, match="correct add F")),
        ("correct 3 upside-down", pytest.raises(InvalidActionError, match="correct N cocked")),
        ("correct 0 cocked", pytest.raises(InvalidActionError, match="die's number")),
        ("correct 2 cocked roll 1,2,3", pytest.raises(InvalidActionError, match="takes no roll")),
        ("correct 2 face 5 roll 1,1,1,1,1,1,1", pytest.raises(InvalidDiceError, match="at most 6")),
        ("correct 2 face \u00b9", pytest.raises(InvalidActionError, match="correct N face F")),
    ],
)
def test_parse_errors_are_syntax_errors_not_illegal_moves(text: str, raises: AbstractContextManager[Any]) -> None:
    with raises as info:
        parse_action(text)
    assert not isinstance(info.value, IllegalActionError)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("data", "outcome"),
    [
        ({"type": "keep", "faces": [5, 1]}, does_not_raise(Keep((1, 5)))),
        ({"type": "rolloff", "player": "Bo", "face": 4}, does_not_raise(RollOff("Bo", 4))),
        ({"type": "bank", "extra": 1}, pytest.raises(InvalidActionError)),
        ({"type": "roll", "faces": "123"}, pytest.raises(InvalidActionError)),
        ({"type": "roll", "faces": [True]}, pytest.raises(InvalidDiceError)),
        ({"type": "roll", "faces": []}, pytest.raises(InvalidDiceError)),
        ({"type": "rolloff", "player": "", "face": 4}, pytest.raises(InvalidActionError)),
        ({"type": "correct", "die": 2, "fix": "cocked"}, does_not_raise(Correct(2, "cocked"))),
        ({"type": "correct", "fix": "add", "face": 3, "roll": [3, 1]}, does_not_raise(Correct(None, "add", 3, (1, 3)))),
        ({"type": "correct", "die": 2, "fix": "face"}, pytest.raises(InvalidActionError, match="needs the face")),
        ({"type": "correct", "die": 2, "fix": "add", "face": 3}, pytest.raises(InvalidActionError, match="no die")),
        ({"type": "correct", "die": True, "fix": "cocked"}, pytest.raises(InvalidActionError, match="die's number")),
        ({"type": "correct", "die": 2, "fix": "flip"}, pytest.raises(InvalidActionError, match="fix must be one of")),
        ({"type": "correct", "die": 2, "fix": "face", "face": 5, "roll": "55"}, pytest.raises(InvalidActionError)),
        ({"type": "correct", "die": 2}, pytest.raises(InvalidActionError)),
        (["bank"], pytest.raises(InvalidActionError)),
    ],
)
def test_action_from_dict(data: Any, outcome: Any) -> None:
    with outcome as expected:
        assert action_from_dict(data) == expected


def test_actions_are_frozen() -> None:
    roll = Roll((1, 2))
    with pytest.raises(AttributeError):
        roll.faces = (3,)  # type: ignore[misc]


def test_event_round_trip_and_effective_actions() -> None:
    events = [Event(1, Roll((1, 2))), Event(2, Keep((1,)), 12.5), Event(3, Undo()), Event(4, Keep((1,)))]
    assert [Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in events] == events
    assert effective_actions(events) == [Roll((1, 2)), Keep((1,))]
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        effective_actions([Event(1, Undo())])
    for bad in ({"seq": 0, "action": {"type": "bank"}}, {"seq": 1}, {"seq": 1, "action": {"type": "bank"}, "at": "x"}):
        with pytest.raises(InvalidActionError):
            Event.from_dict(bad)
