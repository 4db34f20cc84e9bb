"""A game's public state, and every change to a game, each done under the game's lock.

A reply describes the state *its own* action produced: it is built while the
game's lock is held, so another device's action cannot slip in between. An
action may carry ``expected_events`` (the number of events the client last
saw); a stale count is refused (:class:`~farklecam.service.errors.StaleGameError`, 409),
so two devices pressing undo at once take back one action, not two.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from farklecam.errors import FarkleError, IllegalActionError
from farklecam.scoring.actions import Action
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.rules import Rules
from farklecam.service.storage import Games
from farklecam.service.usecases.scoring import advice_for, pass_advice_for, unsolved_why

__all__ = ["act", "advice", "create", "describe", "events", "game_public", "state_public", "win_chances"]


def state_public(game: Game) -> dict[str, Any]:
    """Where a game stands, as :class:`~farklecam.service.schemas.GameStatePublic` data."""
    state, legal = game.state, game.legal_actions()
    last = state.last_round
    return {
        "phase": str(state.phase),
        "current": state.current,
        "description": state.describe(),
        "players": [
            {"name": p, "score": s, "on_board": b, "streak": k}
            for p, s, b, k in zip(state.players, state.scores, state.on_board, state.streaks, strict=True)
        ],
        "turn_total": state.turn_total,
        "dice_to_throw": state.dice_to_throw,
        "roll": None if state.roll is None else list(state.roll),
        "hot_dice": state.hot_dice,
        "passed": None if state.passed is None else dataclasses.asdict(state.passed),
        "roll_off_faces": dict(state.roll_off_faces),
        "last_round": None if last is None else {**dataclasses.asdict(last), "remaining": list(last.remaining)},
        "winners": list(state.winners),
        "chances": _chances_cached(game),
        "chances_approximate": chances_approximate(game),
        "turns": [{**dataclasses.asdict(t), "end": str(t.end), "last_roll": list(t.last_roll)} for t in state.turns],
        "legal": {
            "kinds": list(legal.kinds),
            "text": str(legal),
            "dice_to_throw": legal.dice_to_throw,
            "passed_dice": legal.passed_dice,
            "keeps": [k.to_dict() for k in legal.keeps],
            "roll_off": list(legal.roll_off),
            "bank_minimum": legal.bank_minimum,
        },
    }


def win_chances(game: Game) -> list[float] | None:
    """Each player's chance to win now, in seating order, every player playing to win; None where none is worked out.

    Two players: exact, from the rules' two-player table. Three or more, before the last round: the
    approximation the advice uses (:func:`farklecam.scoring.winprob.combine_opponents`): each player's
    chances against each other player alone (the mover's from where the turn stands, two waiting
    players' from the turn start of whichever throws first), combined, then scaled to add up to one
    (:func:`chances_approximate` says so). None during a roll-off, tie-break rounds or the last round
    with more than two players, after the game, or while the table is not solved yet (never solved here).
    """
    from farklecam.scoring.winprob import combine_opponents, ready, solve_win

    state, rules = game.state, game.rules
    n = len(state.players)
    if n < 2 or state.current is None or state.phase in (Phase.ROLL_OFF, Phase.GAME_OVER):
        return None
    if state.last_round is not None and (state.last_round.extra_rounds > 0 or n > 2):
        return None
    seat = state.index(state.current)
    if not ready(rules, [state.scores[seat], *(state.scores[k] for k in range(n) if k != seat)]):
        return None
    try:
        against = {k: _mover_against(game, seat, k) for k in range(n) if k != seat}
        if n == 2:
            (other, mover), *_ = against.items()
            chances = [0.0, 0.0]
            chances[seat], chances[other] = mover, 1.0 - mover
            return chances
        table = solve_win(rules)
        order = [(seat + step) % n for step in range(1, n)]  # who throws next after the mover

        def alone(k: int, other: int) -> float:
            if other == seat:
                return 1.0 - against[k]
            first, second = (k, other) if order.index(k) < order.index(other) else (other, k)
            streaks = (state.streaks[first], state.streaks[second]) if rules.farkle_penalty else (0, 0)
            start = table.start_chance(state.scores[first], state.scores[second], streaks)
            return start if first == k else 1.0 - start

        strength = [
            combine_opponents(list(against.values())) if k == seat else combine_opponents(
                [alone(k, other) for other in range(n) if other != k]
            )
            for k in range(n)
        ]  # fmt: skip
    except FarkleError:  # a position the table does not hold (a score past the target, say): no figure
        return None
    total = sum(strength)
    return [x / total for x in strength] if total > 0 else None


#: The last chances worked out per game: a table's stream sends the game's state with every frame.
_CHANCES: OrderedDict[int, tuple[weakref.ref[Game], int, list[float]]] = OrderedDict()
_CHANCES_GUARD = threading.Lock()
_CHANCES_KEPT = 256


def _chances_cached(game: Game) -> list[float] | None:
    """:func:`win_chances`, worked out once per action of a game (a camera's frames in between reuse it).

    Why: with four players the figure asks the two-player table a dozen times, and a table's
    WebSocket answers every frame with the game's state. A game changes only by an action (a new
    event, a changed rule set included); a figure not there yet (a table being solved) is asked again.
    """
    events = len(game.events)
    with _CHANCES_GUARD:
        found = _CHANCES.get(id(game))
        if found is not None and found[0]() is game and found[1] == events:
            return list(found[2])
    chances = win_chances(game)
    if chances is not None:
        with _CHANCES_GUARD:
            _CHANCES[id(game)] = (weakref.ref(game), events, chances)
            _CHANCES.move_to_end(id(game))
            while len(_CHANCES) > _CHANCES_KEPT:
                _CHANCES.popitem(last=False)
    return chances


def chances_approximate(game: Game) -> bool:
    """Whether :func:`win_chances` is the several-player approximation (more than two players), not exact."""
    return len(game.state.players) > 2


def _mover_against(game: Game, seat: int, other: int) -> float:
    """The mover's chance to win against the player in seat ``other`` alone, from where the turn stands."""
    from farklecam.scoring.winprob import advise_win, chance_now

    state, rules = game.state, game.rules
    scores = [state.scores[seat], state.scores[other]]
    streaks = (state.streaks[seat], state.streaks[other]) if rules.farkle_penalty else (0, 0)
    if state.phase is Phase.AWAITING_KEEP and state.roll is not None:
        throws = game.single_die_throws_left if len(state.roll) == 1 else None
        return advise_win(
            state.roll, rules, scores, turn_total=state.turn_total, streaks=streaks, throws_left=throws
        ).win
    if state.phase is Phase.CAN_BANK_OR_ROLL:
        left = 0 if state.hot_dice else state.dice_to_throw
        return chance_now(rules, scores, turn_total=state.turn_total, dice=left, kept=True, streaks=streaks)
    offer = state.passed
    passed = (offer.total, offer.dice) if offer is not None and state.turn_total == 0 else None
    return chance_now(
        rules, scores, turn_total=state.turn_total, dice=state.dice_to_throw, streaks=streaks, passed=passed
    )


def game_public(game_id: str, game: Game, created: float) -> dict[str, Any]:
    """A game as :class:`~farklecam.service.schemas.GamePublic` data."""
    return {
        "id": game_id,
        "players": list(game.players),
        "rules": game.rules.to_dict(),
        "head_start": game.head_start,
        "created": created,
        "events": len(game.events),
        "state": state_public(game),
    }


def create(
    games: Games,
    rules: Rules,
    players: Sequence[str],
    first_player: str | None,
    head_start: Mapping[str, int] | Literal["fair"] | None = None,
) -> dict[str, Any]:
    """Start and store a game; its public form.

    ``head_start`` ``"fair"`` gives the second of two players the points that make the game closest
    to even (:func:`farklecam.scoring.winprob.fair_head_start`), once the rules' win table is solved.

    Raises:
        IllegalActionError: a fair head start for these players, or before the rules' win table is solved.
        InvalidRulesError: a head start :class:`~farklecam.scoring.game.Game` refuses.
    """
    if head_start == "fair":
        head_start = _fair_head_start(rules, players, first_player)
    game = Game(rules, tuple(players), first_player=first_player, clock=time.time, head_start=head_start)
    game_id = games.create(game)
    with games.lock(game_id):
        return game_public(game_id, game, games.store.row(game_id).created)


def _fair_head_start(rules: Rules, players: Sequence[str], first_player: str | None) -> dict[str, int]:
    """The fair head start, or why not yet: a server never solves a win table inside a request."""
    from farklecam.scoring.winprob import fair_head_start, ready

    if len(players) == 2 and first_player in players and not ready(rules, [0, 0]):
        raise IllegalActionError(f"a fair head start needs these rules' win table: {unsolved_why(rules)}")
    return fair_head_start(rules, players, first_player)


def describe(games: Games, game_id: str) -> dict[str, Any]:
    """A game's public form, read under its lock (never half way through another device's action).

    Raises:
        GameNotFoundError: no game has this id.
    """
    with games.lock(game_id):
        return game_public(game_id, games.get(game_id), games.store.row(game_id).created)


def act(games: Games, game_id: str, action: Action, *, expected_events: int | None = None) -> dict[str, Any]:
    """Apply one action, commit it, and describe the state it produced (all under the game's lock).

    Args:
        games: the games.
        game_id: the game.
        action: what to do.
        expected_events: the event count the client last saw; None skips the check.

    Raises:
        GameNotFoundError: no game has this id.
        StaleGameError: ``expected_events`` is not the game's event count (another action came first).
        IllegalActionError, GameOverError: the rules refuse the action (nothing is stored).
        StorageError: the commit failed (the action is not in force).
    """
    with games.lock(game_id):
        game, _ = games.apply(game_id, action, expected_events=expected_events)
        return game_public(game_id, game, games.store.row(game_id).created)


def events(games: Games, game_id: str) -> dict[str, Any]:
    """A game's event log, oldest first.

    Raises:
        GameNotFoundError: no game has this id.
    """
    with games.lock(game_id):
        data = [{**e.to_dict(), "text": str(e.action)} for e in games.get(game_id).events]
    return {"data": data, "count": len(data)}


def advice(games: Games, game_id: str) -> dict[str, Any]:
    """The advisor's word for the current player: the keep of the roll on the table, or take-or-fresh.

    With a pass on offer (progressive) and nothing thrown yet, the answer's ``passed`` block says
    whether to take it or start fresh.

    Raises:
        GameNotFoundError: no game has this id.
        IllegalActionError: no roll is waiting for a keep and no pass is on offer.
    """
    with games.lock(game_id):
        game = games.get(game_id)
        state = game.state
        offer = state.passed if state.roll is None and state.phase is Phase.AWAITING_ROLL else None
        if state.current is None or (offer is None and (state.roll is None or "keep" not in game.legal_actions())):
            raise IllegalActionError(f"no roll is waiting for a keep: {state.describe()}")
        seat = state.index(state.current)
        roll, rules = state.roll, game.rules
        n = len(state.players)
        turn_order = [(seat + k) % n for k in range(n)]  # the player to move first
        scores = [state.scores[k] for k in turn_order]
        streaks = [state.streaks[k] for k in turn_order]
        tie_break = state.last_round is not None and state.last_round.extra_rounds > 0
        plays_to_win = n > 1 and not tie_break and scores[0] < rules.target
        throws = game.single_die_throws_left if roll is not None and len(roll) == 1 else None
    if offer is not None:
        return pass_advice_for(
            rules,
            offer.total,
            offer.dice,
            on_board=state.on_board[seat],
            scores=scores if plays_to_win else None,
            streaks=streaks,
            solve=False,
        )
    assert roll is not None
    return advice_for(
        roll,
        rules,
        turn_total=state.turn_total,
        on_board=state.on_board[seat],
        farkle_streak=state.streaks[seat],
        throws_left=throws,
        scores=scores if plays_to_win else None,
        streaks=streaks,
        solve=False,
    )
