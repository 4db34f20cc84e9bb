"""Tournaments on disk, their view and CSV, and the ``farklecam tournament`` verb."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from farklecam.scoring.simulate import RandomDice
from farklecam.scoring.tournament import InvalidTournamentError, TournamentError
from farklecam.scoring.tournament_sim import advisor_action
from farklecam.service.cli import main
from farklecam.service.tournament_store import TournamentNotFoundError, TournamentStore, open_store
from farklecam.service.tournament_view import CSV_COLUMNS, standings_csv, tournament_view

SIX = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]


def _play_round(store: TournamentStore, name: str, seed: int) -> None:
    """Play every unfinished table of the tournament to the end with the advisor (one commit per game)."""
    dice = RandomDice(seed)
    for table in store.tables(name):
        with store.games.lock(table.game_id):
            game = store.games.get(table.game_id)
            while not game.is_over:
                game.apply(advisor_action(game, dice))
            store.games.persist(table.game_id, game)


def test_standings_are_identical_after_reopening_the_store(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        store.create("cup", seed=9)
        store.signup("cup", [f"P{i:02d}" for i in range(1, 41)])
        store.start("cup")
        game_id = store.tables("cup")[0].game_id
        store.games.apply(game_id, advisor_action(store.games.get(game_id), RandomDice(1)))
        before = tournament_view(store, "cup")
    with open_store(db) as store:
        after = tournament_view(store, "cup")
    assert after == before
    assert after["next_round"] is None and after["rounds"][0]["standings"] == []  # round 1 is being played
    assert [len(t["players"]) for t in after["rounds"][0]["tables"]] == [4] * 10
    assert after["rounds"][0]["tables"][0]["link"] == f"/#game={game_id}"


def test_a_small_tournament_runs_to_its_champion_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        store.create("small", seed=3)
        store.signup("small", SIX)
        store.start("small")
        with pytest.raises(TournamentError, match="still being played"):
            store.start("small")
    names = []
    for round_index in range(3):
        with open_store(db) as store:
            _play_round(store, "small", round_index)
            view = tournament_view(store, "small")
            assert view["rounds"][round_index]["complete"]
            names.append(view["rounds"][round_index]["name"])
            if round_index < 2:
                assert view["next_round"] is not None
                going = sorted(view["rounds"][round_index]["advance"])
                assert sorted(p for t in view["next_round"]["seating"] for p in t) == going
                store.start("small")
    assert names == ["Round 1", "Round 2", "Final"]
    with open_store(db) as store:
        view = tournament_view(store, "small")
        assert view["champion"] == view["rounds"][2]["advance"][0]
        assert view["next_round"] is None
        with pytest.raises(TournamentError, match="is over"):
            store.start("small")
    rows = list(csv.DictReader(io.StringIO(standings_csv(view))))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 6 + 4 + 2
    assert {r["player"] for r in rows if r["round"] == "Final" and r["advances"] == "yes"} == {view["champion"]}


def test_refusals_are_clear_and_change_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path / "g.sqlite3") as store:
        store.create("cup", seed=1)
        with pytest.raises(TournamentError, match="already exists"):
            store.create("cup")
        with pytest.raises(InvalidTournamentError, match="tournament name"):
            store.create("no spaces")
        with pytest.raises(TournamentNotFoundError, match="no tournament named 'nope'"):
            store.get("nope")
        store.signup("cup", [f"P{i}" for i in range(39)])
        with pytest.raises(TournamentError, match="'Y' cannot"):
            store.signup("cup", ["X", "Y"])
        assert len(store.get("cup").players) == 39
        with pytest.raises(TournamentError, match="already signed up"):
            store.signup("cup", ["P3"])


def test_tournament_records_are_append_only(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite3"
    with open_store(db) as store:
        store.create("cup", seed=1)
    con = sqlite3.connect(db)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE tournaments SET seed = 2")
    con.close()


# ---------------------------------------------------------------------------- the CLI
def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["tournament", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_runs_a_tournament_and_refuses_the_41st(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "g.sqlite3")
    assert _cli(capsys, "new", "cup", "--seed", "4", "--db", db)[1] == "tournament cup created (seed 4)\n"
    players = [f"P{i:02d}" for i in range(1, 41)]
    assert _cli(capsys, "signup", "cup", *players, "--db", db)[0] == 0
    code, out, err = _cli(capsys, "signup", "cup", "Zed", "--db", db)
    assert code == 2 and not out and err.count("\n") == 1 and "at most 40 players" in err
    assert _cli(capsys, "start", "cup", "--db", db)[0] == 0
    code, out, _ = _cli(capsys, "standings", "cup", "--json", "--db", db)
    view = json.loads(out)
    assert code == 0 and view["started"] and len(view["rounds"][0]["tables"]) == 10
    target = tmp_path / "standings.csv"
    assert _cli(capsys, "export", "cup", "--csv", str(target), "--db", db)[0] == 0
    assert len(target.read_text().splitlines()) == 41
    code, _, err = _cli(capsys, "standings", "nope", "--db", db)
    assert code == 2 and "no tournament named 'nope'" in err


def test_cli_simulate_prints_every_round(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "simulate", "--players", "40", "--seed", "5", "--json")
    report = json.loads(out)
    assert code == 0 and [r["name"] for r in report["rounds"]] == ["Round 1", "Round 2", "Round 3", "Final"]
    assert set(report["rounds"][0]["tables"][0]) == {"players", "scores", "advance"}
    assert report["winner"] in report["rounds"][-1]["tables"][0]["players"]
    code, _, err = _cli(capsys, "simulate", "--players", "41")
    assert code == 2 and "6 to 40 players" in err
