"""``/ws/changes``: every game and tournament change, pushed as it is committed, for pages that follow a league.

The organiser's page shows every table of a tournament; with several servers on one
PostgreSQL database its tables are played on whichever server each table's page
reached. Instead of asking again and again, a page opens this socket and is sent one
message per committed change, by any server sharing the database (PostgreSQL's
``NOTIFY``; on SQLite, by this server):

* ``{"type": "change", "kind": "game", "key": GAME_ID, "events": N}``: the game now has N events;
* ``{"type": "change", "kind": "tournament", "key": NAME, "events": 0}``: sign-ups or seatings changed;
* ``{"type": "resync"}``: changes may have been missed (the server lost its listening
  connection, or the page read too slowly): fetch what you show again.

The page then fetches what it shows (``GET /api/tournaments/{name}``) when a change
names it. Text the page sends is ignored; a table code is wanted as on ``/ws/table``.
"""

from __future__ import annotations

import asyncio

import anyio
from fastapi import APIRouter, WebSocket

from farklecam.service.db.changes import Change
from farklecam.service.deps import GamesDep

__all__ = ["BACKLOG", "router"]

router = APIRouter(tags=["changes"])

#: Changes held for a page that reads slowly; past that they are dropped for one ``resync``.
BACKLOG = 256


def _offer(queue: asyncio.Queue[Change | None], change: Change | None) -> None:
    """Queue ``change`` (on the event loop's thread); a full queue is emptied for one ``resync``."""
    if queue.full():
        while not queue.empty():
            queue.get_nowait()
        change = None
    queue.put_nowait(change)


@router.websocket("/ws/changes")
async def changes(websocket: WebSocket, games: GamesDep) -> None:
    """Send each change committed from now on until the page goes (see the module docstring)."""
    await websocket.accept()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Change | None] = asyncio.Queue(maxsize=BACKLOG)

    def heard(change: Change | None) -> None:  # on the committing or listening thread
        loop.call_soon_threadsafe(_offer, queue, change)

    unsubscribe = games.store.db.subscribe(heard)
    try:
        async with anyio.create_task_group() as tasks:

            async def until_gone() -> None:
                while (await websocket.receive())["type"] != "websocket.disconnect":
                    pass
                tasks.cancel_scope.cancel()

            tasks.start_soon(until_gone)
            while True:
                change = await queue.get()
                message = {"type": "resync"} if change is None else {"type": "change", **change.to_dict()}
                await websocket.send_json(message)
    finally:
        unsubscribe()
