"""How good is the two-player win table with more than two players? Simulated games say.

With three or more players :func:`farklecam.scoring.winprob.advise_win` values each keep
against each opponent alone and combines the chances
(:func:`farklecam.scoring.winprob.combine_opponents`). This bench plays seeded games
of ``--players`` players and measures that approximation two ways:

* calibration: at the start of every turn, the chance to win the approximation
  gives the player to move, against how often that player went on to win
  (mean predicted, mean observed, Brier score); and the same for every player's
  chance on the scoreboard (:func:`farklecam.service.usecases.games.win_chances`, each
  player against each other alone, combined and scaled to add up to one);
* strength: one seat plays to win (the approximation), the others maximise
  points (:func:`farklecam.scoring.advisor.advise`); the seat rotates, so an equal player
  would win ``1 / players`` of the games.

Run: ``python bench/winprob_multiplayer.py --games 300 --players 3 --target 2000``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.scoring.actions import Bank, Keep, Roll
from farklecam.scoring.advisor import advise
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.simulate import RandomDice
from farklecam.scoring.winprob import advise_win, combine_opponents, solve_win
from farklecam.service.usecases.games import win_chances


def play(
    rules: Rules, players: int, to_win: set[int], seed: int
) -> tuple[int, list[tuple[int, float]], list[tuple[int, float]]]:
    """One game; ``to_win`` seats play by the chance to win, the others by points.

    Returns the winner's seat, for each turn start of a to-win seat (seat, predicted chance), and
    for each turn start, every seat's scoreboard chance (seat, chance).
    """
    names = tuple(f"p{k}" for k in range(players))
    game = Game(rules, names, first_player=names[seed % players])
    dice = RandomDice(seed)
    table = solve_win(rules)
    predictions: list[tuple[int, float]] = []
    board: list[tuple[int, float]] = []
    while not game.is_over:
        state = game.state
        seat = state.index(state.current or names[0])
        scores = [state.scores[(seat + k) % players] for k in range(players)]
        if state.phase is Phase.AWAITING_ROLL:
            if state.turn_total == 0 and seat in to_win and max(scores) < rules.target:
                mine = max(scores[0], 0)
                alone = [table.start_chance(mine, max(other, 0)) for other in scores[1:]]
                predictions.append((seat, combine_opponents(alone)))
            if state.turn_total == 0 and max(scores) < rules.target:
                board += list(enumerate(win_chances(game) or []))
            game.apply(Roll(dice.throw(state.dice_to_throw)))
            continue
        roll = state.roll or ()
        if seat in to_win:
            found = advise_win(roll, rules, scores, turn_total=state.turn_total)
            keep, action = found.keep, found.action
        else:
            points = advise(roll, rules, turn_total=state.turn_total, on_board=state.on_board[seat])
            keep, action = points.keep, points.action
        game.apply(Keep(keep))
        if game.is_over:
            break
        if action == "bank" and "bank" in game.legal_actions():
            game.apply(Bank())
        else:
            game.apply(Roll(dice.throw(game.state.dice_to_throw)))
    winner = names.index(game.state.winners[0])
    return winner, predictions, board


def _bins(pairs: list[tuple[float, float]]) -> list[dict[str, float]]:
    """Predicted chances in fifths: how many, their mean, and how often those players won."""
    bins = []
    for low in (0.0, 0.2, 0.4, 0.6, 0.8):
        inside = [(p, o) for p, o in pairs if low <= p < low + 0.2 or (low == 0.8 and p == 1.0)]
        if inside:
            bins.append({
                "predicted": round(low, 1),
                "turns": len(inside),
                "mean_predicted": round(sum(p for p, _ in inside) / len(inside), 3),
                "observed": round(sum(o for _, o in inside) / len(inside), 3),
            })  # fmt: skip
    return bins


def main() -> None:
    """Print the measured figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--target", type=int, default=2000)
    parser.add_argument("--preset", default="busche-neller")
    args = parser.parse_args()
    rules = get_rules(args.preset).with_options({"target": args.target, "last_round": False})
    start = time.perf_counter()
    solve_win(rules)
    solved = time.perf_counter() - start
    everyone = set(range(args.players))
    pairs: list[tuple[float, float]] = []
    board: list[tuple[float, float]] = []
    for seed in range(args.games):
        winner, predictions, chances = play(rules, args.players, everyone, seed)
        pairs += [(p, 1.0 if seat == winner else 0.0) for seat, p in predictions]
        board += [(p, 1.0 if seat == winner else 0.0) for seat, p in chances]
    wins = 0
    for seed in range(args.games):
        seat = seed % args.players
        winner, _, _ = play(rules, args.players, {seat}, 10_000 + seed)
        wins += winner == seat
    n = len(pairs)
    bins = _bins(pairs)
    print(
        json.dumps(
            {
                "rules": {"preset": args.preset, "target": args.target, "last_round": False},
                "players": args.players,
                "games": args.games,
                "table_seconds": round(solved, 1),
                "turn_starts": n,
                "mean_predicted": round(sum(p for p, _ in pairs) / n, 4),
                "mean_observed": round(sum(o for _, o in pairs) / n, 4),
                "brier": round(sum((p - o) ** 2 for p, o in pairs) / n, 4),
                "calibration": bins,
                "scoreboard": {
                    "chances": len(board),
                    "brier": round(sum((p - o) ** 2 for p, o in board) / len(board), 4),
                    "calibration": _bins(board),
                },
                "to_win_seat_win_rate": round(wins / args.games, 4),
                "even_share": round(1 / args.players, 4),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
