"""The organiser's rule change (``ChangeRules``): a logged event that replays, undoes and round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from farklecam.errors import IllegalActionError, InvalidActionError, InvalidRulesError
from farklecam.scoring.actions import ChangeRules, action_from_dict, parse_action
from farklecam.scoring.game import Game
from farklecam.scoring.tournament import table_rules


def _house_game() -> Game:
    return Game(table_rules("house"), ["Ann", "Bob", "Cy"], first_player="Ann")


def test_the_final_switches_to_progressive_between_turns_and_the_next_player_may_build_on_the_bank() -> None:
    game = _house_game()
    for text in ["roll 1,1,1,2,3,4", "keep 1,1,1", "bank"]:
        game.apply(text)
    assert game.passed is None  # house rules pass nothing
    game.apply("rules progressive")
    assert game.rules.piggyback and game.rules.tie == game.initial_rules.tie and game.rules.target == 10_000
    assert game.initial_rules.name == "house" and game.rules.name == "progressive"
    for text in ["roll 5,2,3,4,6,6", "keep 5", "roll 1,1,1,2,3", "keep 1,1,1", "bank"]:
        game.apply(text)
    assert game.passed is not None and game.passed.dice == 2 and game.passed.total == 1050
    game.apply("passed-roll 5,2")
    assert game.current_player == "Cy" and game.turn_total == 1050


def test_the_switch_replays_from_json_and_undo_takes_it_back() -> None:
    game = _house_game()
    game.apply("rules progressive")
    again = Game.from_json(game.to_json())
    assert again == game and again.rules.piggyback
    assert game.to_dict()["rules"]["name"] == "house"
    game.undo()
    assert not game.rules.piggyback and game.rules == game.initial_rules


def test_the_rules_change_only_at_the_start_of_a_turn() -> None:
    game = _house_game()
    game.apply("roll 1,2,3,4,6,6")
    with pytest.raises(IllegalActionError, match="only at the start of a turn"):
        game.apply(ChangeRules("progressive"))
    game.apply("keep 1")
    with pytest.raises(IllegalActionError, match="only at the start of a turn"):
        game.apply("rules progressive")
    assert len(game.events) == 2 and not game.rules.piggyback


def test_an_unknown_preset_is_refused_with_the_list() -> None:
    game = _house_game()
    with pytest.raises(InvalidRulesError, match="progressive"):
        game.apply("rules nosuch")
    with pytest.raises(InvalidActionError, match="rules needs a preset name"):
        parse_action("rules")
    assert not game.events


@given(st.sampled_from(["house", "progressive", "boxed", "elizabethan"]))
def test_the_action_round_trips_through_text_and_json(preset: str) -> None:
    action = ChangeRules(preset)
    assert parse_action(str(action)) == action == action_from_dict(action.to_dict())
