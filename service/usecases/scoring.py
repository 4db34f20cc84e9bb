"""Keeps and advice for one roll: what ``farklecam score``/``advise`` print and ``/api/score``/``advise`` answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from farklecam.errors import ModelLoadError
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides, validate_roll

__all__ = ["advice_for", "pass_advice_for", "score_roll", "unsolved_why", "win_block"]


def score_roll(roll: tuple[int, ...], rules: Rules) -> dict[str, Any]:
    """Every legal set-aside of one roll, best first (``farkle`` when there is none).

    Raises:
        InvalidDiceError: faces outside 1-6, or more dice than the rules play with.
    """
    faces = validate_roll(roll, rules)
    options = legal_set_asides(faces, rules)
    return {"roll": list(faces), "farkle": not options, "options": [o.to_dict() for o in options]}


def advice_for(
    faces: tuple[int, ...],
    rules: Rules,
    *,
    turn_total: int = 0,
    on_board: bool = True,
    farkle_streak: int = 0,
    throws_left: int | None = None,
    scores: Sequence[int] | None = None,
    streaks: Sequence[int] | None = None,
    solve: bool = True,
) -> dict[str, Any]:
    """The advisor's best keep and bank-or-roll for a roll (``"farkle": true`` when nothing scores).

    With ``scores`` (banked scores, the player to move first; ``streaks``, their farkles in a
    row in the same order, default ``farkle_streak`` for the mover and none for the others) a ``win`` block is added:
    the keep and bank/roll that maximise the chance to win (:func:`farklecam.scoring.winprob.advise_win`),
    that chance, and what maximising points would do where it differs. With ``solve`` off
    (a server answering a request) a rule set whose table is not solved yet gets
    ``{"available": false, "why": ...}`` instead of minutes of solving.

    Raises:
        InvalidDiceError: faces outside 1-6 or too many dice.
        IllegalActionError: a turn total that is not a multiple of 50, a streak or throws out of range,
            or ``throws_left`` given for several dice.
        ModelLoadError: the advisor module is not installed (answered as 503).
    """
    try:
        from farklecam.scoring.advisor import advise  # the solver loads only when advice is asked for
    except ImportError as exc:  # pragma: no cover - only while the advisor is not installed
        raise ModelLoadError("the advisor (farklecam.scoring.advisor) is not available in this installation") from exc
    found = advise(
        faces, rules, turn_total=turn_total, on_board=on_board, farkle_streak=farkle_streak, throws_left=throws_left
    )
    advice: dict[str, Any] = found.to_dict()
    if scores is not None:
        streaks = streaks if streaks is not None else (farkle_streak, *(0 for _ in scores[1:]))
        advice["win"] = win_block(
            faces, rules, scores, turn_total=turn_total, streaks=streaks, throws_left=throws_left, solve=solve
        )
    return advice


def win_block(
    faces: tuple[int, ...],
    rules: Rules,
    scores: Sequence[int],
    *,
    turn_total: int = 0,
    streaks: Sequence[int] | None = None,
    throws_left: int | None = None,
    solve: bool = True,
) -> dict[str, Any]:
    """The ``win`` block of advice: :func:`farklecam.scoring.winprob.advise_win` plus ``available``.

    ``throws_left`` (a single die, Elizabethan rules): throws still allowed, this one included;
    a miss with throws to spare is thrown again, as the points advice says.

    With ``solve`` off, a rule set whose table is not solved yet answers ``available: false``
    instead of minutes of solving (a server answering a request or a frame): the server's
    background solver (:mod:`farklecam.service.win_solver`) starts on it, or, without one, the answer
    says how to solve it from the command line.

    Raises:
        InvalidDiceError: a bad roll.
        IllegalActionError: scores :func:`farklecam.scoring.winprob.check_scores` refuses.
    """
    from farklecam.scoring.winprob import advise_win, check_scores, ready

    check_scores(rules, scores, turn_total)
    if solve or ready(rules, scores):
        found = advise_win(faces, rules, scores, turn_total=turn_total, streaks=streaks, throws_left=throws_left)
        return {"available": True, **found.to_dict()}
    return {"available": False, "why": unsolved_why(rules)}


def pass_advice_for(
    rules: Rules,
    total: int,
    dice: int,
    *,
    on_board: bool = True,
    scores: Sequence[int] | None = None,
    streaks: Sequence[int] | None = None,
    solve: bool = True,
) -> dict[str, Any]:
    """Progressive: take the ``dice`` passed with ``total`` or start fresh, as ``{"passed": {...}}``.

    By points, and with ``scores`` (the player to move first; the last banked the pass) a ``win``
    block by the chance to win (:func:`farklecam.scoring.pass_advice.advise_pass`). ``solve`` as
    :func:`advice_for`: without it, a table not yet solved gives ``win.available`` false and the points advice.

    Raises:
        IllegalActionError: rules without piggyback, a pass they cannot offer, or scores
            :func:`farklecam.scoring.winprob.check_scores` refuses.
    """
    from farklecam.scoring.pass_advice import advise_pass
    from farklecam.scoring.winprob import check_scores, ready

    if scores is not None:
        check_scores(rules, scores)
        if not (solve or ready(rules, scores)):
            points = advise_pass(rules, total, dice, on_board=scores[0] > 0).to_dict()
            return {"passed": {**points, "win": {"available": False, "why": unsolved_why(rules)}}}
    return {"passed": advise_pass(rules, total, dice, on_board=on_board, scores=scores, streaks=streaks).to_dict()}


def unsolved_why(rules: Rules) -> str:
    """Why a rule set's win advice is not there yet, and when it will be."""
    from farklecam.scoring.winprob import solve_wait
    from farklecam.service.win_solver import SolveState, installed

    wait = solve_wait(rules)
    solver = installed()
    state = solver.request(rules) if solver is not None else None
    if state in (SolveState.SOLVING, SolveState.READY):
        return f"the chance to win under these rules is being solved now ({wait}); advice by points until then"
    if state is SolveState.BUSY:
        return "the server is solving another rule set's chance to win first; these rules follow when it is done"
    return (
        "the chance to win under these rules is not solved yet: run `farklecam solve --players 2` "
        f"with the same rules once ({wait}; then it is cached)"
    )
