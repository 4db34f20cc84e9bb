"""What ``--db`` names: an SQLite file's path, or a PostgreSQL server's ``postgresql://`` URL.

A URL is never taken for a path: ``postgresql://user@host/db`` read as a path would
make a folder named ``postgresql:`` and keep the games in a file no server shares.
Anything that starts like a URL (a scheme followed by ``://``, or ``postgres:``/``postgresql:``)
is a URL, and one this module cannot use is refused with the reason. The URL is
checked by libpq's own parser (through psycopg, imported only for a URL), so what is
accepted here is what the server connection will be given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["DatabaseTarget", "PostgresTarget", "SqliteTarget", "parse_target"]

#: ``scheme://``, or a PostgreSQL scheme with a colon alone (``postgresql:db`` is a URL gone wrong, not a file).
_URL_LIKE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]+://|postgres(?:ql)?:)", re.IGNORECASE)
_POSTGRES_SCHEMES = ("postgresql", "postgres")


@dataclass(frozen=True, slots=True)
class SqliteTarget:
    """An SQLite file (created with its folder on first use); ``":memory:"`` for a throwaway one."""

    path: Path

    def __str__(self) -> str:
        return str(self.path)


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    """A PostgreSQL database, as libpq's connection URL."""

    url: str

    def __repr__(self) -> str:
        return f"PostgresTarget({str(self)!r})"

    def __str__(self) -> str:
        """The URL with any password replaced by ``***`` (it is printed at start and shown by ``/api/health``)."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


DatabaseTarget = SqliteTarget | PostgresTarget


def parse_target(value: str | Path) -> DatabaseTarget:
    """The database ``value`` names.

    Args:
        value: a file's path, or a ``postgresql://`` (or ``postgres://``) URL.

    Raises:
        ValueError: a URL of another scheme, or one libpq cannot parse (the message says why).
    """
    if isinstance(value, Path):
        return SqliteTarget(value)
    text = value.strip()
    if not text:
        raise ValueError("the database is empty: give a file's path or a postgresql:// URL")
    if not _URL_LIKE.match(text):
        return SqliteTarget(Path(text).expanduser())
    scheme = text.split(":", 1)[0].lower()
    if scheme not in _POSTGRES_SCHEMES:
        raise ValueError(
            f"{scheme}:// is not a database farklecam keeps games in: give an SQLite file's path "
            "or a postgresql://user@host/dbname URL"
        )
    if not text[len(scheme) + 1 :].startswith("//"):
        raise ValueError(f"{text[:80]!r} is not a PostgreSQL URL: write it postgresql://user@host:port/dbname")
    _check_url(text)
    return PostgresTarget(text)


def _check_url(url: str) -> None:
    """Refuse a URL libpq would refuse at connection time, and a port that is not a port.

    Raises:
        ValueError: the reason, on one line, without the password.
    """
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    shown = str(PostgresTarget(url))
    try:
        params = conninfo_to_dict(url)
    except ProgrammingError as exc:
        reason = " ".join(str(exc).replace(url, shown).split())
        raise ValueError(f"bad PostgreSQL URL {shown}: {reason}") from None
    for port in str(params.get("port", "")).split(","):
        if port and not (port.isdigit() and 0 < int(port) < 65536):
            raise ValueError(f"bad PostgreSQL URL {shown}: port {port!r} is not a number from 1 to 65535")
