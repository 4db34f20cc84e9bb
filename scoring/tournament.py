"""The house rules' tournament as pure logic: sign-up, rounds, seating, cuts and the tie rule.

The bar's text (``../shared/rules/mayor-house-rules-progressive-and-tournament.txt``)
runs 40 players through four rounds: 10 tables of 4 under the house rules, the
32 best total scores go on; 8 tables of 4 under the progressive rules, the top
two of each table go on; the 16 seated at random at 4 tables, house rules, each
table's winner goes on; a final of those 4 (management may switch it to
progressive in the middle: a ``ChangeRules`` event in that game's log).

Nothing here touches dice, games on disk or the clock: a :class:`Tournament` is
a frozen value (name, seed, the sign-up list and the seating of every round
started), and each round's outcome comes in as :class:`TableResult` values read
off finished games. The service (:mod:`farklecam.service.tournament_store`) keeps the
value and the games; :mod:`farklecam.scoring.tournament_sim` plays the whole thing with
the advisor.

Readings chosen where the text leaves room (each one documented, each tested):

* **Fewer than 40 players** (at least :data:`MIN_PLAYERS`): every round seats
  its field at ``ceil(n / 4)`` tables whose sizes differ by at most one, so
  tables hold 3 or 4 players. Round 1 keeps the text's proportion, four in
  five, rounded down to a multiple of 4 so round 2's tables are full:
  ``min(32, 4 * (n // 5))`` go on (40 -> 32, 39 -> 28, 20 -> 16, 10 -> 8,
  6 -> 4). Round 2 sends its top two per table on. When that leaves four
  players or fewer, round 3 is skipped and they play the final; otherwise
  round 3 sends each table's winner to the final.
* **Seating** is random but reproducible: round ``r``'s field is shuffled by a
  generator seeded with the tournament's seed and ``r`` (kept with the
  tournament), then dealt in order to the tables; the order within a table is
  the seating order of its game, whose roll-off decides who throws first.
* **Ties at a cut** (equal scores where only some go on): the table's game
  winner first, then the earlier sign-up. Every table plays ``tie =
  extra_round`` (tied leaders play on until one leads), so a game always has
  one winner and the round-3 and final winners are never a tie.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from farklecam.errors import IllegalActionError, InvalidRulesError
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules, TieRule

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "TABLE_SIZE",
    "Advance",
    "InvalidTournamentError",
    "RoundPlan",
    "Standing",
    "TableResult",
    "Tournament",
    "TournamentError",
    "advancing",
    "check_name",
    "plan_rounds",
    "rank_round",
    "seat",
    "table_rules",
]

#: The text's limit: "40 people max sign up".
MAX_PLAYERS = 40
#: The smallest field whose first round seats tables of 3-4 and still leaves a final of two.
MIN_PLAYERS = 6
#: Seats at a full table.
TABLE_SIZE = 4
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class TournamentError(IllegalActionError):
    """The tournament's rules refuse this now (a full sign-up, a duplicate name, an unfinished round)."""


class InvalidTournamentError(InvalidRulesError):
    """A malformed tournament or player name, or a malformed request."""


class Advance(StrEnum):
    """Who goes on from a round."""

    BEST_TOTALS = "best_totals"
    """The best final scores over all tables."""
    TOP_TWO = "top_two"
    """The first and second of each table."""
    WINNER = "winner"
    """Each table's winner."""
    CHAMPION = "champion"
    """The final: its winner wins the tournament."""


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """One round: its name, rule preset, field size, tables and who goes on.

    Attributes:
        name: "Round 1", "Round 2", "Round 3" or "Final".
        rules: the preset its tables play (``house`` or ``progressive``).
        players: the field.
        tables: tables of 3-4 (``ceil(players / 4)``).
        advance: who goes on.
        goes_on: how many go on (1 for the final).
    """

    name: str
    rules: str
    players: int
    tables: int
    advance: Advance
    goes_on: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**dataclasses.asdict(self), "advance": str(self.advance)}


@dataclass(frozen=True, slots=True)
class TableResult:
    """A table's game as the cuts read it: players in seating order, their scores, the winner(s)."""

    players: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.players) != len(self.scores) or not set(self.winners) <= set(self.players):
            raise InvalidTournamentError(f"a table result needs one score per player, got {self!r}")


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's line of a finished round, in rank order."""

    rank: int
    player: str
    table: int
    score: int
    winner: bool
    advances: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return dataclasses.asdict(self)


def check_name(name: object, what: str) -> str:
    """``name`` if it is 1-64 letters, digits, ``_`` or ``-`` (it goes into links and file names).

    Raises:
        InvalidTournamentError: anything else, with the rule in the message.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):  # not match: its "$" also passes "Ann\n"
        raise InvalidTournamentError(
            f"{what} {name!r} must be 1-64 letters, digits, '_' or '-', starting with a letter or digit"
        )
    return name


def _table_count(players: int) -> int:
    return -(-players // TABLE_SIZE)


def plan_rounds(players: int) -> tuple[RoundPlan, ...]:
    """The rounds a field of ``players`` plays (see the module docstring for how cuts scale).

    Raises:
        InvalidTournamentError: fewer than :data:`MIN_PLAYERS` or more than :data:`MAX_PLAYERS`.
    """
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidTournamentError(
            f"a tournament needs {MIN_PLAYERS} to {MAX_PLAYERS} players (tables of 3-4), got {players}"
        )
    first_cut = min(32, TABLE_SIZE * (players // 5))
    rounds = [RoundPlan("Round 1", "house", players, _table_count(players), Advance.BEST_TOTALS, first_cut)]
    second = _table_count(first_cut)
    rounds.append(RoundPlan("Round 2", "progressive", first_cut, second, Advance.TOP_TWO, 2 * second))
    field = 2 * second
    if field > TABLE_SIZE:
        third = _table_count(field)
        rounds.append(RoundPlan("Round 3", "house", field, third, Advance.WINNER, third))
        field = third
    rounds.append(RoundPlan("Final", "house", field, 1, Advance.CHAMPION, 1))
    return tuple(rounds)


def table_rules(preset: str) -> Rules:
    """The rules a tournament table plays: the preset, with tied leaders playing on (``tie = extra_round``)."""
    return dataclasses.replace(get_rules(preset), tie=TieRule.EXTRA_ROUND)


def seat(players: Sequence[str], seed: int, round_index: int) -> tuple[tuple[str, ...], ...]:
    """Seat ``players`` at ``ceil(n / 4)`` tables at random, reproducibly from ``seed`` and the round.

    The shuffled field is dealt to the tables in turn (player 1 to table 1, player 2
    to table 2, ...), so table sizes differ by at most one.
    """
    field = list(players)
    random.Random(f"farklecam-tournament:{seed}:{round_index}").shuffle(field)
    count = _table_count(len(field))
    return tuple(tuple(field[t::count]) for t in range(count))


def _rank_key(result: TableResult, player: str, signup: dict[str, int]) -> tuple[int, int, int]:
    """Higher score first, then the table's winner, then the earlier sign-up (the documented tie rule)."""
    score = result.scores[result.players.index(player)]
    return (-score, 0 if player in result.winners else 1, signup[player])


def advancing(plan: RoundPlan, results: Sequence[TableResult], signup: Sequence[str]) -> tuple[str, ...]:
    """Who goes on from a finished round, best first (the final's: the champion)."""
    order = {name: i for i, name in enumerate(signup)}
    if plan.advance is Advance.BEST_TOTALS:
        everyone = [(_rank_key(r, p, order), p) for r in results for p in r.players]
        return tuple(p for _, p in sorted(everyone)[: plan.goes_on])
    keep = 2 if plan.advance is Advance.TOP_TWO else 1
    return tuple(p for r in results for p in _ranked_table(r, order)[:keep])


def _ranked_table(result: TableResult, order: dict[str, int]) -> list[str]:
    return sorted(result.players, key=lambda p: _rank_key(result, p, order))


def rank_round(plan: RoundPlan, results: Sequence[TableResult], signup: Sequence[str]) -> tuple[Standing, ...]:
    """Every player of a finished round in rank order (score, then the tie rule), with who goes on."""
    order = {name: i for i, name in enumerate(signup)}
    going = set(advancing(plan, results, signup))
    rows = sorted(
        ((_rank_key(r, p, order), t, p, r) for t, r in enumerate(results, 1) for p in r.players),
        key=lambda row: row[0],
    )
    return tuple(
        Standing(i, p, t, r.scores[r.players.index(p)], p in r.winners, p in going)
        for i, (_, t, p, r) in enumerate(rows, 1)
    )


@dataclass(frozen=True, slots=True)
class Tournament:
    """A tournament: its name, seed, the sign-up list and the seating of every round started.

    Every change returns a new value; a refused one raises :class:`TournamentError`
    and changes nothing.
    """

    name: str
    seed: int
    players: tuple[str, ...] = ()
    seatings: tuple[tuple[tuple[str, ...], ...], ...] = ()

    def __post_init__(self) -> None:
        check_name(self.name, "tournament name")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InvalidTournamentError(f"a tournament's seed must be a whole number >= 0, got {self.seed!r}")

    @property
    def started(self) -> bool:
        """Whether round 1 is seated (sign-up is closed)."""
        return bool(self.seatings)

    @property
    def plan(self) -> tuple[RoundPlan, ...]:
        """The rounds this field plays (needs at least :data:`MIN_PLAYERS` signed up)."""
        return plan_rounds(len(self.players))

    def signup(self, names: Iterable[str]) -> Tournament:
        """Add players (one seat each, unique names), refusing all of them if any one is refused.

        Raises:
            TournamentError: the tournament has started, a name is taken, or the 41st seat is asked for.
            InvalidTournamentError: a malformed name.
        """
        new = tuple(check_name(n, "player name") for n in names)
        if not new:
            raise InvalidTournamentError("sign up at least one player")
        if self.started:
            raise TournamentError(f"tournament {self.name!r} has started: sign-up is closed")
        seen = {p.casefold(): p for p in self.players}  # "Ann" and "ann" are one person at a table
        for name in new:
            if name.casefold() in seen:
                raise TournamentError(
                    f"{name!r} is already signed up to {self.name!r} (as {seen[name.casefold()]!r}): names must be "
                    "unique, whatever their case"
                )
            seen[name.casefold()] = name
        if len(self.players) + len(new) > MAX_PLAYERS:
            refused = new[MAX_PLAYERS - len(self.players)]
            raise TournamentError(
                f"tournament {self.name!r} is full: at most {MAX_PLAYERS} players sign up, so {refused!r} "
                f"cannot ({len(self.players)} already signed up)"
            )
        return dataclasses.replace(self, players=self.players + new)

    def next_field(self, results: Sequence[TableResult] | None) -> tuple[str, ...]:
        """Who plays the next round: everyone before round 1, else who goes on from the current round.

        Raises:
            TournamentError: fewer than :data:`MIN_PLAYERS`, the tournament is over, or the current
                round's results do not match its tables.
        """
        if not self.started:
            if len(self.players) < MIN_PLAYERS:
                raise TournamentError(
                    f"tournament {self.name!r} needs at least {MIN_PLAYERS} players to start "
                    f"(tables of 3-4), has {len(self.players)}"
                )
            return self.players
        plan = self.plan
        current = len(self.seatings) - 1
        if current + 1 >= len(plan):
            raise TournamentError(f"tournament {self.name!r} is over: the final was its last round")
        if results is None or [r.players for r in results] != list(self.seatings[current]):
            raise TournamentError(f"{plan[current].name} of {self.name!r} has no result for every table yet")
        return advancing(plan[current], results, self.players)

    def start_next(self, results: Sequence[TableResult] | None = None) -> Tournament:
        """Seat the next round (round 1 closes the sign-up): see :meth:`next_field` for what is refused."""
        field = self.next_field(results)
        return dataclasses.replace(self, seatings=(*self.seatings, seat(field, self.seed, len(self.seatings))))
