"""Seeded stand-ins for the camera and the players, for simulations and tests.

:class:`RandomDice` throws fair dice from a seed; :func:`random_action` picks a
random legal action of a game (dice included); :func:`play_random_game` plays a
whole game that way. The same seed always gives the same game.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from farklecam.errors import GameOverError
from farklecam.scoring.actions import Action, Bank, Farkle, Keep, PassedRoll, Roll, RollOff
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.rules import Rules

__all__ = ["RandomDice", "play_random_game", "random_action"]


class RandomDice:
    """Fair six-sided dice from a seeded generator: ``RandomDice(7).throw(6)``."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def throw(self, n: int) -> tuple[int, ...]:
        """The faces of ``n`` dice."""
        return tuple(self.rng.randint(1, 6) for _ in range(n))


def random_action(game: Game, dice: RandomDice, *, bank_probability: float = 0.4) -> Action:
    """A random legal action of ``game`` now, never ``Undo``; dice come from ``dice``.

    Banks with ``bank_probability`` when banking is allowed (always when it lands
    exactly on an ``exact_target``); otherwise rolls. With a piggyback offer it
    builds on the passed dice half the time.

    Raises:
        GameOverError: the game has ended.
    """
    legal, rng = game.legal_actions(), dice.rng
    if legal.phase is Phase.GAME_OVER:
        raise GameOverError("the game is over")
    if legal.phase is Phase.ROLL_OFF:
        return RollOff(rng.choice(legal.roll_off), dice.throw(1)[0])
    if "keep" in legal:
        return Keep(rng.choice(legal.keeps).keep)
    if "bank" in legal:
        me = legal.player or ""
        lands = game.scores[me] + game.turn_total == game.rules.target
        overshoots = game.scores[me] + game.turn_total > game.rules.target
        chance = 1.0 if lands else bank_probability / 4 if game.rules.exact_target and overshoots else bank_probability
        if rng.random() < chance:
            return Bank()
    if "passed-roll" in legal and rng.random() < 0.5:
        return PassedRoll(dice.throw(legal.passed_dice))
    if "roll" in legal:
        return Roll(dice.throw(legal.dice_to_throw))
    return Farkle()


def play_random_game(
    rules: Rules, players: Sequence[str], seed: int, *, max_actions: int = 20_000, auto_farkle: bool = True
) -> Game:
    """Play random legal actions from ``seed`` until the game ends or ``max_actions`` were taken."""
    game = Game(rules, players, auto_farkle=auto_farkle)
    dice = RandomDice(seed)
    while not game.is_over and len(game.events) < max_actions:
        game.apply(random_action(game, dice))
    return game
