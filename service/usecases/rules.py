"""What each rule option does: one catalogue for ``farklecam rules`` and ``GET /api/rules``."""

from __future__ import annotations

from dataclasses import fields
from enum import StrEnum
from typing import Any

from farklecam.scoring.rules import Rules, option_spec

__all__ = ["option_catalogue"]


def option_catalogue(rules: Rules | None = None) -> list[dict[str, Any]]:
    """Every settable option: its type, default, value under ``rules``, allowed values, what it does, its source.

    Everything comes from the option's field in :class:`~farklecam.scoring.rules.Rules`
    (its :class:`~farklecam.scoring.rules.OptionSpec`), so the words cannot drift from the checks.
    """
    defaults = Rules()
    current = rules or defaults
    out: list[dict[str, Any]] = []
    for f in fields(Rules):
        spec = option_spec(f.name)
        if f.name == "name":
            continue
        default, value = getattr(defaults, f.name), getattr(current, f.name)
        entry: dict[str, Any] = {"name": f.name, "choices": None, "min": None, "max": None, "step": None}
        if isinstance(default, StrEnum):
            entry.update(type="choice", default=str(default), value=str(value), choices=[str(v) for v in type(default)])
            allowed = " | ".join(entry["choices"])
        elif isinstance(default, bool):
            entry.update(type="bool", default=default, value=value)
            allowed = "true | false"
        else:
            entry.update(type="int", default=default, value=value)
            allowed = spec.allowed if spec is not None else "an integer"
            if spec is not None:
                entry.update(min=spec.low, max=spec.high, step=spec.step)
        entry.update(
            allowed=allowed,
            description=spec.description if spec is not None else "",
            source=spec.source if spec is not None else "",
        )
        out.append(entry)
    return out
