"""``POST /api/read``: one uploaded picture in, its dice, their keeps and advice out.

The upload is checked in order of cost: its size (the app's body limit, 413), a
place among the uploads the server holds (429 once
:data:`~farklecam.service.deps.READ_LINE` wait), its type by magic bytes rather
than its name or declared type (415), its header's width and height against the
pixel limit and the pixel budget (413) before a byte is decoded, then a full
decode inside the reads gate (422 for a truncated or corrupt picture), and only
then are the models loaded and run. Waiting for the budget or the gate happens
in the reader's own threads, so uploads in line never hold the threads the other
routes answer with.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, File, Form, UploadFile

from farklecam.service.deps import CamerasDep, ReaderSlotDep, SettingsDep
from farklecam.service.schemas import ReportPublic, TurnTotal
from farklecam.service.usecases.inputs import form_rules, form_tray
from farklecam.service.usecases.report import build_report
from farklecam.vision.reading import Reading

__all__ = ["router"]

router = APIRouter(tags=["readings"])


@router.post(
    "/read",
    response_model=ReportPublic,
    summary="Read the dice in one picture",
    responses={
        413: {"description": "the upload, or the picture it decodes to, is larger than the server's limit"},
        415: {"description": "not a JPEG, PNG, BMP or WebP picture (checked by content, not name)"},
        422: {"description": "a truncated or corrupt picture, or bad rules"},
        429: {"description": "the server already holds as many uploads as it takes; send again in a few seconds"},
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
    memory = cameras.memory(camera) if camera else None
    name = file.filename or "upload"
    with slot.place_in_line():
        data = await file.read()

        def read() -> tuple[Reading, tuple[int, int]]:
            """Decode and read under the gate and the budget; the frame is let go before the report is built."""
            with slot.decoded(data, name) as frame:
                reading = slot.get().read(frame, corners, memory)
                height, width = frame.shape[:2]
            return reading, (width, height)

        reading, size = await anyio.to_thread.run_sync(read, limiter=slot.read_threads)
    return build_report(reading, rules, turn_total=turn_total, on_board=on_board, image_size=size)
