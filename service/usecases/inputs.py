"""What a client sends beside a picture: rules as a form field, and the tray's corners (form or WebSocket)."""

from __future__ import annotations

import json
import math

from pydantic import ValidationError

from farklecam.errors import ImageError, InvalidRulesError
from farklecam.scoring.rules import Rules
from farklecam.service.schemas import RulesIn
from farklecam.vision.tray.outline import TrayOutline

__all__ = ["form_rules", "form_tray", "tray_corners"]

_EXAMPLE = "[[10, 20], [600, 25], [610, 470], [5, 460]]"


def form_rules(preset: str | None, options: str, default_preset: str) -> Rules:
    """Rules from a form's ``preset`` and ``options`` (a JSON object), validated like a JSON body.

    Raises:
        InvalidRulesError: options that are not a JSON object, or unknown presets, options or values.
    """
    try:
        parsed = json.loads(options) if options.strip() else {}
        return RulesIn.model_validate({"preset": preset, "options": parsed}).to_rules(default_preset)
    except json.JSONDecodeError as exc:
        raise InvalidRulesError(f"'options' must be a JSON object, like {{\"three_ones\": 1000}}: {exc}") from None
    except RecursionError:  # "[[[[..." deeper than the parser goes
        raise InvalidRulesError(
            "'options' must be a JSON object, like {\"three_ones\": 1000}: nested too deeply"
        ) from None
    except ValidationError as exc:
        raise InvalidRulesError(f"bad rules: {exc.errors()[0]['msg']}") from None


def tray_corners(value: object) -> list[list[float]]:
    """Four tray corners ``[[x, y], ...]`` in pixels, checked: what a form field or a WebSocket message gives.

    Raises:
        ImageError: not four ``[x, y]`` pairs of finite numbers enclosing an area.
    """
    try:
        points = [[float(x), float(y)] for x, y in value]  # type: ignore[attr-defined]  # any JSON; TypeError caught
    except (ValueError, TypeError):
        points = []
    if len(points) != 4 or not all(math.isfinite(v) for p in points for v in p):
        raise ImageError(f"the tray must be four corners, like {_EXAMPLE}, but got {value!r}")
    try:
        TrayOutline.from_corners(points)
    except ValueError as exc:
        raise ImageError(f"bad tray corners {points}: {exc}") from None
    return points


def form_tray(text: str | None) -> list[list[float]] | None:
    """The tray corners of a form's ``tray`` field (JSON), or None when it is empty.

    Raises:
        ImageError: not JSON, or not four ``[x, y]`` pairs of finite numbers enclosing an area.
    """
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        raise ImageError(f"'tray' must be four corners as JSON, like {_EXAMPLE}: {text!r}") from None
    return tray_corners(value)
