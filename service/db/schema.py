"""The tables, as numbered migrations: each engine's statements for the same append-only records.

``games`` holds what a :class:`~farklecam.scoring.game.Game` is built from and ``events``
every accepted action in order (see :mod:`farklecam.service.storage`); the three
``tournament`` tables hold sign-ups and which game each round's table plays (see
:mod:`farklecam.service.tournament_store`). Every one of them refuses ``UPDATE`` and
``DELETE`` (PostgreSQL also ``TRUNCATE``) with a trigger: records are only ever added.

``throw_pictures`` (migration 3) is the one record that may lose what it holds: the picture
of each throw the camera scored, keyed by the game and the event's ``seq`` (see
:mod:`farklecam.service.picture_store`). Pictures are evidence for a disputed score, not
part of the game: an organiser deletes them, and the row stays behind with its ``deleted``
time, so the log can still tell a camera's throw whose picture is gone from one typed by
hand. Its key refers to ``events``, so a picture always belongs to a stored event, and
deleting pictures never touches the event log.

``live_tables`` (migration 5) is not a record at all: one row per table whose camera streams to a
server now, replaced and deleted as streams open and close (see :mod:`farklecam.service.live_tables`).

A migration is never edited once released; a change to the tables is a new one at the
end. Migration 1's SQLite statements say ``IF NOT EXISTS`` because files written before
migrations were numbered hold those tables already (their ``PRAGMA user_version`` is 1),
and migration 2's because such files may hold the tournament tables too.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema, for both engines.

    Attributes:
        version: the schema version once it is applied (1, 2, ...).
        name: what it adds, for people reading ``schema_version``.
        sqlite: its statements on SQLite.
        postgresql: its statements on PostgreSQL.
    """

    version: int
    name: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]


def _sqlite_append_only(table: str, message: str) -> tuple[str, ...]:
    return tuple(
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
        for op in ("UPDATE", "DELETE")
    )


def _postgres_append_only(table: str, message: str) -> tuple[str, ...]:
    return (
        f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION farklecam_append_only('{message}')",
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION farklecam_append_only('{message}')",
    )


_GAMES = """
CREATE TABLE IF NOT EXISTS games (
    id           TEXT PRIMARY KEY,
    players      TEXT NOT NULL,              -- JSON list of names, seating order
    rules        TEXT NOT NULL,              -- JSON Rules.to_dict()
    first_player TEXT,
    auto_farkle  INTEGER NOT NULL DEFAULT 1,
    created      {real} NOT NULL,
    updated      {real} NOT NULL
)"""
_EVENTS = """
CREATE TABLE IF NOT EXISTS events (
    game_id TEXT NOT NULL REFERENCES games(id),
    seq     INTEGER NOT NULL,                -- 1, 2, 3... per game
    action  TEXT NOT NULL,                   -- JSON Action.to_dict()
    at      {real},
    PRIMARY KEY (game_id, seq)
){without_rowid}"""
_TOURNAMENTS = (
    """
CREATE TABLE IF NOT EXISTS tournaments (
    name    TEXT PRIMARY KEY,
    seed    BIGINT NOT NULL,
    created {real} NOT NULL
)""",
    """
CREATE TABLE IF NOT EXISTS tournament_players (
    tournament TEXT NOT NULL REFERENCES tournaments(name),
    seq        INTEGER NOT NULL,               -- sign-up order, from 1 (the tie rule reads it)
    name       TEXT NOT NULL,
    PRIMARY KEY (tournament, seq),
    UNIQUE (tournament, name)
)""",
    """
CREATE TABLE IF NOT EXISTS tournament_tables (
    tournament TEXT NOT NULL REFERENCES tournaments(name),
    round      INTEGER NOT NULL,               -- 0 for round 1
    table_no   INTEGER NOT NULL,               -- 0 for table 1
    game_id    TEXT NOT NULL,                  -- games(id): the table's game and seating
    PRIMARY KEY (tournament, round, table_no)
)""",
)
_THROW_PICTURES = """
CREATE TABLE throw_pictures (
    game_id TEXT NOT NULL,
    seq     INTEGER NOT NULL,                -- the event (a camera-scored throw) the picture shows
    jpeg    {blob},                          -- the settled frame, downscaled; NULL once deleted
    bytes   INTEGER NOT NULL,                -- the JPEG's size (kept after it is deleted)
    width   INTEGER NOT NULL,
    height  INTEGER NOT NULL,
    reading TEXT,                            -- JSON: the reading as read, in the picture's pixels; NULL once deleted
    told    TEXT,                            -- JSON list: what the players said of its dice before it was scored
    taken   {real} NOT NULL,
    deleted {real},                          -- when an organiser deleted it, else NULL
    PRIMARY KEY (game_id, seq),
    FOREIGN KEY (game_id, seq) REFERENCES events(game_id, seq)
)"""
#: One row per table whose camera streams to a server now (:mod:`farklecam.service.live_tables`): presence,
#: not record, so rows are replaced and deleted.
_LIVE_TABLES = """
CREATE TABLE live_tables (
    game_id TEXT PRIMARY KEY,
    server  TEXT NOT NULL,                   -- the serve process (serve --name, else HOST:PORT)
    since   {real} NOT NULL,
    seen    {real} NOT NULL                  -- last refreshed while frames arrived
)"""
#: JSON object of points by player name; NULL: everyone starts from 0.
_HEAD_START = "ALTER TABLE games ADD COLUMN head_start TEXT"
_EVENTS_ONLY_GROW = "the event log is append-only"
_TOURNAMENTS_ONLY_GROW = "tournament records are append-only"
_TOURNAMENT_TABLES = ("tournaments", "tournament_players", "tournament_tables")

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "games and their event logs",
        sqlite=(
            _GAMES.format(real="REAL"),
            _EVENTS.format(real="REAL", without_rowid=" WITHOUT ROWID"),
            *_sqlite_append_only("events", _EVENTS_ONLY_GROW),
        ),
        postgresql=(
            _GAMES.format(real="DOUBLE PRECISION"),
            _EVENTS.format(real="DOUBLE PRECISION", without_rowid=""),
            "CREATE INDEX games_by_update ON games (updated DESC, id)",
            "CREATE FUNCTION farklecam_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'restrict_violation'; END $$",
            *_postgres_append_only("events", _EVENTS_ONLY_GROW),
        ),
    ),
    Migration(
        2,
        "tournaments: sign-ups and each round's tables",
        sqlite=tuple(t.format(real="REAL") for t in _TOURNAMENTS)
        + tuple(s for t in _TOURNAMENT_TABLES for s in _sqlite_append_only(t, _TOURNAMENTS_ONLY_GROW)),
        postgresql=tuple(t.format(real="DOUBLE PRECISION") for t in _TOURNAMENTS)
        + tuple(s for t in _TOURNAMENT_TABLES for s in _postgres_append_only(t, _TOURNAMENTS_ONLY_GROW)),
    ),
    Migration(
        3,
        "the picture behind each camera-scored throw",
        sqlite=(_THROW_PICTURES.format(blob="BLOB", real="REAL"),),
        postgresql=(_THROW_PICTURES.format(blob="BYTEA", real="DOUBLE PRECISION"),),
    ),
    Migration(
        4,
        "a game's head start: points some players start with",
        sqlite=(_HEAD_START,),
        postgresql=(_HEAD_START,),
    ),
    Migration(
        5,
        "which server each live table's camera streams to",
        sqlite=(_LIVE_TABLES.format(real="REAL"),),
        postgresql=(_LIVE_TABLES.format(real="DOUBLE PRECISION"),),
    ),
)

#: The schema version this code writes and reads.
SCHEMA_VERSION = MIGRATIONS[-1].version
