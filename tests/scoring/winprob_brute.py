"""A deliberately naive two-player win-probability solver, the oracle for farklecam.scoring.winprob_dp.

Plain recursion over (my score, their score, turn total, dice) on the set-aside
enumerator itself (no merged tables, no numpy), and Jacobi value iteration on the
turn-start table until it stops moving. Only small targets are practical.
Supports the opening and turn minimums, ``last_round``, ``exact_target``, the
Elizabethan single-die throws, (without a last round or exact target)
must-roll-after-hot-dice, and the farkle penalty with both players' streaks
(a score below 0 counts as 0).
"""

from __future__ import annotations

from functools import cache

from farklecam.scoring.chance import roll_outcomes
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides

STEP = 50


def _throws(rules: Rules, n: int) -> list[tuple[float, list[tuple[int, int, bool]]]]:
    out = []
    for roll, p in roll_outcomes(n):
        keeps = [
            (o.points // STEP, rules.dice if o.hot_dice else o.dice_left, o.hot_dice)
            for o in legal_set_asides(roll, rules)
        ]
        out.append((float(p), keeps))
    return out


def brute_table(rules: Rules, margin: int, *, tol: float = 1e-13, max_iter: int = 500) -> list[list[float]]:
    """``V[i][j]`` (units): chance the player starting a turn with ``i`` beats ``j`` (ties count 1/2), no streaks."""
    return brute_streak_table(rules, margin, tol=tol, max_iter=max_iter)[0][0]


def brute_streak_table(
    rules: Rules, margin: int, *, tol: float = 1e-13, max_iter: int = 500
) -> list[list[list[list[float]]]]:
    """``V[a][b][i][j]``: as :func:`brute_table` with the mover's farkle streak ``a`` and the opponent's ``b``.

    With ``last_round`` a turn must bank once ``margin`` units past the target (as the solver does).
    Gauss-Seidel sweeps, largest score sums first.
    """
    goal = rules.target // STEP
    throws = {n: _throws(rules, n) for n in range(1, rules.dice + 1)}

    d = rules.dice
    # must roll after hot dice, past the target: a keep leaving dice wins, a roll of only hot keeps rolls again
    p_cold = sum(p for p, keeps in throws[d] if any(not hot for _, _, hot in keeps))
    p_only_hot = sum(p for p, keeps in throws[d] if keeps and all(hot for _, _, hot in keeps))
    hot_past_target = p_cold / (1.0 - p_only_hot)
    q1 = sum(p for p, keeps in throws[1] if not keeps)
    tries = rules.single_die_throws

    def bmin(score: int) -> int:
        return -(-rules.bank_minimum(score > 0) // STEP)

    @cache
    def one_turn(score: int, need: int, t: int, n: int, exact: bool) -> float:
        """Last turn: worth of throwing n dice at total t needing ``need`` (tie 1/2; exact: land on it)."""
        value = 0.0
        for p, keeps in throws[n]:
            best = 0.0
            for pts, left, _hot in keeps:
                best = max(best, after_keep(score, need, t + pts, left, exact))
            value += p * best
        return value

    def after_keep(score: int, need: int, t: int, left: int, exact: bool) -> float:
        bank = 0.0
        if t >= max(bmin(score), 1):
            bank = (1.0 if t == need else 0.0) if exact else (1.0 if t > need else 0.5 if t == need else 0.0)
        if bank == 1.0 or (exact and t > need):
            return bank
        return max(bank, one_turn(score, need, t, left, exact))

    k = rules.farkle_penalty_streak if rules.farkle_penalty else 1
    fine = rules.farkle_penalty // STEP
    vs = [[[[0.5] * goal for _ in range(goal)] for _ in range(k)] for _ in range(k)]
    states = [(i, j, s, r) for i in range(goal) for j in range(goal) for s in range(k) for r in range(k)]
    for _ in range(max_iter):
        change = 0.0
        for i, j, s, r in sorted(states, key=lambda p: (-p[0] - p[1], -p[2] - p[3])):
            v = vs[r][0]  # a bank: the opponent moves with streak r, the mover's streak is gone
            if True:
                memo: dict[tuple[int, int], float] = {}
                # the streak's last farkle costs the penalty and starts the streak again
                farkle = 1.0 - (vs[r][s + 1][j][i] if s + 1 < k else vs[r][0][j][max(i - fine, 0)])

                def bank_value(
                    t: int, i: int = i, j: int = j, farkle: float = farkle, v: list[list[float]] = v
                ) -> float:
                    a = i + t
                    if a < goal:
                        return 1.0 - v[j][a]
                    if not rules.exact_target:
                        return 1.0 - one_turn(j, a - j, 0, rules.dice, False) if rules.last_round else 1.0
                    if a == goal:
                        return 1.0 - 0.5 * one_turn(j, goal - j, 0, rules.dice, True) if rules.last_round else 1.0
                    gift = j + t
                    if gift < goal:
                        return 1.0 - v[gift][i]
                    if gift == goal:
                        return 0.5 * one_turn(i, goal - i, 0, rules.dice, True) if rules.last_round else 0.0
                    return farkle

                def throw(
                    t: int, n: int, i: int = i, farkle: float = farkle, memo: dict[tuple[int, int], float] = memo
                ) -> float:
                    if (t, n) in memo:
                        return memo[(t, n)]
                    if rules.exact_target and i + t > goal and t > goal:
                        memo[(t, n)] = farkle
                        return farkle
                    value = 0.0
                    for p, keeps in throws[n]:
                        if not keeps:
                            value += p * farkle
                            continue
                        best = -1.0
                        for pts, left, hot in keeps:
                            u = t + pts
                            forced = hot and rules.must_roll_after_hot_dice
                            if forced and i + u >= goal:
                                best = max(best, hot_past_target)
                                continue
                            stay = bank_value(u) if u >= max(bmin(i), 1) and not forced else -1.0
                            done = (not rules.exact_target) and stay == 1.0
                            if not done and not (
                                rules.last_round and not rules.exact_target and i + u >= goal + margin
                            ):
                                stay = max(stay, throw(u, left))
                            best = max(best, stay)
                        value += p * best
                    if n == 1 and tries > 1:  # a missed single die is thrown again, up to `tries` times
                        success = value - q1 * farkle
                        value = success * sum(q1**k for k in range(tries)) + q1**tries * farkle
                    memo[(t, n)] = value
                    return value

                value = throw(0, rules.dice)
                change = max(change, abs(value - vs[s][r][i][j]))
                vs[s][r][i][j] = value
        if change < tol:
            break
    return vs


def brute_pass_table(
    rules: Rules, margin: int, *, tol: float = 1e-13, max_iter: int = 500
) -> tuple[list[list[float]], dict[tuple[int, int, int, int], float]]:
    """Progressive's passes, naively: ``(V, W)`` with ``V[i][j]`` a turn start with no pass on offer and
    ``W[i, j, T, n]`` one where the banker, now at ``j``, passed ``n`` dice with ``T`` units (``1 <= T <= j``).

    Every state of a turn-start table with its pass on offer, valued by plain recursion
    over the throws: a bank of ``t`` with ``left`` dice to throw (all after hot dice)
    offers exactly those to the opponent, who takes them where that is worth more to them
    (in their last turn too); a farkle offers nothing. No farkle penalty or exact target.
    Gauss-Seidel sweeps, largest score sums first.
    """
    goal, d = rules.target // STEP, rules.dice
    throws = {n: _throws(rules, n) for n in range(1, d + 1)}
    q1 = sum(p for p, keeps in throws[1] if not keeps)
    tries = rules.single_die_throws

    bmin = [max(-(-rules.bank_minimum(score > 0) // STEP), 1) for score in range(goal)]

    @cache
    def race(gap: int, floor: int, n: int) -> float:
        """The last turn: worth of throwing n dice needing more than ``gap`` further units (a tie at exactly
        ``gap`` is 1/2), at least ``floor`` further units before any bank (the bank minimum)."""
        value = 0.0
        for p, keeps in throws[n]:
            best = 0.0
            for pts, left, _hot in keeps:
                g, f = max(gap - pts, -1), max(floor - pts, 0)
                bank = (1.0 if g < 0 else 0.5 if g == 0 else 0.0) if f == 0 else 0.0
                best = max(best, bank if bank == 1.0 else max(bank, race(g, f, left)))
            value += p * best
        if n == 1 and tries > 1:
            value = value * sum(q1**k for k in range(tries))
        return value

    def last_turn(score: int, need: int, t: int, n: int) -> float:
        """The last turn from total ``t`` (a pass taken, or 0), against a bar ``need`` above ``score``."""
        return race(need - t, max(bmin[score] - t, 0), n)

    fresh = [[0.5] * goal for _ in range(goal)]
    offered: dict[tuple[int, int, int, int], float] = {
        (i, j, t, n): 0.5 for i in range(goal) for j in range(goal) for t in range(1, j + 1) for n in range(1, d + 1)
    }
    pairs = sorted(((i, j) for i in range(goal) for j in range(goal)), key=lambda p: -p[0] - p[1])
    for _ in range(max_iter):
        change = 0.0
        for i, j in pairs:
            farkle = 1.0 - fresh[j][i]
            memo: dict[tuple[int, int], float] = {}

            def bank_value(t: int, left: int, i: int = i, j: int = j) -> float:
                a = i + t
                if a < goal:
                    return 1.0 - offered[(j, a, t, left)]
                if not rules.last_round:
                    return 1.0
                return 1.0 - max(last_turn(j, a - j, 0, d), last_turn(j, a - j, t, left))

            def throw(t: int, n: int, i: int = i, farkle: float = farkle, memo: dict = memo) -> float:  # type: ignore[type-arg]
                if (t, n) in memo:
                    return memo[(t, n)]
                value = 0.0
                for p, keeps in throws[n]:
                    if not keeps:
                        value += p * farkle
                        continue
                    best = -1.0
                    for pts, left, _hot in keeps:
                        u = t + pts
                        may_bank = u >= bmin[i]
                        stay = bank_value(u, left) if may_bank else -1.0
                        if stay < 1.0 and not (rules.last_round and may_bank and i + u >= goal + margin):
                            stay = max(stay, throw(u, left))
                        best = max(best, stay)
                    value += p * best
                if n == 1 and tries > 1:
                    success = value - q1 * farkle
                    value = success * sum(q1**k for k in range(tries)) + q1**tries * farkle
                memo[(t, n)] = value
                return value

            start = throw(0, d)
            change = max(change, abs(start - fresh[i][j]))
            fresh[i][j] = start
            for t in range(1, j + 1):
                for n in range(1, d + 1):
                    value = max(start, throw(t, n))
                    change = max(change, abs(value - offered[(i, j, t, n)]))
                    offered[(i, j, t, n)] = value
        if change < tol:
            break
    return fresh, offered
