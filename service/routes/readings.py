"""``POST /api/read``: one uploaded picture in, its dice, their keeps and advice out.

The upload is checked in order of cost: its size (the app's body limit, 413),
its type by magic bytes rather than its name or declared type (415), then a
full decode (422 for a truncated or corrupt picture), and only then are the
models loaded and run.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from farklecam.errors import ImageError, InvalidDiceError, InvalidRulesError, RulesError
from scoring.rules import Rules
from service.deps import CamerasDep, ReaderSlotDep, SettingsDep
from service.errors import UnsupportedMediaError
from service.schemas import ReadPublic, RulesIn, TurnTotal
from service.usecases.scoring import advice_for, score_roll
from vision.images import decode_image, image_format
from vision.reading import Reading
from vision.tray import TrayOutline

__all__ = ["form_rules", "form_tray", "read_result", "router", "tray_corners"]

router = APIRouter(tags=["readings"])

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
    except ValidationError as exc:
        raise InvalidRulesError(f"bad rules: {exc.errors()[0]['msg']}") from None


def tray_corners(value: object) -> list[list[float]]:
    """Four tray corners ``[[x, y], ...]`` in pixels, checked: what a form field or a WebSocket message gives.

    Raises:
        ImageError: not four ``[x, y]`` pairs of finite numbers enclosing an area.
    """
    try:
        points = [[float(x), float(y)] for x, y in value]  # type: ignore[attr-defined]
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


def read_result(reading: Reading, rules: Rules, *, turn_total: int = 0, on_board: bool = True) -> dict[str, Any]:
    """The reading with the keeps and advice for its scoring faces (none when no die reads, or too many dice)."""
    faces = reading.faces
    score = advice = None
    if faces:
        try:
            score = score_roll(faces, rules)
        except InvalidDiceError:
            return {"rules": rules.name, "reading": reading.to_dict(), "score": None, "advice": None}
        try:
            advice = advice_for(faces, rules, turn_total=turn_total, on_board=on_board)
        except RulesError:
            advice = None  # e.g. more dice in view than the turn has: the keeps still show
    return {"rules": rules.name, "reading": reading.to_dict(), "score": score, "advice": advice}


@router.post(
    "/read",
    response_model=ReadPublic,
    summary="Read the dice in one picture",
    responses={
        413: {"description": "the upload is larger than the server's limit"},
        415: {"description": "not a JPEG, PNG, BMP or WebP picture (checked by content, not name)"},
        422: {"description": "a truncated or corrupt picture, or bad rules"},
        503: {"description": "the reader's models are not installed"},
    },
)
async def read_picture(
    file: Annotated[UploadFile, File(description="the picture: JPEG, PNG, BMP or WebP")],
    settings: SettingsDep,
    slot: ReaderSlotDep,
    cameras: CamerasDep,
    preset: Annotated[str | None, Form(max_length=40)] = None,
    options: Annotated[str, Form(max_length=4000, description="rule options as a JSON object")] = "{}",
    turn_total: Annotated[TurnTotal, Form(description="points already set aside this turn")] = 0,
    on_board: Annotated[bool, Form()] = True,
    tray: Annotated[
        str | None,
        Form(
            max_length=400,
            description="the tray floor's four corners in pixels, in any order, as JSON "
            "[[x, y], [x, y], [x, y], [x, y]]: calibrated corners let the cocked test run (default: found)",
        ),
    ] = None,
    camera: Annotated[
        str | None,
        Form(
            max_length=64,
            pattern=r"^[A-Za-z0-9_.-]+$",
            description="a name for the fixed camera the picture comes from: the server learns its vertical "
            "from the dice of its pictures once, then judges leaning dice in every picture of it, one or two "
            "dice too (default: each picture on its own)",
        ),
    ] = None,
) -> dict[str, Any]:
    """Every die with its face, box and status; the keeps of the faces that score; and the advisor's play."""
    rules = form_rules(preset, options, settings.rules)
    corners = form_tray(tray)
    data = await file.read()
    name = file.filename or "upload"
    if image_format(data[:16]) is None:
        raise UnsupportedMediaError(f"{name}: not a picture the reader takes (JPEG, PNG, BMP or WebP)")
    frame = await run_in_threadpool(decode_image, data, name)
    reader = await run_in_threadpool(slot.get)
    memory = cameras.memory(camera) if camera else None
    reading = await run_in_threadpool(reader.read, frame, corners, memory)
    height, width = frame.shape[:2]
    return {"image_size": (width, height), **read_result(reading, rules, turn_total=turn_total, on_board=on_board)}
