"""The bank line: from which turn total banking gives the best chance to win, by dice left and score gap.

Why: "when should I stop?" is the question a player asks at every keep. Playing for points
the answer is one total per number of dice left (``farklecam solve``'s "bank at"); playing to
win it moves with the score: far behind, a player must throw on for more, while a leader banks
sooner. :func:`bank_line` gives that total for each number of dice left, at one banked score of
the player to move and many gaps to the opponent, which is what ``farklecam chart`` and
``/api/chart.png`` draw (:mod:`farklecam.service.chart_picture`).

How: the decision at each turn total is exactly the advisor's (:func:`farklecam.scoring.winprob.advise_win`
after a keep): bank where the rules allow it and its chance to win is at least that of throwing
on. Before the last round the turns of every gap are swept in one batch from the solved two-player
table (:func:`farklecam.scoring.winprob_dp.sweep`, the same sweep, bank values and farkle worth the
advisor reads); with the opponent at or past the target (``last_round``) the mover's last turn is
valued exactly (:func:`farklecam.scoring.last_round.mover_turn`). The line is the smallest total
from which banking is best at every larger total; below it banking can still be best at a few
totals (a bank just short of the target, say, that throwing on would only risk: ``also_bank``).
No line (``None``) where banking is never best: throwing on never farkles (hot dice under a
no-score bonus), the rules forbid banking on hot dice, or the position cannot occur. Progressive
rules can put a line at the cut, ``target + 5000`` (:data:`farklecam.scoring.winprob_dp.LAST_ROUND_MARGIN`):
a bank past the target passes the opponent a winning total, and with several dice left the advisor
throws on for fewer dice to pass, banking below the target (``also_bank``).
The points-only line beside it comes from :meth:`farklecam.scoring.solver.Policy.decide`.

Two players, neither with farkles behind them (a farkle penalty's streaks at 0); a mover at 0
is not on the board, so the opening minimum holds. With an exact target only totals up to the
target are charted (``up_to``): past it a bank overshoots.

Speed (house, 201 gaps from -5,000 to 5,000, two shared cores at load average 4): 0.05 s once the
table and the compiled sweep are loaded, 0.6 s for a process's first line (loading the compiled
sweep); gaps in the mover's last turn add about 8 ms each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from farklecam.errors import IllegalActionError
from farklecam.scoring import last_round, winprob, winprob_dp
from farklecam.scoring.rules import Rules
from farklecam.scoring.solver import solve

__all__ = ["MAX_GAPS", "BankLine", "DiceLine", "Stage", "bank_line", "default_score", "gap_range"]

STEP = winprob_dp.STEP
#: The most gaps one line is computed for (one sweep each; 201 is a chart from -5000 to 5000 in 50s).
MAX_GAPS = 1001
#: Turn totals past the opponent's score checked in a last turn (once ahead, a last turn's bank wins).
_LAST_TURN_MARGIN = 10


class Stage(StrEnum):
    """Where the game stands at one gap."""

    PLAYING = "playing"  # both below the target: the two-player table
    LAST_TURN = "last_turn"  # the opponent reached the target: the mover's last turn
    OUT_OF_PLAY = "out_of_play"  # no such position: an opponent below 0, or a game already over


@dataclass(frozen=True, slots=True)
class DiceLine:
    """The bank line for one number of dice to throw on with.

    Attributes:
        dice: dice thrown when throwing on (all of them: hot dice).
        hot_dice: every die has scored, all are thrown again.
        bank_from: per gap, the smallest turn total (points) from which banking is best at every
            larger total; ``None`` where banking is never best or the position cannot occur.
        also_bank: per gap, the totals below ``bank_from`` (without a line: anywhere) where banking is
            best too (mostly none).
        points_bank_from: playing for points: the smallest total from which banking is best at every
            larger one (the same at every gap; ``None``: never).
    """

    dice: int
    hot_dice: bool
    bank_from: tuple[int | None, ...]
    also_bank: tuple[tuple[int, ...], ...]
    points_bank_from: int | None

    def banks(self, index: int, total: int) -> bool:
        """Whether banking ``total`` is best at gap number ``index`` (what the advisor says after a keep)."""
        line = self.bank_from[index]
        return (line is not None and total >= line) or total in self.also_bank[index]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "dice": self.dice,
            "hot_dice": self.hot_dice,
            "bank_from": list(self.bank_from),
            "also_bank": [list(totals) for totals in self.also_bank],
            "points_bank_from": self.points_bank_from,
        }


@dataclass(frozen=True, slots=True)
class BankLine:
    """The bank lines of one rule set and mover score against a range of score gaps (build with :func:`bank_line`).

    Attributes:
        rules: the rules played.
        mine: the banked score of the player about to decide.
        gaps: opponent's score minus ``mine``, ascending.
        stages: where the game stands at each gap.
        lines: one per number of dice thrown on, 1 to ``rules.dice`` (the last: hot dice).
        up_to: with an exact target, the largest turn total charted (``target - mine``); else ``None``.
        approximation: what the chances leave out, in words (``None``: exact).
    """

    rules: Rules
    mine: int
    gaps: tuple[int, ...]
    stages: tuple[Stage, ...]
    lines: tuple[DiceLine, ...]
    up_to: int | None
    approximation: str | None

    @property
    def opponents(self) -> tuple[int, ...]:
        """The opponent's banked score at each gap."""
        return tuple(self.mine + gap for gap in self.gaps)

    def line(self, dice: int) -> DiceLine:
        """The line for throwing on with ``dice`` dice (``rules.dice``: hot dice).

        Raises:
            IllegalActionError: a number of dice the rules do not throw.
        """
        if not 1 <= dice <= len(self.lines):
            raise IllegalActionError(f"dice to throw on with are 1-{len(self.lines)}, got {dice}")
        return self.lines[dice - 1]

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``farklecam chart --json`` prints and ``/api/chart`` answers."""
        return {
            "rules": self.rules.name,
            "score": self.mine,
            "target": self.rules.target,
            "on_board": self.mine > 0,
            "bank_minimum": self.rules.bank_minimum(self.mine > 0),
            "gaps": list(self.gaps),
            "opponents": list(self.opponents),
            "stages": [str(stage) for stage in self.stages],
            "lines": [line.to_dict() for line in self.lines],
            "up_to": self.up_to,
            "approximation": self.approximation,
        }


def default_score(rules: Rules) -> int:
    """The mover's score where none is given: half the target, a multiple of 50."""
    return rules.target // 2 // STEP * STEP


def gap_range(low: int, high: int, step: int) -> tuple[int, ...]:
    """The gaps ``low, low + step, ..., high`` (``high`` included where the steps land on it).

    Raises:
        IllegalActionError: values that are not multiples of 50, ``low > high``, or more than :data:`MAX_GAPS`.
    """
    for name, value in (("gap", low), ("gap", high), ("step", step)):
        if value % STEP:
            raise IllegalActionError(f"a {name} is a multiple of {STEP}, got {value}")
    if step <= 0:
        raise IllegalActionError(f"the step between gaps is at least {STEP}, got {step}")
    if low > high:
        raise IllegalActionError(f"the gap range goes from low to high, got {low} to {high}")
    count = (high - low) // step + 1
    if count > MAX_GAPS:
        raise IllegalActionError(f"at most {MAX_GAPS} gaps at once, got {count}: take a larger step")
    return tuple(range(low, high + 1, step))


def bank_line(rules: Rules, *, mine: int, gaps: Sequence[int]) -> BankLine:
    """The bank line of ``rules`` for a mover with ``mine`` banked, at each of ``gaps`` (opponent minus mover).

    Solves the rules' two-player win table first where it is not solved (the presets' ship solved:
    :func:`farklecam.scoring.winprob.ready` says whether this returns at once).

    Raises:
        IllegalActionError: ``mine`` not a multiple of 50 in ``0..target - 50``; gaps not multiples of
            50, not ascending, none, or more than :data:`MAX_GAPS`.
    """
    _check(rules, mine, gaps)
    d = rules.dice
    opponents = np.asarray([mine + gap for gap in gaps], dtype=np.int64)
    stages = tuple(_stage(rules, int(other)) for other in opponents)
    up_to = rules.target - mine if rules.exact_target else None
    lines: list[int | None] = [None] * (len(gaps) * d)  # [gap * d + m], m: dice left (0: hot dice)
    extra: list[tuple[int, ...]] = [()] * (len(gaps) * d)
    playing = np.asarray([s is Stage.PLAYING for s in stages])
    if playing.any():
        found = _playing_decisions(rules, mine, opponents[playing], up_to)
        for row, at in enumerate(np.nonzero(playing)[0]):
            for m in range(d):
                lines[at * d + m], extra[at * d + m] = _threshold(found[row, m])
    for k, stage in enumerate(stages):
        if stage is Stage.LAST_TURN:
            decisions = _last_turn_decisions(rules, mine, int(opponents[k]), up_to)
            for m in range(d):
                lines[k * d + m], extra[k * d + m] = _threshold(decisions[m])
    points = _points_lines(rules, mine, up_to)
    dice_lines = []
    for n in range(1, d + 1):
        m = 0 if n == d else n
        dice_lines.append(
            DiceLine(
                dice=n,
                hot_dice=n == d,
                bank_from=tuple(lines[k * d + m] for k in range(len(gaps))),
                also_bank=tuple(extra[k * d + m] for k in range(len(gaps))),
                points_bank_from=points[m],
            )
        )
    return BankLine(
        rules=rules,
        mine=mine,
        gaps=tuple(gaps),
        stages=stages,
        lines=tuple(dice_lines),
        up_to=up_to,
        approximation=_approximation(rules, mine, opponents, stages),
    )


# ---------------------------------------------------------------------- checks and stages
def _check(rules: Rules, mine: int, gaps: Sequence[int]) -> None:
    if isinstance(mine, bool) or not isinstance(mine, int) or mine % STEP:
        raise IllegalActionError(f"a banked score is a multiple of {STEP}, got {mine!r}")
    if not 0 <= mine < rules.target:
        raise IllegalActionError(f"the mover's score must be 0..{rules.target - STEP} (the target is {rules.target})")
    if not gaps:
        raise IllegalActionError("give at least one score gap")
    if len(gaps) > MAX_GAPS:
        raise IllegalActionError(f"at most {MAX_GAPS} gaps at once, got {len(gaps)}")
    for gap in gaps:
        if isinstance(gap, bool) or not isinstance(gap, int) or gap % STEP:
            raise IllegalActionError(f"a score gap is a multiple of {STEP}, got {gap!r}")
    if any(b <= a for a, b in pairwise(gaps)):
        raise IllegalActionError("the score gaps must be ascending, each once")


def _stage(rules: Rules, other: int) -> Stage:
    """Where the game stands with the opponent at ``other`` (the mover is below the target)."""
    if other < 0:
        return Stage.OUT_OF_PLAY
    if other < rules.target:
        return Stage.PLAYING
    if not rules.last_round or (rules.exact_target and other > rules.target):
        return Stage.OUT_OF_PLAY  # the game is over, or a score no game reaches
    return Stage.LAST_TURN


def _approximation(rules: Rules, mine: int, opponents: Any, stages: Sequence[Stage]) -> str | None:
    """What the table's and the last turn's chances leave out, in words, each once."""
    parts: list[str] = []
    if Stage.PLAYING in stages and (before := winprob.table_approximation(rules, 2)):
        parts.append(before)
    for other, stage in zip(opponents, stages, strict=True):
        if stage is Stage.LAST_TURN:
            seats = last_round.read_seats(rules, [mine, int(other)])
            note = last_round.approximation(rules, seats) if seats is not None else None
            if note and note not in parts:
                parts.append(note)
    return "; ".join(parts) or None


# ---------------------------------------------------------------------- decisions
def _threshold(decisions: npt.NDArray[np.bool_]) -> tuple[int | None, tuple[int, ...]]:
    """``(line, also)`` from bank-or-not at totals 0, 50, ...: where banking starts to stay best, and totals below.

    No line where the last total charted is not banked; ``also`` then holds every total where banking is best.
    """
    last = decisions.size > 0 and bool(decisions[-1])
    rolls = np.nonzero(~decisions)[0]
    first = (int(rolls[-1]) + 1 if rolls.size else 0) if last else decisions.size
    also = tuple(int(t) * STEP for t in np.nonzero(decisions[:first])[0])
    return (first * STEP if last else None), also


def _allowed(rules: Rules, mine: int, totals: Any) -> npt.NDArray[np.bool_]:
    """``allowed[m, t]``: whether a bank of ``totals[t]`` units with ``m`` dice left may be made (0: hot dice)."""
    least = max(rules.bank_minimum(mine > 0), STEP)
    ok = np.repeat((np.asarray(totals) * STEP >= least)[None, :], rules.dice, axis=0)
    if rules.must_roll_after_hot_dice:
        ok[0] = False
    return ok


def _playing_decisions(rules: Rules, mine: int, opponents: Any, up_to: int | None) -> npt.NDArray[np.bool_]:
    """``bank[k, m, t]``: banking is best at total ``t`` units with ``m`` dice left against ``opponents[k]``.

    One sweep for every gap, read as :func:`farklecam.scoring.winprob._valued_options` reads its turn
    (the same context, farkle worth, bank values and throws, so the same decisions to the last bit).
    """
    ctx = winprob.context(rules)
    d = rules.dice
    j = opponents // STEP
    i = np.full(j.size, mine // STEP, dtype=np.int64)
    zero = np.zeros(j.size, dtype=np.int64)
    f = np.asarray(winprob_dp.farkle_worth(ctx, i, j, zero, zero), dtype=float)
    turn = winprob_dp.sweep(
        ctx, i, j, f, b=zero, keep_throw=True, slopes=False, offers=ctx.goal if rules.piggyback else 0
    )
    width = turn.dec.shape[0] if up_to is None else up_to // STEP + 1
    totals = np.arange(width)
    cap = np.asarray(winprob_dp.bank_caps(ctx, i, j))
    roll = np.array(turn.dec[:width].transpose(2, 1, 0))  # (K, m, T): past each cap the closed form
    thrown = min(width, turn.throw.shape[0])
    below = totals[None, :thrown] < cap[:, None]  # (K, T): the throw was valued
    for m in range(d):
        throws = turn.throw[:thrown, d if m == 0 else m, :].T
        roll[:, m, :thrown] = np.where(below, throws, roll[:, m, :thrown])
    if ctx.passing:  # the bank passes its total and the dice left
        bank = winprob_dp.pass_bank_values(ctx, i[:, None], j[:, None], totals[None, :])
    else:
        bank = winprob_dp.bank_values(ctx, i[:, None], j[:, None], f[:, None], totals[None, :], 0)[0][:, None, :]
    decided: npt.NDArray[np.bool_] = _allowed(rules, mine, totals)[None, :, :] & (bank >= roll)
    return decided


def _last_turn_decisions(rules: Rules, mine: int, other: int, up_to: int | None) -> npt.NDArray[np.bool_]:
    """``bank[m, t]`` in the mover's last turn against ``other`` at or past the target (as the advisor decides)."""
    turn = last_round.mover_turn(rules, [mine, other])
    if up_to is None:  # once ahead a last turn's bank wins: a few totals past that settle the line
        least = max(rules.bank_minimum(mine > 0), STEP) // STEP
        width = max((other - mine) // STEP + 1, least) + _LAST_TURN_MARGIN
    else:
        width = up_to // STEP + 1
    out = np.zeros((rules.dice, width), dtype=bool)
    for m in range(rules.dice):
        for t in range(width):
            bank = turn.bank(t * STEP, m)
            out[m, t] = bank is not None and bank >= turn.roll(t * STEP, m)
    return out


def _points_lines(rules: Rules, mine: int, up_to: int | None) -> list[int | None]:
    """Playing for points: ``line[m]`` by :meth:`farklecam.scoring.solver.Policy.decide` (0: hot dice)."""
    policy = solve(rules)
    top = policy.cap if up_to is None else min(policy.cap, up_to)
    on_board = mine > 0
    lines: list[int | None] = []
    for m in range(rules.dice):
        decisions = np.asarray(
            [policy.decide(t, m, on_board=on_board)[0] == "bank" for t in range(0, top + 1, STEP)], dtype=bool
        )
        lines.append(_threshold(decisions)[0])
    return lines
