"""The web service's settings: one typed, validated object, read from ``FARKLECAM_*`` variables.

``pydantic-settings`` is not a dependency, so :meth:`Settings.from_env` does the
small part of it the service needs: every field can be set by an environment
variable named ``FARKLECAM_<FIELD>`` (``FARKLECAM_DB=postgresql://farkle@db.lan/league``;
a list as names separated by commas, ``FARKLECAM_ALLOW_HOSTS=table.lan,den.lan``),
values are validated by pydantic, and nothing is read at import time. Tests
build ``Settings(db=tmp)`` directly; ``farklecam serve`` builds it from
its options on top of the environment.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from farklecam.errors import InvalidRulesError
from farklecam.scoring.presets import get_preset
from farklecam.service.db.target import DatabaseTarget, SqliteTarget, parse_target
from farklecam.service.table_code import generate_code, validate_code

__all__ = [
    "ENV_PREFIX",
    "LOOPBACK_NAMES",
    "PIXEL_BUDGET",
    "Settings",
    "default_db_path",
    "get_settings",
    "is_ip_address",
    "is_loopback_host",
]

#: Prefix of the environment variables that set :class:`Settings` fields.
ENV_PREFIX = "FARKLECAM_"

MIB = 1024 * 1024

#: Decoded pixels held at once across every picture and frame being read (``Settings.read_pixel_budget``'s
#: default): one 40-megapixel photo, or two of 24, or dozens of webcam frames. Decoding takes about 6 bytes a
#: pixel at its peak (a 39.7-megapixel grey PNG: 228 MB above the loaded server; the reader's own work on a
#: 40-megapixel photo of dice added 26 MB more), so this bounds reading's memory near 300 MB. Without a bound,
#: 16 uploads of one 4.9 kB PNG that decodes to 39.7 megapixels took a server from 340 MB to 3.4 GB.
PIXEL_BUDGET = 48_000_000

#: The names a browser on this machine reaches a loopback server by.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

_HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")


def is_loopback_host(host: str) -> bool:
    """True when a server listening on ``host`` can be reached from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_db_path() -> Path:
    """The game database in the user's data folder (``~/.local/share/farklecam`` on Linux)."""
    return Path(user_data_dir("farklecam", appauthor=False)) / "games.sqlite3"


class Settings(BaseModel):
    """Everything the service can be configured with; immutable once built.

    Attributes:
        host: interface to listen on; loopback by default so a table's game is not on the network.
        port: TCP port.
        db: where games, their event logs and tournaments are kept: an SQLite file's path, or a
            ``postgresql://user@host/dbname`` URL for a server that several ``farklecam serve``
            processes share (:func:`farklecam.service.db.target.parse_target`); None for ``db_path``.
        db_path: the SQLite file, under its older name (``FARKLECAM_DB_PATH``); ``db`` wins where both are
            given; None for :func:`default_db_path`.
        rules: preset used when a request or a new game names none.
        model_dir: folder with the ONNX models; None for the installed ``models/`` package.
        max_upload_bytes: largest image accepted by ``POST /api/read`` (larger: 413).
        max_body_bytes: largest body of any other request (JSON bodies are small).
        max_frame_bytes: largest WebSocket frame accepted from the page.
        offline: never touch the network (the service and its page load nothing from outside).
        straight_down: every table's camera looks straight down (overhead rigs): the cocked test
            takes the picture's centre as the nadir where no tray is marked
            (:attr:`farklecam.vision.reader.ReaderConfig.straight_down`).
        allow_hosts: names (or addresses) the server answers to besides the loopback names and
            ``host``: a request naming any other host is refused (:mod:`farklecam.service.security`).
        table_code: the code every API call and WebSocket must carry (:mod:`farklecam.service.table_code`);
            beyond loopback one is always in force, generated when none is given, so no settings
            can open a table to the network without it.
        tls_cert: PEM certificate to serve https with (with ``tls_key``); a phone's browser only
            lets a page use its camera over https.
        tls_key: PEM private key of ``tls_cert``.
        solve_win_tables: solve a customised rule set's win table in the background when its
            advice first asks (:mod:`farklecam.service.win_solver`); ``farklecam serve`` turns it on.
        read_pixel_budget: decoded pixels the server holds at once across every picture and frame
            being read (:class:`farklecam.service.deps.PixelBudget`, about 6 bytes each at a decode's
            peak); a read that would pass it waits its turn, a picture larger than it is refused (413).
        proxy_headers: trust ``X-Forwarded-For`` and ``X-Forwarded-Proto`` from a reverse proxy on this
            machine (``farklecam serve --proxy-headers``). Off, the client's address is the connection's,
            so no client can pose as another address, for instance to dodge the bound on wrong table codes.
        profile: the name of the profile (:class:`farklecam.service.profiles.store.ProfileStore`) every table
            reads with and every correction made at a table is kept in, so the tables' dice are read better
            from the next read on; None reads with the classifier alone.
        server_name: how this process is named where servers share a database (the organiser page says which
            server each table's camera streams to); None for ``HOST:PORT`` with this machine's host name.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    db: str | None = None
    db_path: Path | None = None
    rules: str = "boxed"
    model_dir: Path | None = None
    max_upload_bytes: int = Field(default=15 * MIB, ge=1024, le=200 * MIB)
    max_body_bytes: int = Field(default=1 * MIB, ge=1024, le=50 * MIB)
    max_frame_bytes: int = Field(default=4 * MIB, ge=1024, le=50 * MIB)
    offline: bool = True
    straight_down: bool = False
    allow_hosts: tuple[str, ...] = ()
    table_code: str | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    solve_win_tables: bool = False
    read_pixel_budget: int = Field(default=PIXEL_BUDGET, ge=1_000_000, le=2_000_000_000)
    proxy_headers: bool = False
    profile: str | None = None
    server_name: str | None = Field(default=None, min_length=1, max_length=80, pattern=r"^[\w.:@\[\]-]+$")

    @model_validator(mode="before")
    @classmethod
    def _code_beyond_loopback(cls, values: object) -> object:
        """Generate a table code for a server the network can reach and that was given none.

        The network reaches it when it listens beyond loopback, or answers to a name that is not
        loopback (``uvicorn --factory --host 0.0.0.0`` with ``FARKLECAM_ALLOW_HOSTS`` set).
        """
        if isinstance(values, dict) and not values.get("table_code"):
            host = values.get("host", cls.model_fields["host"].default)
            names = _split_names(values.get("allow_hosts", ()))
            named = [host, *names] if isinstance(names, list | tuple) else [host]
            if any(isinstance(n, str) and not is_loopback_host(n.strip().lower().strip("[]")) for n in named):
                values = {**values, "table_code": generate_code()}
        return values

    @model_validator(mode="after")
    def _cert_with_key(self) -> Settings:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: give both files, or neither")
        return self

    @field_validator("allow_hosts", mode="before")
    @classmethod
    def _names_from_text(cls, value: object) -> object:
        return _split_names(value)

    @field_validator("allow_hosts")
    @classmethod
    def _host_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        names = []
        for name in value:
            bare = name.strip().lower().removeprefix("[").removesuffix("]")
            if not is_ip_address(bare) and not (len(bare) <= 253 and _HOST_NAME.fullmatch(bare)):
                raise ValueError(f"{name[:60]!r} is not a host name or IP address (give it without scheme or port)")
            names.append(bare)
        return tuple(names)

    @field_validator("profile")
    @classmethod
    def _profile_names_one(cls, value: str | None) -> str | None:
        from farklecam.service.profiles.store import NAME_RULE  # the vision stack loads only for a profile

        if value is not None and not NAME_RULE.fullmatch(value):
            raise ValueError(
                f"{value[:60]!r} cannot name a profile: use 1-64 letters, digits, '-', '_' or '.', "
                "starting with a letter or digit"
            )
        return value

    @field_validator("db", mode="before")
    @classmethod
    def _db_as_text(cls, value: object) -> object:
        """A path given as a :class:`~pathlib.Path` is kept as its text (``Settings(db=tmp_path / "g.sqlite3")``)."""
        return str(value) if isinstance(value, Path) else value

    @field_validator("db")
    @classmethod
    def _db_names_a_database(cls, value: str | None) -> str | None:
        if value is not None:
            parse_target(value)  # a URL that cannot be used is refused now, not at the first request
        return value

    @field_validator("db_path", mode="before")
    @classmethod
    def _db_path_is_a_path(cls, value: object) -> object:
        if isinstance(value, str) and not isinstance(parse_target(value), SqliteTarget):
            raise ValueError("takes an SQLite file's path; give a database URL as --db or FARKLECAM_DB")
        return value

    @field_validator("table_code")
    @classmethod
    def _code(cls, value: str | None) -> str | None:
        return None if value is None else validate_code(value)

    @field_validator("rules")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        try:
            return get_preset(value).name
        except InvalidRulesError as exc:
            raise ValueError(str(exc)) from None

    @property
    def database(self) -> DatabaseTarget:
        """The database actually used: ``db``, else the SQLite file ``db_path``, else the default file."""
        if self.db is not None:
            return parse_target(self.db)
        return SqliteTarget(self.db_path if self.db_path is not None else default_db_path())

    @property
    def is_loopback(self) -> bool:
        """True when only this machine can reach the server."""
        return is_loopback_host(self.host)

    @property
    def server(self) -> str:
        """This process's name among the servers sharing a database: ``server_name``, else ``HOST:PORT``."""
        if self.server_name is not None:
            return self.server_name
        host = socket.gethostname() if self.host in ("0.0.0.0", "::", "") else self.host
        return f"{host}:{self.port}"

    @property
    def scheme(self) -> str:
        """``https`` when a certificate is configured, else ``http``."""
        return "https" if self.tls_cert is not None else "http"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Settings from ``FARKLECAM_*`` variables, then ``overrides`` (None values are ignored).

        Raises:
            InvalidRulesError: a variable or override has a value pydantic rejects (the message names it).
        """
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = env.get(ENV_PREFIX + name.upper())
            if raw is not None and raw.strip():
                values[name] = raw.strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise InvalidRulesError(f"bad setting {field!r} ({ENV_PREFIX}{field.upper()}): {first['msg']}") from None


def _split_names(value: object) -> object:
    """``"a.lan, b.lan"`` (an environment variable) -> ``["a.lan", "b.lan"]``; anything else as it is."""
    return [part for part in re.split(r"[,\s]+", value) if part] if isinstance(value, str) else value


def is_ip_address(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address (without brackets or port)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings from the environment, read once (tests pass their own instead)."""
    return Settings.from_env()
