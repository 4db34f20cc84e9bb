"""The rules of play as a pure function: ``step(state, action, rules) -> new state``.

:class:`~farklecam.scoring.gamestate.GameState` is a frozen value; :func:`step` checks an action against the
rules and returns the next state, or raises
:class:`~farklecam.errors.IllegalActionError` whose message says why, what is
allowed now and where the game stands. Because nothing is mutated, a rejected
action cannot leave a half-changed state behind. :mod:`farklecam.scoring.game` wraps this
with the event log, undo, replay and JSON.

Rule readings chosen where the texts leave room:

* Roll-off: each contender throws one die, in any order; the highest single die
  goes first, and players tied on the highest throw again (only they).
* Turns pass to the left: the next player in the order ``players`` was given.
* A turn that farkles adds 1 to the player's farkle streak; a bank resets it. At
  ``farkle_penalty_streak`` the player loses ``farkle_penalty`` points and the
  streak starts again from 0. Scores may go negative (Zilch plays it that way).
* Elizabethan single die: whenever exactly one die is thrown, a throw that
  misses is not a farkle until ``single_die_throws`` throws in a row have missed;
  in between the player must throw that die again (banking is not allowed) or
  may concede with ``Farkle()``.
* Piggyback: after a bank, the next player may throw the dice the banker had
  left to throw (all dice after hot dice) with ``PassedRoll`` and start from the
  banked total, or throw all dice fresh with ``Roll``. The minimums apply to the
  whole turn total, carried points included. A farkle passes nothing.
* Exactly the target: a bank that would take the banker past ``target`` goes to
  the other player with the lowest score; among equal lowest scores, the one
  who plays soonest after the banker. If it would take that player past the
  target too, nobody gets it (so no score ever passes the target). The banker's
  streak resets but the gift puts nobody on the board. A gift that lands
  exactly on the target counts as reaching it. Note that a player closer to the
  target than the bank minimum can never land on it. In tie-break rounds the
  tied leaders are all on the target, so there banks count in full.
* Last round: the first bank (or gift) that reaches the target starts it; every
  other player then has exactly one turn, in turn order (with ``last_round``
  off, none: the game ends at once). Then the highest score wins; with
  ``tie = extra_round`` the tied leaders play one more turn each, in turn
  order, until one leads.
* Rule change (``ChangeRules``, the tournament final's switch to progressive): only
  at the start of a turn, before its first throw. The game takes the preset's
  scoring and play options but keeps its own target, exact-target, last-round and tie rules
  (:func:`changed_rules`); a piggyback offer stands only if the new rules piggyback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from farklecam.errors import GameOverError, IllegalActionError
from farklecam.scoring.actions import Action, Bank, ChangeRules, Farkle, Keep, PassedRoll, Roll, RollOff
from farklecam.scoring.gamestate import GameState, LastRound, PassedDice, Phase, TurnEnd, TurnRecord, legal_actions
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules, TieRule
from farklecam.scoring.setasides import legal_set_asides, score_keep

__all__ = ["changed_rules", "initial_state", "step"]


def initial_state(
    players: tuple[str, ...],
    rules: Rules,
    first_player: str | None = None,
    head_start: Mapping[str, int] | None = None,
) -> GameState:
    """The state before the first action: a roll-off, or ``first_player``'s first turn.

    ``head_start``: points some players start with (checked by :class:`farklecam.scoring.game.Game`);
    a player given a head start is on the board, as the win tables' fair compensation assumes.
    """
    n = len(players)
    given = head_start or {}
    scores = tuple(given.get(p, 0) for p in players)
    on_board = tuple(s > 0 for s in scores)
    state = GameState(players, Phase.ROLL_OFF, None, scores, on_board, (0,) * n, roll_off=players)
    return state if first_player is None else _start_turn(replace(state, roll_off=()), first_player, rules, None)


def step(state: GameState, action: Action, rules: Rules, *, auto_farkle: bool = True) -> GameState:
    """The state after ``action`` (``Undo`` is the event log's business, see :class:`farklecam.scoring.game.Game`).

    Args:
        state: the current state.
        action: any action but ``Undo``.
        rules: the rule configuration the game is played under.
        auto_farkle: a scoring-less throw ends the turn at once; if false, the game waits for ``Farkle()``.

    Raises:
        IllegalActionError: the rules forbid ``action`` now (the message says why and what is allowed).
        GameOverError: the game has ended.
    """
    if state.phase is Phase.GAME_OVER:
        raise GameOverError(f"the game is over ({state.describe()}); only undo is allowed")
    match action:
        case RollOff():
            return _roll_off(state, action, rules)
        case Roll() | PassedRoll():
            return _throw(state, action, rules, auto_farkle)
        case Keep():
            return _keep(state, action, rules)
        case Bank():
            return _bank(state, rules)
        case Farkle():
            if state.phase not in (Phase.AWAITING_KEEP, Phase.AWAITING_ROLL) or state.roll is None:
                raise _illegal(state, rules, "there is no scoreless roll to call a farkle on")
            if keeps := legal_set_asides(state.roll, rules):
                raise _illegal(state, rules, f"{_show(state.roll)} is not a farkle: it can keep {_show(keeps[0].keep)}")
            return _farkle(state, rules)
        case ChangeRules():
            if state.phase is not Phase.AWAITING_ROLL or state.roll is not None or state.turn_total:
                raise _illegal(state, rules, "the rules change only at the start of a turn, before its first throw")
            new = changed_rules(rules, action)
            return state if new.piggyback else replace(state, passed=None)
    raise IllegalActionError(f"step() cannot apply {action!r}; undo goes through Game.apply")


def changed_rules(rules: Rules, action: ChangeRules) -> Rules:
    """The rules after ``action``: the preset's, with the game's target, exact-target, last-round and tie rules kept.

    Raises:
        InvalidRulesError: an unknown preset (the message lists them).
    """
    preset = get_rules(action.preset)
    return replace(
        preset, target=rules.target, exact_target=rules.exact_target, last_round=rules.last_round, tie=rules.tie
    )


# ---------------------------------------------------------------------------- transitions
def _roll_off(state: GameState, action: RollOff, rules: Rules) -> GameState:
    who = action.player
    if state.phase is not Phase.ROLL_OFF:
        raise _illegal(state, rules, "the roll-off is over")
    if who not in state.players:
        raise _illegal(state, rules, f"{who!r} is not playing in this game")
    if who not in state.roll_off:
        raise _illegal(state, rules, f"{who} is out of the roll-off: only {', '.join(state.roll_off)} throw again")
    thrown = dict(state.roll_off_faces)
    if who in thrown:
        raise _illegal(state, rules, f"{who} already threw a {thrown[who]} in this roll-off round")
    faces = (*state.roll_off_faces, (who, action.face))
    if len(faces) < len(state.roll_off):
        return replace(state, roll_off_faces=faces)
    best = max(face for _, face in faces)
    leaders = tuple(p for p in state.roll_off if dict(faces)[p] == best)
    if len(leaders) > 1:
        return replace(state, roll_off=leaders, roll_off_faces=())
    return _start_turn(replace(state, roll_off=(), roll_off_faces=faces), leaders[0], rules, None)


def _throw(state: GameState, action: Roll | PassedRoll, rules: Rules, auto_farkle: bool) -> GameState:
    if state.phase is Phase.ROLL_OFF:
        raise _illegal(state, rules, "the game has not started: the roll-off decides who throws first")
    if state.phase is Phase.AWAITING_KEEP:
        raise _illegal(state, rules, f"{state.current} must first deal with the roll {_show(state.roll or ())}")
    n, total = state.dice_to_throw, state.turn_total
    if isinstance(action, PassedRoll):
        if state.passed is None:
            raise _illegal(state, rules, f"no dice were passed to {state.current} to build on")
        n, total = state.passed.dice, state.passed.total
    if len(action.faces) != n:
        raise _illegal(state, rules, f"{state.current} must throw exactly {n} dice, got {len(action.faces)}")
    thrown = replace(
        state, phase=Phase.AWAITING_KEEP, roll=action.faces, turn_total=total, dice_to_throw=0, hot_dice=False,
        passed=None,
    )  # fmt: skip
    if legal_set_asides(action.faces, rules):
        return replace(thrown, single_misses=0)
    if n == 1 and state.single_misses + 1 < rules.single_die_throws:
        return replace(thrown, phase=Phase.AWAITING_ROLL, dice_to_throw=1, single_misses=state.single_misses + 1)
    return _farkle(thrown, rules) if auto_farkle else thrown


def _keep(state: GameState, action: Keep, rules: Rules) -> GameState:
    if state.phase is not Phase.AWAITING_KEEP or state.roll is None:
        why = "dice from this roll are already set aside" if state.phase is Phase.CAN_BANK_OR_ROLL else "no roll"
        raise _illegal(state, rules, f"cannot keep now: {why}")
    try:
        option = score_keep(state.roll, action.faces, rules)
    except IllegalActionError as exc:
        raise _illegal(state, rules, str(exc)) from exc
    return replace(
        state,
        phase=Phase.CAN_BANK_OR_ROLL,
        turn_total=state.turn_total + option.points,
        dice_to_throw=rules.dice if option.hot_dice else option.dice_left,
        hot_dice=option.hot_dice,
        single_misses=0,
    )


def _bank(state: GameState, rules: Rules) -> GameState:
    if state.phase is not Phase.CAN_BANK_OR_ROLL or state.current is None:
        raise _illegal(state, rules, "cannot bank now: a turn can be banked only after setting dice aside")
    me, points = state.index(state.current), state.turn_total
    if rules.must_roll_after_hot_dice and state.hot_dice:
        raise _illegal(state, rules, f"hot dice: these rules make {state.current} throw all {rules.dice} dice first")
    minimum = rules.bank_minimum(state.on_board[me])
    if points < minimum:
        why = "to get on the board" if not state.on_board[me] and minimum == rules.opening_minimum else "per turn"
        raise _illegal(state, rules, f"cannot bank {points}: the minimum {why} is {minimum}")
    scores, on_board = list(state.scores), list(state.on_board)
    streaks = (*state.streaks[:me], 0, *state.streaks[me + 1 :])
    tie_break = state.last_round is not None and state.last_round.extra_rounds > 0
    if rules.exact_target and not tie_break and scores[me] + points > rules.target:
        order = _seats_after(state, state.current)
        lowest = min((p for p in order if p != state.current), key=lambda p: scores[state.index(p)])
        receiver = lowest if scores[state.index(lowest)] + points <= rules.target else None
        if receiver is not None:
            scores[state.index(receiver)] += points
        record = TurnRecord(state.current, TurnEnd.OVERSHOT, points, 0, receiver, state.roll or ())
        reached = receiver if receiver and scores[state.index(receiver)] == rules.target else None
    else:
        scores[me] += points
        on_board[me] = True
        record = TurnRecord(state.current, TurnEnd.BANKED, points, 0, None, state.roll or ())
        at_target = scores[me] == rules.target if rules.exact_target else scores[me] >= rules.target
        reached = state.current if at_target else None
    passed = PassedDice(state.dice_to_throw, points, state.current) if rules.piggyback else None
    new = replace(state, scores=tuple(scores), on_board=tuple(on_board), streaks=streaks)
    return _finish_turn(new, record, rules, passed, reached)


def _farkle(state: GameState, rules: Rules) -> GameState:
    assert state.current is not None
    me = state.index(state.current)
    streak, penalty = state.streaks[me] + 1, 0
    if rules.farkle_penalty and streak >= rules.farkle_penalty_streak:
        streak, penalty = 0, rules.farkle_penalty
    scores = (*state.scores[:me], state.scores[me] - penalty, *state.scores[me + 1 :])
    streaks = (*state.streaks[:me], streak, *state.streaks[me + 1 :])
    record = TurnRecord(state.current, TurnEnd.FARKLED, 0, penalty, None, state.roll or ())
    return _finish_turn(replace(state, scores=scores, streaks=streaks), record, rules, None, None)


def _finish_turn(
    state: GameState, record: TurnRecord, rules: Rules, passed: PassedDice | None, reached: str | None
) -> GameState:
    """End the current player's turn: record it, run the last round, start the next turn or end the game."""
    me = state.current
    assert me is not None
    last = state.last_round
    if last is not None:
        last = replace(last, remaining=tuple(p for p in last.remaining if p != me))
    elif reached is not None:  # with last_round off nobody else plays: the game ends now
        others = tuple(p for p in _seats_after(state, me) if p != reached) if rules.last_round else ()
        last = LastRound(reached, others)
    state = replace(state, turns=(*state.turns, record), last_round=last)
    if last is None:
        return _start_turn(state, _seats_after(state, me)[0], rules, passed)
    if not last.remaining:
        best = max(state.scores)
        leaders = tuple(p for p in _seats_after(state, me) if state.scores[state.index(p)] == best)
        if len(leaders) == 1 or rules.tie is TieRule.SHARED:
            winners = tuple(p for p in state.players if p in leaders)
            return replace(
                state, phase=Phase.GAME_OVER, current=None, turn_total=0, dice_to_throw=0, roll=None,
                hot_dice=False, single_misses=0, passed=None, winners=winners,
            )  # fmt: skip
        last = replace(last, remaining=leaders, extra_rounds=last.extra_rounds + 1)
        state = replace(state, last_round=last)
    return _start_turn(state, last.remaining[0], rules, passed)


def _start_turn(state: GameState, player: str, rules: Rules, passed: PassedDice | None) -> GameState:
    return replace(
        state, phase=Phase.AWAITING_ROLL, current=player, turn_total=0, dice_to_throw=rules.dice, roll=None,
        hot_dice=False, single_misses=0, passed=passed,
    )  # fmt: skip


def _seats_after(state: GameState, player: str) -> tuple[str, ...]:
    """Every player in turn order starting with the one to ``player``'s left and ending with ``player``."""
    i, n = state.index(player), len(state.players)
    return tuple(state.players[(i + k) % n] for k in range(1, n + 1))


def _show(faces: tuple[int, ...]) -> str:
    return ",".join(map(str, faces))


def _illegal(state: GameState, rules: Rules, why: str) -> IllegalActionError:
    allowed = legal_actions(state, rules)
    return IllegalActionError(f"{why}. Allowed now: {allowed}. Game: {state.describe()}")
