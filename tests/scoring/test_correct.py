"""Correcting a misread die: a log event that plays the latest throw again, undone and replayed like any action."""

from __future__ import annotations

import json

import pytest

from farklecam.errors import IllegalActionError
from farklecam.scoring.actions import Correct, PassedRoll, Roll, RollOff, parse_action
from farklecam.scoring.events import Event, seqs_in_force
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase, TurnEnd
from farklecam.scoring.presets import get_rules

BOXED = get_rules("boxed")


def play(game: Game, *texts: str) -> Game:
    for text in texts:
        game.apply(text)
    return game


def new(rules: str = "boxed", players: tuple[str, ...] = ("Ann", "Bob"), first: str | None = "Ann") -> Game:
    return Game(get_rules(rules), players, first_player=first)


def replayed(game: Game) -> Game:
    """The game rebuilt from its log, as a server reopens it: the same game, and the same throw open to correction."""
    again = Game.from_json(json.dumps(json.loads(game.to_json())))
    assert again == game and again.open_throw == game.open_throw
    texts = [parse_action(str(e.action)) for e in game.events]  # the text form replays the same game too
    assert Game.from_dict({**game.to_dict(), "events": [Event(i, a).to_dict() for i, a in enumerate(texts, 1)]}) == game
    return again


def test_a_misread_that_farkled_is_corrected_and_the_turn_comes_back() -> None:
    game = play(new(), "roll 2,2,3,4,6,6")  # a 5 read as a 6: no die scores, Ann's turn is gone
    assert game.current_player == "Bob" and game.turns[-1].end is TurnEnd.FARKLED
    assert game.open_throw is not None and game.open_throw.player == "Ann" and game.open_throw.dice == 6
    play(game, "correct 6 face 5 roll 2,2,3,4,5,6")
    assert (game.current_player, game.phase, game.current_roll) == ("Ann", Phase.AWAITING_KEEP, (2, 2, 3, 4, 5, 6))
    assert game.turns == () and game.open_throw is not None and game.open_throw.throw == Roll((2, 2, 3, 4, 6, 6))
    assert [str(e.action) for e in replayed(game).events] == ["roll 2,2,3,4,6,6", "correct 6 face 5 roll 2,2,3,4,5,6"]
    play(game, "undo")  # the correction is taken back: the throw as read, and its farkle
    assert game.current_player == "Bob" and game.turns[-1].last_roll == (2, 2, 3, 4, 6, 6)
    assert seqs_in_force(game.events) == [1]
    replayed(game)


def test_a_die_that_leans_takes_the_throw_back_and_a_second_correction_builds_on_the_first() -> None:
    game = play(new(), "roll 1,5,2,3,4,6", "keep 1", "roll 5,5,2,3,4")
    play(game, "correct 3 cocked")  # no roll: the throw is taken back, the table waits for it again
    assert (game.phase, game.turn_total, game.dice_to_throw, game.current_roll) == (
        Phase.CAN_BANK_OR_ROLL, 100, 5, (1, 2, 3, 4, 5, 6)
    )  # fmt: skip
    play(game, "correct 3 face 5 roll 5,5,5,3,4")  # then said to lie flat after all: the throw is back, corrected
    assert (game.phase, game.current_roll) == (Phase.AWAITING_KEEP, (3, 4, 5, 5, 5))
    play(game, "keep 5,5,5", "bank")
    assert game.scores == {"Ann": 600, "Bob": 0}
    replayed(game)
    play(game, "undo", "undo", "undo")  # bank, keep, the second correction: the throw is taken back again
    assert game.phase is Phase.CAN_BANK_OR_ROLL and game.open_throw is not None


def test_a_correction_needs_an_open_throw_and_the_right_number_of_dice() -> None:
    game = new()
    with pytest.raises(IllegalActionError, match="no throw to correct"):
        game.apply("correct 1 face 5 roll 5")
    play(game, "roll 1,5,2,3,4,6", "keep 1")
    kept = (game.state, game.events)
    with pytest.raises(IllegalActionError, match="undo the keep first"):
        game.apply(Correct(1, "face", 5, (2, 3, 4, 5, 5, 6)))
    assert (game.state, game.events) == kept and not game.is_legal(Correct(1, "face", 5, (2, 3, 4, 5, 5, 6)))
    play(game, "undo")  # the keep: the throw is open to correction again
    rolled = (game.state, game.events)
    with pytest.raises(IllegalActionError, match="exactly 6 dice, got 5"):
        game.apply("correct 6 not-a-die roll 1,2,3,4,5")
    assert (game.state, game.events) == rolled
    assert game.is_legal(Correct(2, "face", 1, (1, 1, 2, 3, 4, 6)))


def test_a_throw_of_passed_dice_stays_one_when_corrected() -> None:
    game = new("progressive", ("A", "B"), "A")
    play(game, "roll 1,1,1,5,5,2", "keep 1,1,1,5,5", "roll 1", "keep 1")
    play(game, "roll 3,3,3,1,2,6", "keep 3,3,3,1", "bank", "passed-roll 6,2")  # B builds on A's 1600: nothing
    assert game.current_player == "A" and game.turns[-1].end is TurnEnd.FARKLED
    play(game, "correct 1 face 5 roll 5,2")
    assert game.open_throw is not None and isinstance(game.open_throw.throw, PassedRoll)
    assert (game.current_player, game.turn_total, game.current_roll) == ("B", 1600, (2, 5))
    replayed(game)


def test_a_roll_off_die_is_corrected_and_the_starter_changes() -> None:
    game = play(new(first=None), "rolloff Ann 5", "rolloff Bob 4")
    assert game.current_player == "Ann"
    play(game, "correct 1 face 6 roll 6")  # Bob's die showed a 6
    assert game.current_player == "Bob" and game.open_throw is not None
    assert game.open_throw.throw == RollOff("Bob", 4) and game.roll_off_faces == {"Ann": 5, "Bob": 6}
    with pytest.raises(IllegalActionError, match="one die"):
        game.apply("correct add 3 roll 3,6")
    replayed(game)


def test_the_throw_that_ended_the_game_may_still_be_corrected() -> None:
    game = Game(BOXED.with_options({"target": 1000}), ("Ann", "Bob"), first_player="Ann")
    play(game, "roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank", "roll 2,2,3,3,4,6")  # Bob's last turn: a farkle
    assert game.is_over and game.winners == ("Ann",)
    play(game, "correct 6 face 1 roll 1,2,2,3,3,4")
    assert not game.is_over and (game.current_player, game.phase) == ("Bob", Phase.AWAITING_KEEP)
    replayed(game)
