"""The rule option ``last_round``: on (the texts' game), the others get one last turn; off, the game ends at once."""

from __future__ import annotations

from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules


def reach_target(last_round: bool) -> Game:
    rules = get_rules("busche-neller").with_options({"target": 500, "last_round": last_round})
    game = Game(rules, ("Ann", "Bob", "Cy"), first_player="Ann")
    for text in ("roll 1,1,1,2,3,4", "keep 1,1,1", "bank"):  # 1000 points: past the target at once
        game.apply(text)
    return game


def test_last_round_on_gives_the_others_a_turn() -> None:
    game = reach_target(True)
    assert not game.is_over
    assert game.last_round is not None and game.last_round.remaining == ("Bob", "Cy")


def test_last_round_off_ends_the_game_at_once() -> None:
    game = reach_target(False)
    assert game.is_over
    assert game.state.winners == ("Ann",)


def test_a_rule_change_keeps_the_games_last_round() -> None:
    rules = get_rules("house").with_options({"last_round": False})
    game = Game(rules, ("Ann", "Bob"), first_player="Ann")
    game.apply("rules progressive")
    assert game.rules.piggyback and game.rules.last_round is False
