"""``GET /api/profiles``: the profiles a table's page may choose to read and teach with."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from farklecam.errors import ProfileError
from farklecam.service.deps import SettingsDep

__all__ = ["router"]

router = APIRouter(prefix="/profiles", tags=["profiles"])


@router.get("", summary="The profiles a table may read with")
def list_profiles(settings: SettingsDep) -> dict[str, Any]:
    """Each profile's name and corrections, and ``default``: the one tables read with until their page chooses.

    A profile that cannot be read is listed with ``corrections`` null and its ``error``, so the page can
    say why choosing it will be refused rather than hiding it.
    """
    from farklecam.service.profiles.store import ProfileStore  # the profiles' stack: only once asked

    store = ProfileStore()
    listed: list[dict[str, Any]] = []
    for name in store.names():
        try:
            listed.append({"name": name, "corrections": len(store.open(name))})
        except ProfileError as exc:
            listed.append({"name": name, "corrections": None, "error": str(exc)})
    return {"profiles": listed, "default": settings.profile}
