"""A game's throw pictures: list them with what the log says of each throw, show one, delete them all.

The pictures (:mod:`farklecam.service.picture_store`) say what the camera saw; the game's log
says what became of it. A listing puts the two together: each picture with its event's text
(``roll 3,4,5,5,6``) and every ``correct`` event the log holds for that throw, marked whether an
undo took it back since, so that a disputed score can be judged from the picture, the reading
as read and the correction made, side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from farklecam.errors import StorageError
from farklecam.scoring.actions import Correct, Undo
from farklecam.scoring.events import Event, seqs_in_force
from farklecam.service.picture_store import PictureRow, ThrowPictures
from farklecam.service.storage import Games
from farklecam.service.throw_picture import draw_reading

__all__ = ["corrections_by_throw", "delete", "listing", "picture"]


def corrections_by_throw(events: Sequence[Event]) -> dict[int, list[dict[str, Any]]]:
    """Each throw's ``correct`` events, by the throw's ``seq``: ``{"seq", "text", "in_force"}`` each, oldest first.

    A correction applies to the latest throw in force when it was made (only corrections may
    follow that throw; :class:`~farklecam.scoring.actions.Correct`). ``in_force`` is False for one
    an undo took back since.
    """
    standing: list[Event] = []  # the events in force as the log is read
    found: dict[int, list[Event]] = {}
    for event in events:
        if isinstance(event.action, Undo):
            if standing:
                standing.pop()
            continue
        if isinstance(event.action, Correct):
            throw = next((e for e in reversed(standing) if not isinstance(e.action, Correct)), None)
            if throw is not None:
                found.setdefault(throw.seq, []).append(event)
        standing.append(event)
    live = set(seqs_in_force(events)) if events else set()
    return {
        seq: [{"seq": e.seq, "text": str(e.action), "in_force": e.seq in live} for e in fixes]
        for seq, fixes in found.items()
    }


def _public(row: PictureRow, text: str, corrections: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "text": text,
        "bytes": row.bytes,
        "width": row.width,
        "height": row.height,
        "taken": row.taken,
        "reading": row.reading,
        "told": list(row.told),
        "corrections": corrections,
    }


def listing(games: Games, pictures: ThrowPictures, game_id: str) -> dict[str, Any]:
    """The game's pictures as :class:`~farklecam.service.schemas.PicturesPublic` data.

    Raises:
        GameNotFoundError: no game has this id.
    """
    games.store.row(game_id)
    events = games.store.events(game_id)
    texts = {e.seq: str(e.action) for e in events}
    fixes = corrections_by_throw(events)
    rows = pictures.rows(game_id)
    kept = [_public(r, texts.get(r.seq, ""), fixes.get(r.seq, [])) for r in rows if r.deleted is None]
    gone = [{"seq": r.seq, "text": texts.get(r.seq, ""), "deleted": r.deleted} for r in rows if r.deleted is not None]
    return {"game_id": game_id, "data": kept, "count": len(kept), "bytes": sum(p["bytes"] for p in kept),
            "deleted": gone}  # fmt: skip


def picture(games: Games, pictures: ThrowPictures, game_id: str, seq: int, *, overlay: bool = False) -> bytes:
    """The JPEG of the game's event ``seq``; with ``overlay``, its reading as read drawn over it.

    Raises:
        GameNotFoundError: no game has this id.
        PictureNotFoundError: that event keeps no picture, or it was deleted.
        StorageError: the kept picture or its reading no longer decodes.
    """
    games.store.row(game_id)
    jpeg, reading = pictures.jpeg(game_id, seq)
    if not overlay:
        return jpeg
    try:
        return draw_reading(jpeg, reading)
    except ValueError as exc:
        raise StorageError(f"the picture of event {seq} of game {game_id!r} cannot be drawn: {exc}") from exc


def delete(games: Games, pictures: ThrowPictures, game_id: str) -> dict[str, Any]:
    """Delete the game's pictures (never its log), as :class:`~farklecam.service.schemas.PicturesDeletedPublic` data.

    Raises:
        GameNotFoundError: no game has this id.
    """
    games.store.row(game_id)
    count, size = pictures.delete(game_id)
    return {"game_id": game_id, "deleted": count, "bytes": size}
