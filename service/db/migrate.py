"""Bring a database's schema to this code's version at open: each migration once, in order, in a transaction.

The ``schema_version`` table lists each migration applied (version, name, when).
Opening applies the ones missing, each in its own transaction that also records it,
under a lock every process opening the database takes, so two servers starting at
once apply each migration once and a crash half-way leaves the last whole version.
Opening again changes nothing. A database whose version is above this code's is
refused: its tables may mean what this code does not know, and writing to them could
break the code that made them.

SQLite files written before migrations were numbered hold version 1 in ``PRAGMA
user_version`` and no ``schema_version`` table; that pragma is also kept at the version
reached, so such older code refuses a file this code moved on.
"""

from __future__ import annotations

import time

from farklecam.errors import StorageError
from farklecam.service.db.engine import Database, Transaction
from farklecam.service.db.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["migrate", "schema_version"]

_VERSIONS = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name    TEXT NOT NULL,
    applied {real} NOT NULL
)"""


def _has_versions(tx: Transaction, engine: str) -> bool:
    """Whether the ``schema_version`` table exists (in the schema the connection writes to, on PostgreSQL)."""
    if engine == "sqlite":
        sql = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    else:
        sql = "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_version'"
    return bool(tx.query(sql)[0][0])


def schema_version(tx: Transaction, engine: str) -> int:
    """The version the database's schema is at (0 for an empty one)."""
    found = tx.query("SELECT MAX(version) FROM schema_version")[0][0] or 0
    if engine == "sqlite":
        found = max(found, tx.query("PRAGMA user_version")[0][0])
    return int(found)


def migrate(database: Database) -> int:
    """Apply the migrations the database lacks; returns the version it is at now (:data:`SCHEMA_VERSION`).

    Raises:
        StorageError: the database's schema is newer than this code, or a migration failed (nothing of it is kept).
    """
    engine = database.engine
    while True:
        with database.transaction() as tx:
            tx.serialize("schema")
            if not _has_versions(tx, engine):  # looked up first: a role that may not create tables still opens
                tx.execute(_VERSIONS.format(real="REAL" if engine == "sqlite" else "DOUBLE PRECISION"))
            found = schema_version(tx, engine)
            if found > SCHEMA_VERSION:
                raise StorageError(
                    f"{database.location}: the database's schema is at version {found}, newer than this farklecam "
                    f"(which knows up to {SCHEMA_VERSION}): upgrade farklecam to use it"
                )
            if found == SCHEMA_VERSION:
                return found
            migration = MIGRATIONS[found]  # version found + 1
            for statement in migration.sqlite if engine == "sqlite" else migration.postgresql:
                tx.execute(statement)
            tx.execute(
                "INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            if engine == "sqlite":
                tx.execute(f"PRAGMA user_version = {migration.version}")
