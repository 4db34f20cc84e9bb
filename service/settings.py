"""The web service's settings: one typed, validated object, read from ``FARKLECAM_*`` variables.

``pydantic-settings`` is not a dependency, so :meth:`Settings.from_env` does the
small part of it the service needs: every field can be set by an environment
variable named ``FARKLECAM_<FIELD>`` (``FARKLECAM_DB_PATH=/tmp/games.sqlite3``),
values are validated by pydantic, and nothing is read at import time. Tests
build ``Settings(db_path=tmp)`` directly; ``farklecam serve`` builds it from
its options on top of the environment.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from farklecam.errors import InvalidRulesError
from scoring.presets import get_preset

__all__ = ["ENV_PREFIX", "Settings", "default_db_path", "get_settings"]

#: Prefix of the environment variables that set :class:`Settings` fields.
ENV_PREFIX = "FARKLECAM_"

MIB = 1024 * 1024


def default_db_path() -> Path:
    """The game database in the user's data folder (``~/.local/share/farklecam`` on Linux)."""
    return Path(user_data_dir("farklecam", appauthor=False)) / "games.sqlite3"


class Settings(BaseModel):
    """Everything the service can be configured with; immutable once built.

    Attributes:
        host: interface to listen on; loopback by default so a table's game is not on the network.
        port: TCP port.
        db_path: SQLite file holding games and their event logs; None for :func:`default_db_path`.
        rules: preset used when a request or a new game names none.
        model_dir: folder with the ONNX models; None for the installed ``models/`` package.
        max_upload_bytes: largest image accepted by ``POST /api/read`` (larger: 413).
        max_body_bytes: largest body of any other request (JSON bodies are small).
        max_frame_bytes: largest WebSocket frame accepted from the page.
        offline: never touch the network (the service and its page load nothing from outside).
        straight_down: every table's camera looks straight down (overhead rigs): the cocked test
            takes the picture's centre as the nadir where no tray is marked
            (:attr:`vision.reader.ReaderConfig.straight_down`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    db_path: Path | None = None
    rules: str = "boxed"
    model_dir: Path | None = None
    max_upload_bytes: int = Field(default=15 * MIB, ge=1024, le=200 * MIB)
    max_body_bytes: int = Field(default=1 * MIB, ge=1024, le=50 * MIB)
    max_frame_bytes: int = Field(default=4 * MIB, ge=1024, le=50 * MIB)
    offline: bool = True
    straight_down: bool = False

    @field_validator("rules")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        try:
            return get_preset(value).name
        except InvalidRulesError as exc:
            raise ValueError(str(exc)) from None

    @property
    def database(self) -> Path:
        """The SQLite file actually used (``db_path`` or the default)."""
        return self.db_path if self.db_path is not None else default_db_path()

    @property
    def is_loopback(self) -> bool:
        """True when only this machine can reach the server."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

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


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings from the environment, read once (tests pass their own instead)."""
    return Settings.from_env()
