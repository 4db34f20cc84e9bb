"""The tournament's pure logic (sign-up, rounds, seating, cuts, tie rule) and the advisor's simulation."""

from __future__ import annotations

import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.scoring.rules import TieRule
from farklecam.scoring.tournament import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Advance,
    InvalidTournamentError,
    RoundPlan,
    TableResult,
    Tournament,
    TournamentError,
    advancing,
    plan_rounds,
    rank_round,
    seat,
    table_rules,
)
from farklecam.scoring.tournament_sim import simulate

NAMES = tuple(f"P{i:02d}" for i in range(1, MAX_PLAYERS + 1))


def test_forty_players_follow_the_house_text() -> None:
    plans = plan_rounds(40)
    assert [(p.name, p.rules, p.players, p.tables, p.advance, p.goes_on) for p in plans] == [
        ("Round 1", "house", 40, 10, Advance.BEST_TOTALS, 32),
        ("Round 2", "progressive", 32, 8, Advance.TOP_TWO, 16),
        ("Round 3", "house", 16, 4, Advance.WINNER, 4),
        ("Final", "house", 4, 1, Advance.CHAMPION, 1),
    ]


@given(st.integers(MIN_PLAYERS, MAX_PLAYERS), st.integers(0, 2**32))
def test_every_field_size_seats_tables_of_three_or_four_down_to_a_final(players: int, seed: int) -> None:
    plans = plan_rounds(players)
    assert plans[-1].name == "Final" and 2 <= plans[-1].players <= 4
    for index, (plan, following) in enumerate(itertools.pairwise(plans)):
        assert following.players == plan.goes_on < plan.players
        tables = seat(NAMES[: plan.players], seed, index)
        assert len(tables) == plan.tables
        assert all(3 <= len(t) <= 4 for t in tables)


@pytest.mark.parametrize("players", [MIN_PLAYERS - 1, MAX_PLAYERS + 1, 0])
def test_field_sizes_out_of_range_are_refused_with_the_range(players: int) -> None:
    with pytest.raises(InvalidTournamentError, match=f"{MIN_PLAYERS} to {MAX_PLAYERS} players"):
        plan_rounds(players)


@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=40, unique=True), st.integers(0, 2**32), st.integers(0, 3))
def test_seating_is_a_reproducible_deal_of_the_whole_field(players: list[str], seed: int, round_index: int) -> None:
    tables = seat(players, seed, round_index)
    assert sorted(p for t in tables for p in t) == sorted(players)
    assert max(map(len, tables)) - min(map(len, tables)) <= 1 and max(map(len, tables)) <= 4
    assert seat(players, seed, round_index) == tables


def test_seating_depends_on_the_seed_and_the_round() -> None:
    assert seat(NAMES, 1, 0) != seat(NAMES, 2, 0)
    assert seat(NAMES, 1, 0) != seat(NAMES, 1, 1)


def test_the_41st_player_is_refused_and_nobody_of_that_request_is_signed_up() -> None:
    full = Tournament("cup", 1).signup(NAMES)
    assert len(full.players) == 40
    with pytest.raises(Exception, match=r"is full: at most 40 players sign up, so 'Zed' cannot"):
        full.signup(["Zed"])
    half = Tournament("cup", 1).signup(NAMES[:39])
    with pytest.raises(Exception, match="'Zoe' cannot"):
        half.signup(["Yan", "Zoe"])
    assert half.players == NAMES[:39]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["Ann", "Ann"], "already signed up"),
        (["Ann bob"], "player name 'Ann bob' must be"),
        ([""], "must be 1-64 letters"),
        ([], "at least one player"),
    ],
)
def test_bad_sign_ups_say_why(names: list[str], message: str) -> None:
    with pytest.raises(Exception, match=message):
        Tournament("cup", 1).signup(names)


def test_sign_up_closes_at_the_start_and_the_start_needs_enough_players() -> None:
    few = Tournament("cup", 1).signup(NAMES[:5])
    with pytest.raises(Exception, match="needs at least 6 players"):
        few.start_next()
    started = few.signup(["P06"]).start_next()
    assert started.started and sorted(p for t in started.seatings[0] for p in t) == sorted(NAMES[:6])
    with pytest.raises(Exception, match="sign-up is closed"):
        started.signup(["Late"])
    with pytest.raises(Exception, match="no result for every table yet"):
        started.start_next([])


def test_ties_at_the_cut_go_to_the_table_winner_then_the_earlier_sign_up() -> None:
    plan = RoundPlan("Round 2", "progressive", 8, 2, Advance.TOP_TWO, 4)
    signup = ["A", "B", "C", "D", "E", "F", "G", "H"]
    results = [
        TableResult(("A", "B", "C", "D"), (10_000, 10_000, 10_000, 500), winners=("C",)),
        TableResult(("H", "G", "F", "E"), (10_200, 7_000, 7_000, 7_000), winners=("H",)),
    ]
    assert advancing(plan, results, signup) == ("C", "A", "H", "E")
    ranks = rank_round(plan, results, signup)
    assert [s.player for s in ranks[:4]] == ["H", "C", "A", "B"]
    assert {s.player for s in ranks if s.advances} == {"C", "A", "H", "E"}


@given(st.lists(st.integers(0, 300).map(lambda k: 50 * k), min_size=40, max_size=40), st.integers(0, 1000))
@settings(max_examples=50)
def test_the_first_cut_keeps_exactly_the_best_totals(scores: list[int], seed: int) -> None:
    plan = plan_rounds(40)[0]
    tables = seat(NAMES, seed, 0)
    score_of = dict(zip(NAMES, scores, strict=True))
    results = [TableResult(t, tuple(score_of[p] for p in t), (max(t, key=lambda p: score_of[p]),)) for t in tables]
    going = advancing(plan, results, NAMES)
    assert len(going) == len(set(going)) == 32
    worst_kept = min(score_of[p] for p in going)
    assert all(score_of[p] <= worst_kept for p in NAMES if p not in going)


def test_tables_play_on_until_one_leads() -> None:
    rules = table_rules("progressive")
    assert rules.tie is TieRule.EXTRA_ROUND and rules.piggyback and rules.target == 10_000


def test_a_forty_player_simulation_plays_all_four_rounds_in_under_a_minute() -> None:
    start = time.perf_counter()
    report = simulate(40, 11).to_dict()
    elapsed = time.perf_counter() - start
    assert elapsed < 60
    assert [(r["name"], r["rules"], len(r["tables"])) for r in report["rounds"]] == [
        ("Round 1", "house", 10),
        ("Round 2", "progressive", 8),
        ("Round 3", "house", 4),
        ("Final", "house", 1),
    ]
    for earlier, later in zip(report["rounds"], report["rounds"][1:], strict=False):
        going = sorted(p for t in earlier["tables"] for p in t["advance"])
        assert going == sorted(p for t in later["tables"] for p in t["players"])
    final = report["rounds"][-1]["tables"][0]
    assert final["advance"] == [report["winner"]]
    assert max(final["scores"]) == final["scores"][final["players"].index(report["winner"])] >= 10_000
    assert simulate(40, 11).to_dict() == report


def test_a_small_field_skips_round_three_and_the_final_can_turn_progressive() -> None:
    report = simulate(12, 3, progressive_final_at=4).to_dict()
    assert [r["name"] for r in report["rounds"]] == ["Round 1", "Round 2", "Final"]
    assert report["rounds"][-1]["rules"] == "house then progressive"
    assert len(report["rounds"][-1]["tables"][0]["players"]) == 4


@given(st.integers(MIN_PLAYERS, MAX_PLAYERS), st.integers(0, 2**32), st.randoms(use_true_random=False))
@settings(max_examples=40)
def test_any_field_runs_round_by_round_to_one_champion(players: int, seed: int, rng: random.Random) -> None:
    tournament = Tournament("cup", seed).signup(NAMES[:players])
    results: list[TableResult] | None = None
    going: tuple[str, ...] = NAMES[:players]
    for index, plan in enumerate(tournament.plan):
        tournament = tournament.start_next(results)
        seating = tournament.seatings[index]
        assert sorted(p for t in seating for p in t) == sorted(going)
        assert sum(map(len, seating)) == plan.players and len(seating) == plan.tables
        results = []
        for table in seating:
            scores = tuple(50 * rng.randint(0, 240) for _ in table)
            top = max(scores)
            results.append(TableResult(table, scores, (table[scores.index(top)],)))
        going = advancing(plan, results, tournament.players)
        assert len(going) == len(set(going)) == plan.goes_on
    with pytest.raises(TournamentError, match="is over"):
        tournament.start_next(results)
