"""Game keeping: the rule texts' worked examples as whole turns, and every rule the engine enforces."""

from __future__ import annotations

import pytest

from farklecam.errors import IllegalActionError, InvalidRulesError
from farklecam.scoring.actions import Bank
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase, TurnEnd
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules

BOXED = get_rules("boxed")


def play(game: Game, *texts: str) -> Game:
    for text in texts:
        game.apply(text)
    return game


def new(rules: Rules = BOXED, players: tuple[str, ...] = ("Ann", "Bob"), **kw: object) -> Game:
    return Game(rules, players, first_player=players[0], **kw)  # type: ignore[arg-type]


def rejected(game: Game, action: str, match: str, error: type[Exception] = IllegalActionError) -> str:
    """Apply an illegal action; check the message and that nothing changed."""
    before_state, before_events, before_json = game.state, game.events, game.to_json()
    with pytest.raises(error, match=match) as info:
        game.apply(action)
    assert (game.state, game.events, game.to_json()) == (before_state, before_events, before_json)
    return str(info.value)


# ---------------------------------------------------------------- the boxed text's worked examples
def test_worked_example_one_turn_three_rolls() -> None:
    game = new()
    play(game, "roll 5,5,2,3,4,6", "keep 5,5")
    assert (game.turn_total, game.dice_to_throw, game.phase) == (100, 4, Phase.CAN_BANK_OR_ROLL)
    play(game, "roll 3,3,3,5", "keep 3,3,3,5")
    assert (game.turn_total, game.dice_to_throw, game.hot_dice) == (450, 6, True)
    play(game, "roll 1,1,6,2,6,4", "keep 1,1")
    assert (game.turn_total, game.dice_to_throw) == (650, 4)
    play(game, "bank")
    assert game.scores == {"Ann": 650, "Bob": 0} and game.on_board == {"Ann": True, "Bob": False}
    assert game.current_player == "Bob" and game.phase is Phase.AWAITING_ROLL and game.dice_to_throw == 6
    assert game.turns[-1].end is TurnEnd.BANKED and game.turns[-1].points == 650


def test_worked_example_1100_point_turn() -> None:
    game = play(new(), "roll 6,6,6,1,3,4", "keep 6,6,6,1")
    assert game.turn_total == 700
    play(game, "roll 1,5", "keep 1,5")
    assert (game.turn_total, game.hot_dice, game.dice_to_throw) == (850, True, 6)
    play(game, "roll 2,2,2,5,4,6", "keep 2,2,2,5", "bank")
    assert game.scores["Ann"] == 1100


def test_dice_from_different_rolls_never_join() -> None:
    game = play(new(), "roll 5,5,2,3,4,6", "keep 5", "roll 5,5,2,3,4")
    assert max(k.points for k in game.legal_actions().keeps) == 100  # two single 5s, not three 5s


# ---------------------------------------------------------------- roll-off
def test_roll_off_highest_single_die_starts_and_ties_roll_again() -> None:
    game = Game(BOXED, ["Ann", "Bob", "Cy"])
    assert game.phase is Phase.ROLL_OFF and game.current_player is None
    rejected(game, "roll 1,2,3,4,5,6", "roll-off decides")
    rejected(game, "bank", "cannot bank now")
    play(game, "rolloff Bob 6", "rolloff Ann 2")
    assert game.legal_actions().roll_off == ("Cy",)
    rejected(game, "rolloff Bob 3", "already threw a 6")
    rejected(game, "rolloff Dee 3", "not playing")
    play(game, "rolloff Cy 6")
    assert game.phase is Phase.ROLL_OFF and game.state.roll_off == ("Bob", "Cy")
    rejected(game, "rolloff Ann 6", "out of the roll-off")
    play(game, "rolloff Cy 3", "rolloff Bob 4")
    assert (game.phase, game.current_player, game.roll_off_faces) == (Phase.AWAITING_ROLL, "Bob", {"Cy": 3, "Bob": 4})
    rejected(game, "rolloff Ann 1", "roll-off is over")
    play(game, "roll 2,2,3,3,4,6")  # farkle: turns pass to the left, from Bob to Cy
    assert game.current_player == "Cy"


# ---------------------------------------------------------------- minimums
def test_opening_minimum_must_come_from_one_turn() -> None:
    game = play(new(), "roll 1,2,3,4,6,6", "keep 1")
    message = rejected(game, "bank", "cannot bank 100: the minimum to get on the board is 500")
    assert "Allowed now: roll 5 dice" in message and "Ann to bank 100" in message
    assert not game.is_legal(Bank()) and game.legal_actions().kinds == ("roll", "undo")
    assert game.legal_actions().bank_minimum == 500
    play(game, "roll 1,1,1,2,3", "keep 1,1,1")  # three 1s are 300 in the boxed table: 400
    rejected(game, "bank", "cannot bank 400")
    play(game, "roll 5,5", "keep 5,5", "bank")
    assert game.scores == {"Ann": 500, "Bob": 0} and game.on_board == {"Ann": True, "Bob": False}
    play(game, "roll 2,2,3,3,4,6")  # Bob farkles
    play(game, "roll 5,2,3,4,6,6", "keep 5", "bank")  # once on the board, any amount
    assert game.scores["Ann"] == 550


def test_turn_minimum_applies_on_the_board_too() -> None:
    game = play(new(get_rules("elizabethan")), "roll 1,1,1,2,3,4", "keep 1,1,1", "bank")  # 1000 gets on the board
    assert game.scores["Ann"] == 1000
    play(game, "roll 2,2,3,3,4,6")  # Bob farkles
    play(game, "roll 5,2,3,4,6,6", "keep 5")
    rejected(game, "bank", "cannot bank 50: the minimum per turn is 350")
    play(game, "roll 5,5,5,2,3", "keep 5,5,5", "bank")
    assert game.scores["Ann"] == 1550


# ---------------------------------------------------------------- hot dice
def test_hot_dice_throw_all_again_and_keep_the_total() -> None:
    game = play(new(), "roll 1,2,3,4,5,6", "keep 1,2,3,4,5,6")
    assert (game.turn_total, game.dice_to_throw, game.hot_dice) == (1500, 6, True)
    rejected(game, "roll 1,2,3", "must throw exactly 6 dice, got 3")
    play(game, "roll 1,1,1,1,1,1", "keep 1,1,1,1,1,1", "roll 1,5,2,2,3,4", "keep 1,5", "bank")
    assert game.scores["Ann"] == 1500 + 3000 + 150


def test_must_roll_after_hot_dice() -> None:
    game = play(new(), "roll 1,2,3,4,5,6", "keep 1,2,3,4,5,6")
    assert game.is_legal(Bank())  # by default hot dice may be banked
    rules = BOXED.with_options({"must_roll_after_hot_dice": True})
    game = play(new(rules), "roll 1,2,3,4,5,6", "keep 1,2,3,4,5,6")
    rejected(game, "bank", "hot dice: these rules make Ann throw all 6 dice first")
    assert game.legal_actions().kinds == ("roll", "undo")
    play(game, "roll 5,2,2,3,3,4", "keep 5", "bank")
    assert game.scores["Ann"] == 1550
    game = play(new(rules), "roll 1,2,3,4,5,6", "keep 1,2,3,4,5,6", "roll 2,2,3,3,4,6")
    assert game.scores["Ann"] == 0 and game.turns[-1].end is TurnEnd.FARKLED


def test_zilch_scoreless_six_dice_throw_is_worth_500_and_thrown_again() -> None:
    game = play(new(get_rules("zilch")), "roll 2,3,3,4,6,6")
    assert [(k.keep, k.points, k.hot_dice) for k in game.legal_actions().keeps] == [((2, 3, 3, 4, 6, 6), 500, True)]
    play(game, "keep 2,3,3,4,6,6")
    assert (game.turn_total, game.dice_to_throw) == (500, 6)


def test_five_dice_variant() -> None:
    game = new(BOXED.with_options({"dice": 5}))
    rejected(game, "roll 1,2,3,4,5,6", "must throw exactly 5 dice, got 6")
    play(game, "roll 1,1,1,1,1", "keep 1,1,1,1,1")
    assert (game.turn_total, game.dice_to_throw) == (2000, 5)


# ---------------------------------------------------------------- keeps
def test_illegal_keeps_say_why_and_list_the_legal_ones() -> None:
    game = play(new(), "roll 5,5,2,3,4,6")
    message = rejected(game, "keep 5,2", "not every kept die scores")
    assert "keep one of 5,5 (100) | 5 (50)" in message
    rejected(game, "keep 1", "not all in the roll")
    rejected(game, "bank", "cannot bank now")
    rejected(game, "passed-roll 1,2", "must first deal with the roll")
    play(game, "keep 5")
    rejected(game, "keep 5", "already set aside")
    rules = BOXED.with_options({"must_keep_all_scoring": True})
    rejected(play(new(rules), "roll 5,5,2,3,4,6"), "keep 5", "every scoring die")


# ---------------------------------------------------------------- farkles and the penalty
def test_farkle_is_detected_on_roll_and_loses_the_turn_total() -> None:
    game = play(new(), "roll 1,1,1,5,2,3", "keep 1,1,1,5", "roll 2,3")
    assert game.current_player == "Bob" and game.turn_total == 0 and game.scores["Ann"] == 0
    assert game.turns[-1].end is TurnEnd.FARKLED and game.turns[-1].last_roll == (2, 3)
    assert game.farkle_streaks == {"Ann": 1, "Bob": 0}
    play(game, "roll 2,2,3,3,4,6")  # a farkle can happen on the first roll of a turn
    assert game.current_player == "Ann" and game.farkle_streaks == {"Ann": 1, "Bob": 1}


def test_explicit_farkle_only_when_the_roll_has_no_keep() -> None:
    game = play(new(auto_farkle=False), "roll 5,2,3,4,6,6")
    message = rejected(game, "farkle", "2,3,4,5,6,6 is not a farkle: it can keep 5")
    assert "keep one of 5 (50)" in message
    play(game, "keep 5", "roll 2,3,4,6,6")
    assert game.phase is Phase.AWAITING_KEEP and game.legal_actions().kinds == ("farkle", "undo")
    rejected(game, "bank", "cannot bank now")
    rejected(game, "roll 1,2,3,4,5", "must first deal with the roll")
    play(game, "farkle")
    assert game.current_player == "Bob" and game.farkle_streaks["Ann"] == 1 and game.turn_total == 0
    rejected(game, "farkle", "no scoreless roll")
    rejected(play(new(), "roll 5,2,3,4,6,6"), "farkle", "is not a farkle")


def test_three_farkle_penalty_then_the_streak_resets() -> None:
    rules = BOXED.with_options({"farkle_penalty": 500, "opening_minimum": 0})
    game = play(new(rules), "roll 5,2,3,4,6,6", "keep 5", "bank")
    assert game.scores["Ann"] == 50
    for turn in range(3):
        play(game, "roll 2,2,3,3,4,6")  # Bob
        play(game, "roll 2,2,3,3,4,6")  # Ann
        assert game.farkle_streaks == {"Ann": (turn + 1) % 3, "Bob": (turn + 1) % 3}
    assert game.scores == {"Ann": -450, "Bob": -500}  # scores may go negative
    assert [t.penalty for t in game.turns[-2:]] == [500, 500]
    play(game, "roll 2,2,3,3,4,6", "roll 5,2,3,4,6,6", "keep 5", "bank")  # Bob farkles, Ann banks
    assert game.farkle_streaks == {"Ann": 0, "Bob": 1}


# ---------------------------------------------------------------- Elizabethan: three throws with one die
def test_single_die_gets_three_throws() -> None:
    game = play(new(get_rules("elizabethan")), "roll 1,1,1,5,5,3", "keep 1,1,1,5,5", "roll 3")
    assert (game.phase, game.dice_to_throw, game.single_die_throws_left, game.turn_total) == (
        Phase.AWAITING_ROLL, 1, 2, 1100,
    )  # fmt: skip
    rejected(game, "bank", "cannot bank now")
    assert game.legal_actions().kinds == ("roll", "farkle", "undo")
    play(game, "roll 4", "roll 1", "keep 1")  # the third throw scores: hot dice
    assert (game.turn_total, game.dice_to_throw, game.hot_dice, game.single_die_throws_left) == (1200, 6, True, 3)
    play(game, "bank")
    play(game, "roll 1,1,1,5,5,3", "keep 1,1,1,5,5", "roll 3", "roll 4", "roll 6")  # Bob misses three times
    assert game.scores == {"Ann": 1200, "Bob": 0} and game.turns[-1].end is TurnEnd.FARKLED
    play(game, "roll 1,1,1,5,5,3", "keep 1,1,1,5,5", "roll 3", "farkle")  # Ann concedes after one miss
    assert game.current_player == "Bob" and game.turns[-1].last_roll == (3,) and game.scores["Ann"] == 1200


def test_single_die_gets_one_throw_by_default() -> None:
    game = play(new(), "roll 1,1,1,5,5,3", "keep 1,1,1,5,5", "roll 3")
    assert game.current_player == "Bob" and game.turns[-1].end is TurnEnd.FARKLED


# ---------------------------------------------------------------- progressive: passing dice and score
def test_progressive_passing_1600_1650_1750() -> None:
    """The house text: A banks 1600 "with TWO to pass"; B rolls them, a 5: bank 1650 passing ONE; C rolls a 1."""
    game = new(get_rules("progressive"), ("A", "B", "C"))
    play(game, "roll 1,1,1,5,5,2", "keep 1,1,1,5,5", "roll 1", "keep 1")  # 1200, hot dice
    play(game, "roll 3,3,3,1,2,6", "keep 3,3,3,1", "bank")  # 1600 with two dice to pass
    assert game.scores["A"] == 1600 and game.passed is not None
    assert (game.passed.dice, game.passed.total, game.passed.from_player) == (2, 1600, "A")
    legal = game.legal_actions()
    assert (legal.kinds, legal.dice_to_throw, legal.passed_dice) == (("roll", "passed-roll", "undo"), 6, 2)
    rejected(game, "passed-roll 5,2,3", "must throw exactly 2 dice")
    play(game, "passed-roll 5,2", "keep 5")
    assert (game.turn_total, game.dice_to_throw) == (1650, 1)
    play(game, "bank")  # B gets on the board with the carried total
    assert game.scores == {"A": 1600, "B": 1650, "C": 0} and game.passed is not None and game.passed.dice == 1
    play(game, "passed-roll 1", "keep 1")
    assert (game.turn_total, game.dice_to_throw, game.hot_dice) == (1750, 6, True)
    play(game, "bank")
    assert game.scores == {"A": 1600, "B": 1650, "C": 1750}


def test_progressive_fresh_start_failed_piggyback_and_no_pass_after_a_farkle() -> None:
    game = new(get_rules("progressive"), ("A", "B", "C"))
    play(game, "roll 5,5,5,2,3,4", "keep 5,5,5", "bank")  # 500, three dice to pass
    play(game, "roll 1,2,3,4,6,6", "keep 1")  # B starts fresh instead: from 0
    assert game.turn_total == 100
    play(game, "roll 2,2,3,4,6")  # B farkles: nothing is passed to C
    assert game.passed is None
    rejected(game, "passed-roll 2,3", "no dice were passed")
    play(game, "roll 5,5,5,2,3,4", "keep 5,5,5", "bank")
    play(game, "passed-roll 2,3,4")  # A's piggyback throw scores nothing: a farkle
    assert game.scores == {"A": 500, "B": 0, "C": 500} and game.turns[-1].end is TurnEnd.FARKLED


def test_no_passing_without_piggyback() -> None:
    game = play(new(), "roll 5,5,5,2,3,4", "keep 5,5,5", "bank")
    assert game.passed is None
    rejected(game, "passed-roll 2,3,4", "no dice were passed")


# ----------------------------------------------------------------------------- head start
def test_a_head_start_is_on_the_board_from_the_first_turn_and_replays() -> None:
    game = Game(get_rules("house"), ["Ann", "Bob"], first_player="Ann", head_start={"Bob": 200, "Ann": 0})
    assert game.head_start == {"Bob": 200} and game.scores == {"Ann": 0, "Bob": 200}
    game.apply("roll 2,2,3,4,6,6")  # Ann farkles
    game.apply("roll 5,2,3,4,6,6")
    game.apply("keep 5")
    game.apply("bank")  # Bob's 50 banks, below the opening minimum: his head start put him on the board
    assert game.scores == {"Ann": 0, "Bob": 250}
    plain = Game(get_rules("house"), ["Ann", "Bob"], first_player="Bob")
    plain.apply("roll 5,2,3,4,6,6")
    plain.apply("keep 5")
    assert not plain.is_legal(Bank())
    again = Game.from_dict(game.to_dict())
    assert again == game and again.scores == game.scores
    game.apply("undo")
    assert game.scores["Bob"] == 200


@pytest.mark.parametrize(
    ("head_start", "message"),
    [
        ({"Cy": 100}, "not one of"),
        ({"Bob": 75}, "multiple of 50"),
        ({"Bob": -50}, "multiple of 50"),
        ({"Bob": 10_000}, "multiple of 50 from 0 to 9950"),
        ({"Bob": True}, "multiple of 50"),
    ],
)
def test_a_head_start_the_game_cannot_hold_is_refused(head_start: dict[str, int], message: str) -> None:
    with pytest.raises(InvalidRulesError, match=message):
        Game(get_rules("house"), ["Ann", "Bob"], head_start=head_start)
