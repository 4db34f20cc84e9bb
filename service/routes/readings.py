"""``POST /api/read``: one uploaded picture in, its dice, their keeps and advice out.

The upload is checked in order of cost: its size (the app's body limit, 413),
its type by magic bytes rather than its name or declared type (415), then a
full decode (422 for a truncated or corrupt picture), and only then are the
models loaded and run.
"""

from __future__ import annotations

from typing import Annotated

from farklecam.service.deps import CamerasDep, ReaderSlotDep, SettingsDep
from farklecam.service.errors import UnsupportedMediaError
from farklecam.service.schemas import ReportPublic, TurnTotal
from farklecam.service.usecases.inputs import form_rules, form_tray
from farklecam.service.usecases.report import build_report
from farklecam.vision.images import decode_image, image_format
from fastapi import APIRouter, File, Form, UploadFile
from starlette.concurrency import run_in_threadpool

__all__ = ["router"]

router = APIRouter(tags=["readings"])


@router.post(
    "/read",
    response_model=ReportPublic,
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
) -> ReportPublic:
    """Every die with its face, box and status; the keeps of the faces that score; and the advisor's play.

    The same report ``farklecam read --json`` prints and each WebSocket frame carries.
    """
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
    return build_report(reading, rules, turn_total=turn_total, on_board=on_board, image_size=(width, height))
