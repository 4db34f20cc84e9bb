"""A whole tournament played by the advisor, from a seed: ``farklecam tournament simulate``.

Every table is a :class:`~farklecam.scoring.game.Game` under :func:`farklecam.scoring.tournament.table_rules`,
thrown with :class:`~farklecam.scoring.simulate.RandomDice` (one generator per table, seeded
from the tournament's seed and the table) and played by :func:`advisor_action`:
the exact advisor's keep, its bank-or-roll, and on progressive tables its
take-the-pass-or-start-fresh by points (:func:`farklecam.scoring.advisor.advise_piggyback`).
The same seed always gives the same tournament.

The advisor maximises the turn's expected points. One guard keeps it from the
plainest blunder that leaves: in the last round it never banks a total that
leaves it behind the leader (that bank is a certain loss; throwing on is not).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from farklecam.errors import GameOverError
from farklecam.scoring.actions import Action, Bank, ChangeRules, Keep, PassedRoll, Roll, RollOff
from farklecam.scoring.advisor import advise, advise_piggyback
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.simulate import RandomDice
from farklecam.scoring.solver import solve
from farklecam.scoring.tournament import RoundPlan, TableResult, Tournament, plan_rounds, table_rules

__all__ = ["SimulatedRound", "SimulatedTournament", "advisor_action", "play_table", "simulate"]

#: A game that has not ended after this many actions is a bug, not a long game.
MAX_ACTIONS = 50_000


def advisor_action(game: Game, dice: RandomDice) -> Action:
    """What the advisor does now in ``game`` (dice come from ``dice``).

    Raises:
        GameOverError: the game has ended.
    """
    state, rules = game.state, game.rules
    if state.phase is Phase.GAME_OVER:
        raise GameOverError("the game is over")
    if state.phase is Phase.ROLL_OFF:
        thrown = {p for p, _ in state.roll_off_faces}
        return RollOff(next(p for p in state.roll_off if p not in thrown), dice.throw(1)[0])
    player = state.current
    assert player is not None
    seat = state.index(player)
    # Without a farkle penalty the streak changes nothing (the solver models only streaks below the penalty's).
    on_board, streak = state.on_board[seat], state.streaks[seat] if rules.farkle_penalty else 0
    if state.phase is Phase.AWAITING_KEEP:
        assert state.roll is not None
        throws = game.single_die_throws_left if len(state.roll) == 1 else None
        tip = advise(
            state.roll, rules, turn_total=state.turn_total, on_board=on_board, farkle_streak=streak, throws_left=throws
        )
        return Keep(tip.keep)
    if state.phase is Phase.CAN_BANK_OR_ROLL:
        left = 0 if state.hot_dice else state.dice_to_throw
        choice, _, _ = solve(rules).decide(state.turn_total, left, on_board=on_board, farkle_streak=streak)
        if choice == "bank" and not _bank_loses(game) and game.is_legal(Bank()):
            return Bank()
        return Roll(dice.throw(state.dice_to_throw))
    passed = state.passed
    if passed is not None and state.roll is None and advise_piggyback(rules, passed.total, passed.dice).take:
        return PassedRoll(dice.throw(passed.dice))
    return Roll(dice.throw(state.dice_to_throw))


def _bank_loses(game: Game) -> bool:
    """In the last round, banking now leaves the player behind the leader: a certain loss."""
    state = game.state
    if state.last_round is None or state.current is None:
        return False
    mine = state.scores[state.index(state.current)] + state.turn_total
    return mine <= max(s for p, s in zip(state.players, state.scores, strict=True) if p != state.current)


def play_table(
    players: Sequence[str], preset: str, seed: int, *, switch_at_turn: int | None = None, switch_to: str = "progressive"
) -> Game:
    """Play one table's game to the end with the advisor; ``switch_at_turn`` switches its rules then.

    Raises:
        RuntimeError: the game did not end within :data:`MAX_ACTIONS` actions (a bug).
    """
    game = Game(table_rules(preset), players)
    dice = RandomDice(seed)
    while not game.is_over:
        if len(game.events) >= MAX_ACTIONS:
            raise RuntimeError(f"a simulated game did not end in {MAX_ACTIONS} actions: {game!r}")
        if switch_at_turn is not None and len(game.turns) >= switch_at_turn and game.is_legal(ChangeRules(switch_to)):
            game.apply(ChangeRules(switch_to))
            switch_at_turn = None
            continue
        game.apply(advisor_action(game, dice))
    return game


def result_of(game: Game) -> TableResult:
    """A finished game as the tournament's cuts read it."""
    return TableResult(game.players, tuple(game.scores[p] for p in game.players), game.winners)


@dataclass(frozen=True, slots=True)
class SimulatedRound:
    """One round played: its plan and each table's result and who went on from it."""

    plan: RoundPlan
    rules: str
    tables: tuple[TableResult, ...]
    advance: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "rules", "tables": [{"players", "scores", "advance"}]}``."""
        return {
            "name": self.plan.name,
            "rules": self.rules,
            "tables": [
                {"players": list(t.players), "scores": list(t.scores), "advance": list(going)}
                for t, going in zip(self.tables, self.advance, strict=True)
            ],
        }


@dataclass(frozen=True, slots=True)
class SimulatedTournament:
    """Every round played, and the winner."""

    seed: int
    rounds: tuple[SimulatedRound, ...]
    winner: str

    def to_dict(self) -> dict[str, Any]:
        """``{"seed", "rounds": [...], "winner"}``."""
        return {"seed": self.seed, "rounds": [r.to_dict() for r in self.rounds], "winner": self.winner}


def simulate(players: int, seed: int, *, progressive_final_at: int | None = None) -> SimulatedTournament:
    """Sign up ``players`` (``P01``, ``P02``, ...) and play every round with the advisor.

    Args:
        players: the field, :data:`~farklecam.scoring.tournament.MIN_PLAYERS` to
            :data:`~farklecam.scoring.tournament.MAX_PLAYERS`.
        seed: seats every round and seeds every table's dice.
        progressive_final_at: the organiser switches the final to progressive rules once this
            many turns have been played in it (``None``: never).

    Raises:
        InvalidTournamentError: a field size out of range.
    """
    plans = plan_rounds(players)
    tournament = Tournament("simulation", seed).signup(f"P{i:02d}" for i in range(1, players + 1))
    rounds: list[SimulatedRound] = []
    results: list[TableResult] | None = None
    for index, plan in enumerate(plans):
        tournament = tournament.start_next(results)
        final = index == len(plans) - 1
        games = [
            play_table(
                seating, plan.rules, _table_seed(seed, index, t), switch_at_turn=progressive_final_at if final else None
            )
            for t, seating in enumerate(tournament.seatings[index])
        ]
        results = [result_of(g) for g in games]
        going = set(tournament.next_field(results)) if not final else {_winner(results[0])}
        rules = "house then progressive" if final and games[0].rules != games[0].initial_rules else plan.rules
        advance = tuple(tuple(p for p in r.players if p in going) for r in results)
        rounds.append(SimulatedRound(plan, rules, tuple(results), advance))
    return SimulatedTournament(seed, tuple(rounds), _winner(results[0]) if results else "")


def _table_seed(seed: int, round_index: int, table: int) -> int:
    """One table's dice seed: distinct per round and table, the same on every machine."""
    digest = hashlib.sha256(f"farklecam-tournament-dice:{seed}:{round_index}:{table}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _winner(result: TableResult) -> str:
    return result.winners[0]
