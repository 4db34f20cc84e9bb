"""The live window's game file: the game saved after every action, so nothing is lost.

The file holds :meth:`farklecam.scoring.game.Game.to_json` (rules, players, event log) and is
replaced atomically (write a temporary file, then rename), so a crash mid-write
leaves the previous version intact. By default it lives in the user data folder
(platformdirs), e.g. ``~/.local/share/farklecam/live/game.json`` on Linux.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from farklecam.errors import FarkleError, StorageError
from farklecam.scoring.game import Game

__all__ = ["GameFile", "default_game_path"]


def default_game_path() -> Path:
    """``<user data dir>/live/game.json`` (not created until the first save)."""
    from platformdirs import user_data_path

    return user_data_path("farklecam", appauthor=False) / "live" / "game.json"


class GameFile:
    """One game saved as JSON; callable, so it can be a :data:`farklecam.service.table.GameSaver`.

    Args:
        path: the file; None for :func:`default_game_path`.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_game_path()

    def __call__(self, game_json: str) -> None:
        """Save (see :meth:`save`)."""
        self.save(game_json)

    def save(self, game_json: str) -> None:
        """Replace the file with ``game_json`` atomically.

        Raises:
            StorageError: the folder cannot be created or the file written.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".game-", suffix=".json", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(game_json)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StorageError(f"cannot save the game to {self.path}: {exc.strerror or exc}") from exc

    def load(self) -> Game | None:
        """The saved game, or None when there is none.

        Raises:
            StorageError: the file exists but cannot be read or is not a valid game.
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read the saved game {self.path}: {exc.strerror or exc}") from exc
        try:
            return Game.from_json(text)
        except FarkleError as exc:
            raise StorageError(f"the saved game {self.path} is damaged ({exc}); start one with --new") from exc

    def archive(self) -> Path | None:
        """Move the saved game aside (``game-YYYYmmdd-HHMMSS.json``) before a new one; None if there was none.

        Raises:
            StorageError: the file cannot be renamed.
        """
        if not self.path.exists():
            return None
        target = self.path.with_name(f"{self.path.stem}-{time.strftime('%Y%m%d-%H%M%S')}{self.path.suffix}")
        try:
            os.replace(self.path, target)
        except OSError as exc:
            raise StorageError(f"cannot move the old game {self.path} aside: {exc.strerror or exc}") from exc
        return target
