"""Game keeping: the last round, ties, exactly the target, undo, the event log, replay and JSON."""

from __future__ import annotations

import json
from itertools import count

import pytest

from farklecam.errors import GameOverError, IllegalActionError, InvalidRulesError
from farklecam.scoring.actions import Bank, Farkle, Keep, PassedRoll, Roll, RollOff, Undo
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase, TurnEnd
from farklecam.scoring.presets import get_rules
from tests.scoring.test_game import BOXED, new, play, rejected

# ---------------------------------------------------------------- the last round
TO_1000 = BOXED.with_options({"target": 1000})
FOUR_ONES = ("roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank")  # 1000 in the boxed table
FARKLE = "roll 2,2,3,3,4,6"


def test_last_round_each_other_player_gets_one_turn_and_highest_wins() -> None:
    game = play(new(TO_1000, ("A", "B", "C")), *FOUR_ONES)
    assert game.last_round is not None
    assert (game.last_round.trigger, game.last_round.remaining) == ("A", ("B", "C"))
    play(game, FARKLE)  # B's last turn
    assert game.current_player == "C" and game.last_round.remaining == ("C",)
    play(game, "roll 1,2,3,4,5,6", "keep 1,2,3,4,5,6", "bank")  # C passes A; A does not roll again
    assert game.is_over and game.winners == ("C",) and game.phase is Phase.GAME_OVER
    assert game.current_player is None and game.legal_actions().kinds == ("undo",)
    with pytest.raises(GameOverError, match="won by C"):
        game.apply(Roll((1, 2, 3, 4, 5, 6)))
    assert not game.is_legal(Bank())


def test_passing_the_target_in_the_last_round_does_not_start_another() -> None:
    game = play(new(TO_1000, ("A", "B", "C")), *FOUR_ONES, *FOUR_ONES, FARKLE)
    assert game.is_over and game.winners == ("A", "B") and game.last_round.trigger == "A"  # type: ignore[union-attr]


@pytest.mark.parametrize("tie", ["shared", "extra_round"])
def test_ties_shared_or_extra_round(tie: str) -> None:
    rules = TO_1000.with_options({"tie": tie})
    game = play(new(rules, ("A", "B", "C")), *FOUR_ONES, *FOUR_ONES, FARKLE)
    if tie == "shared":
        assert game.is_over and game.winners == ("A", "B")
        return
    assert not game.is_over and game.last_round is not None
    assert (game.current_player, game.last_round.remaining, game.last_round.extra_rounds) == ("A", ("A", "B"), 1)
    play(game, FARKLE, FARKLE)  # both tied leaders farkle: still tied, another extra round
    assert game.last_round.extra_rounds == 2 and game.current_player == "A"
    play(game, FARKLE, "roll 5,2,3,4,6,6", "keep 5", "bank")
    assert game.is_over and game.winners == ("B",) and game.scores == {"A": 1000, "B": 1050, "C": 0}


# ---------------------------------------------------------------- exactly the target
EXACT = BOXED.with_options({"target": 1000, "exact_target": True, "opening_minimum": 0})
SIX_HUNDRED = ("roll 6,6,6,2,3,4", "keep 6,6,6", "bank")
FIVE_HUNDRED = ("roll 5,5,5,2,3,4", "keep 5,5,5", "bank")


def test_exact_target_overshoot_goes_to_the_lowest_score() -> None:
    game = play(new(EXACT, ("A", "B", "C")), *SIX_HUNDRED, FARKLE, FARKLE)
    play(game, *FIVE_HUNDRED)  # A: 600 + 500 > 1000; B and C tie on 0, B plays next after A
    assert game.scores == {"A": 600, "B": 500, "C": 0} and game.last_round is None
    record = game.turns[-1]
    assert (record.end, record.points, record.recipient) == (TurnEnd.OVERSHOT, 500, "B")
    assert game.on_board == {"A": True, "B": False, "C": False}
    play(game, FARKLE, FARKLE, "roll 4,4,4,2,3,6", "keep 4,4,4", "bank")  # A lands exactly: last round
    assert game.scores["A"] == 1000 and game.last_round is not None and game.last_round.remaining == ("B", "C")


def test_exact_target_gift_that_would_overshoot_is_lost_and_one_that_lands_counts() -> None:
    game = play(new(EXACT, ("A", "B", "C")), *SIX_HUNDRED, *SIX_HUNDRED, *SIX_HUNDRED, *FIVE_HUNDRED)
    assert game.scores == {"A": 600, "B": 600, "C": 600} and game.turns[-1].recipient is None
    game = play(new(EXACT, ("A", "B", "C")), *SIX_HUNDRED, *FIVE_HUNDRED, *SIX_HUNDRED, *FIVE_HUNDRED)
    assert game.scores == {"A": 600, "B": 1000, "C": 600}  # the gift landed B on 1000: last round
    assert game.last_round is not None and (game.last_round.trigger, game.last_round.remaining) == ("B", ("C", "A"))
    assert game.current_player == "C"


def test_exact_target_tie_break_rounds_count_banks_in_full() -> None:
    rules = EXACT.with_options({"tie": "extra_round"})
    game = play(new(rules, ("A", "B", "C")), *FOUR_ONES, *FOUR_ONES, FARKLE)  # A and B both land on 1000
    assert game.last_round is not None and game.last_round.extra_rounds == 1 and game.current_player == "A"
    play(game, "roll 5,2,3,4,6,6", "keep 5", "bank", FARKLE)
    assert game.winners == ("A",) and game.scores == {"A": 1050, "B": 1000, "C": 0}


# ---------------------------------------------------------------- undo, the event log, replay and JSON
def test_undo_takes_back_the_last_action_and_is_logged() -> None:
    game = play(new(), "roll 5,5,2,3,4,6", "keep 5")
    before_keep = Game.replay(game.rules, game.players, game.events[:1], first_player="Ann")
    play(game, "undo")
    assert game.state == before_keep.state and game.phase is Phase.AWAITING_KEEP
    assert [str(e.action) for e in game.events] == ["roll 2,3,4,5,5,6", "keep 5", "undo"]
    assert [e.seq for e in game.events] == [1, 2, 3]
    assert game.actions_in_force == (Roll((5, 5, 2, 3, 4, 6)),)
    play(game, "keep 5,5", "roll 3,3,3,5", "keep 3,3,3,5", "roll 1,1,6,2,6,4", "keep 1,1", "bank")
    assert game.scores["Ann"] == 650
    game.undo()  # un-bank
    assert game.scores["Ann"] == 0 and game.turn_total == 650 and game.current_player == "Ann"
    for _ in range(len(game.actions_in_force)):
        game.undo()
    assert game.state == new().state
    rejected(game, "undo", "nothing to undo")


def test_undo_after_the_game_ended_and_in_the_roll_off() -> None:
    game = play(new(TO_1000, ("A", "B")), *FOUR_ONES, "roll 1,2,3,4,5,6", "keep 1,2,3,4,5,6", "bank")
    assert game.winners == ("B",)
    game.undo()
    assert not game.is_over and game.current_player == "B" and game.turn_total == 1500
    game = play(Game(BOXED, ["A", "B"]), "rolloff A 3", "undo", "rolloff B 2")
    assert game.roll_off_faces == {"B": 2}


def test_replay_and_json_rebuild_the_identical_game() -> None:
    ticks = count(1000)
    game = Game(get_rules("progressive"), ["A", "B", "C"], clock=lambda: float(next(ticks)))
    play(game, "rolloff A 4", "rolloff B 6", "rolloff C 6", "rolloff C 1", "rolloff B 5")
    play(game, "roll 1,1,1,5,5,2", "keep 1,1,1,5,5", "roll 1", "keep 1", "roll 3,3,3,1,2,6", "keep 3,3,3,1")
    play(game, "bank", "passed-roll 5,2", "keep 5", "undo", "keep 5", "roll 2")
    assert [e.at for e in game.events] == [float(t) for t in range(1000, 1000 + len(game.events))]
    copy = Game.from_json(game.to_json())
    assert copy == game and copy.state == game.state and copy.events == game.events
    data = json.loads(game.to_json())
    assert data["rules"]["name"] == "progressive" and data["rules"]["piggyback"] is True
    assert data["events"][0] == {"seq": 1, "action": {"type": "rolloff", "player": "A", "face": 4}, "at": 1000.0}
    assert Game.replay(game.rules, game.players, game.events) == game
    data["rules"] = "progressive"  # a preset name is accepted too
    assert Game.from_dict(data).state == game.state


def test_replay_rejects_a_tampered_log() -> None:
    game = play(new(), "roll 5,5,2,3,4,6", "keep 5")
    data = json.loads(game.to_json())
    data["events"][1]["action"] = {"type": "keep", "faces": [2]}
    with pytest.raises(IllegalActionError, match=r"event 2 \(keep 2\): cannot keep \[2\]"):
        Game.from_dict(data)
    data["events"][1]["seq"] = 5
    with pytest.raises(ValueError, match="out of sequence"):
        Game.from_dict(data)
    with pytest.raises(ValueError, match="not a farklecam game"):
        Game.from_json('{"format": "other"}')
    with pytest.raises(ValueError, match="must be JSON"):
        Game.from_json("{")


@pytest.mark.parametrize(
    ("players", "first", "match"),
    [
        (["Ann"], None, "at least two"),
        (["Ann", "Ann"], None, "distinct"),
        (["Ann", " "], None, "non-empty"),
        ("AnnBob", None, "non-empty"),
        (["Ann", "Bob"], "Cy", "first_player"),
    ],
)
def test_bad_setup(players: list[str], first: str | None, match: str) -> None:
    with pytest.raises(InvalidRulesError, match=match):
        Game(BOXED, players, first_player=first)


def test_actions_as_values_and_text_are_the_same() -> None:
    by_text = play(new(), "roll 5,5,2,3,4,6")
    by_value = new()
    by_value.apply(Roll((5, 5, 2, 3, 4, 6)))
    assert by_text == by_value
    assert by_value.is_legal(Keep((5,))) and not by_value.is_legal(Keep((2,))) and by_value.is_legal(Undo())
    assert not by_value.is_legal(Farkle()) and not by_value.is_legal(PassedRoll((1,)))
    assert not by_value.is_legal(RollOff("Ann", 3))
    assert "Ann to set aside from 2,3,4,5,5,6" in repr(by_value)
