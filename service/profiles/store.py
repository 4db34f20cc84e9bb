"""Where profiles live: one folder per profile, named by the user, in the user data folder.

``$FARKLECAM_PROFILES_DIR`` overrides the place (tests, a shared table machine); otherwise
platformdirs' user data folder, e.g. ``~/.local/share/farklecam/profiles`` on Linux.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from farklecam.errors import ProfileError
from farklecam.vision.profiles.profile import META_FILE, Profile

__all__ = ["NAME_RULE", "PROFILES_ENV", "ProfileStore", "check_name", "default_profiles_dir"]

#: Environment variable naming the folder that holds the profiles.
PROFILES_ENV = "FARKLECAM_PROFILES_DIR"
#: A profile's name is a folder name on every system: letters, digits, '-', '_' and '.', not first.
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def default_profiles_dir() -> Path:
    """``$FARKLECAM_PROFILES_DIR``, else ``profiles`` in the user data folder."""
    override = os.environ.get(PROFILES_ENV)
    if override:
        return Path(override)
    from platformdirs import user_data_path

    return user_data_path("farklecam", appauthor=False) / "profiles"


def check_name(name: str) -> str:
    """``name`` if it may name a profile.

    Raises:
        ProfileError: it may not.
    """
    if not NAME_RULE.fullmatch(name):
        raise ProfileError(
            f"{name!r} cannot name a profile: use 1-64 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit"
        )
    return name


class ProfileStore:
    """The profiles in one folder (None: :func:`default_profiles_dir`)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_profiles_dir()

    def names(self) -> list[str]:
        """Every profile's name, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / META_FILE).is_file() and NAME_RULE.fullmatch(p.name))

    def path(self, name: str) -> Path:
        """The folder of the profile ``name`` (ProfileError for a name that cannot be one)."""
        return self.root / check_name(name)

    def open(self, name: str) -> Profile:
        """The profile ``name``.

        Raises:
            ProfileError: an invalid name, no such profile, or one that cannot be read.
        """
        folder = self.path(name)
        if not (folder / META_FILE).is_file():
            known = ", ".join(self.names()) or "none yet"
            raise ProfileError(
                f"no profile {name!r} in {self.root} (profiles: {known}); "
                f"teach one with `farklecam teach {name} --labels DIR`"
            )
        return Profile(folder)

    def open_or_create(self, name: str) -> Profile:
        """The profile ``name``, made empty where there is none yet (ProfileError as :meth:`open`)."""
        folder = self.path(name)
        return Profile(folder) if (folder / META_FILE).is_file() else Profile.create(folder)

    def forget(self, name: str) -> int:
        """Delete the profile ``name`` and everything it holds; returns how many corrections it held.

        Raises:
            ProfileError: an invalid or unknown name, or a folder that cannot be deleted.
        """
        profile = self.open(name)
        held = len(profile)
        try:
            shutil.rmtree(profile.folder)
        except OSError as exc:
            raise ProfileError(f"cannot delete profile {name!r} in {profile.folder}: {exc}") from exc
        return held
