"""``GET /api/rules``: the presets, every option (type, default, allowed values, what it does, its source)."""

from __future__ import annotations

from fastapi import APIRouter

from farklecam.scoring.presets import PRESETS
from farklecam.service.deps import SettingsDep
from farklecam.service.schemas import OptionPublic, PresetPublic, RulesPublic
from farklecam.service.usecases.rules import option_catalogue

__all__ = ["router"]

router = APIRouter(prefix="/rules", tags=["rules"])


@router.get("", response_model=RulesPublic, summary="Rule presets and options")
def list_rules(settings: SettingsDep) -> RulesPublic:
    """Presets with their full option values; ``defaults`` are the options of the server's default preset."""
    presets = [
        PresetPublic(name=p.name, summary=p.summary, aliases=list(p.aliases), rules=p.rules.to_dict())
        for p in PRESETS.values()
    ]
    default = PRESETS[settings.rules].rules
    return RulesPublic(
        default_preset=settings.rules,
        presets=presets,
        options=[OptionPublic.model_validate(o) for o in option_catalogue(default)],
        defaults=default.to_dict(),
    )
