"""``GET /api/rules``: the presets, every option with its type and default, and the server's default preset."""

from __future__ import annotations

from dataclasses import fields
from enum import StrEnum

from fastapi import APIRouter

from scoring.presets import PRESETS
from scoring.rules import Rules
from service.deps import SettingsDep
from service.schemas import OptionPublic, PresetPublic, RulesPublic

__all__ = ["option_list", "router"]

router = APIRouter(prefix="/rules", tags=["rules"])


def option_list() -> list[OptionPublic]:
    """Every settable option, typed from its default so a form can offer the right input."""
    defaults = Rules()
    out = []
    for f in fields(Rules):
        if f.name == "name":
            continue
        value = getattr(defaults, f.name)
        if isinstance(value, StrEnum):
            out.append(
                OptionPublic(name=f.name, type="choice", default=str(value), choices=[str(v) for v in type(value)])
            )
        elif isinstance(value, bool):
            out.append(OptionPublic(name=f.name, type="bool", default=value))
        else:
            out.append(OptionPublic(name=f.name, type="int", default=value))
    return out


@router.get("", response_model=RulesPublic, summary="Rule presets and options")
def list_rules(settings: SettingsDep) -> RulesPublic:
    """Presets with their full option values; ``defaults`` are the options of the server's default preset."""
    presets = [
        PresetPublic(name=p.name, summary=p.summary, aliases=list(p.aliases), rules=p.rules.to_dict())
        for p in PRESETS.values()
    ]
    return RulesPublic(
        default_preset=settings.rules,
        presets=presets,
        options=option_list(),
        defaults=PRESETS[settings.rules].rules.to_dict(),
    )
