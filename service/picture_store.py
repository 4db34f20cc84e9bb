"""Where the pictures of camera-scored throws are kept: one row per throw, beside the game's event log.

A picture (:class:`~farklecam.service.throw_picture.ThrowPicture`) is keyed by its game and
the ``seq`` of the event it shows, in the same database as the games (SQLite or PostgreSQL,
the same SQL). It is kept in its own transaction, just after its throw was committed: a
picture that cannot be kept never costs the throw, and a server killed between the two
commits loses the picture, never the throw.

Pictures are evidence, not the game: :meth:`ThrowPictures.delete` deletes a game's pictures
(the JPEG and the reading) and leaves each row with the time it was deleted, so that a throw
whose picture is gone is still told from one typed by hand. The event log is never touched.

Every size is bounded: one picture holds at most
:data:`~farklecam.service.throw_picture.MAX_PICTURE_BYTES`, its reading and what the players
said of it at most :data:`MAX_RECORD_CHARS`, and a game keeps at most :data:`MAX_PICTURES`
rows; past that a throw is scored as ever and keeps no picture.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from farklecam.service.db.engine import Database
from farklecam.service.errors import PictureNotFoundError
from farklecam.service.throw_picture import MAX_PICTURE_BYTES, ThrowPicture

__all__ = ["MAX_PICTURES", "MAX_RECORD_CHARS", "PictureRow", "ThrowPictures"]

#: The most pictures one game keeps (deleted ones count: their rows stay). A game of four to 10,000 takes
#: about 250 throws; a game with more camera throws than this scores the rest without pictures.
MAX_PICTURES = 1000
#: The most characters a picture's reading and what the players said of it may take, as JSON, each.
MAX_RECORD_CHARS = 64_000


@dataclass(frozen=True, slots=True)
class PictureRow:
    """One throw's picture as listed (without its JPEG).

    Attributes:
        seq: the event (a throw) it shows.
        bytes: the JPEG's size (what it was, once deleted).
        width: the picture's width in pixels.
        height: the picture's height in pixels.
        taken: when it was kept (seconds since the epoch).
        deleted: when it was deleted, else None.
        reading: the reading as read (:func:`~farklecam.service.throw_picture.reading_record`); None once deleted.
        told: what the players said of its dice before the throw was scored (none once deleted).
    """

    seq: int
    bytes: int
    width: int
    height: int
    taken: float
    deleted: float | None
    reading: dict[str, Any] | None
    told: tuple[str, ...]


class ThrowPictures:
    """The ``throw_pictures`` table of an open database (its schema migrated by whoever opened it).

    Args:
        db: the games' database.
        most: the most pictures a game keeps (:data:`MAX_PICTURES`).
    """

    def __init__(self, db: Database, most: int = MAX_PICTURES) -> None:
        self.db, self.most = db, most

    def keep(self, game_id: str, seq: int, picture: ThrowPicture, at: float | None = None) -> None:
        """Keep ``picture`` as the picture of the game's event ``seq`` (a throw already committed).

        Raises:
            ValueError: a picture over :data:`MAX_PICTURE_BYTES`, a reading or what was told over
                :data:`MAX_RECORD_CHARS`, or a game that already keeps :attr:`most` pictures.
            ConflictError: the event has a picture already.
            StorageError: the event is not stored (its key refers to it), or the commit failed.
        """
        if len(picture.jpeg) > MAX_PICTURE_BYTES:
            raise ValueError(f"a picture takes at most {MAX_PICTURE_BYTES} bytes, this one {len(picture.jpeg)}")
        reading, told = json.dumps(picture.reading), json.dumps(list(picture.told))
        for name, text in (("reading", reading), ("what the players said", told)):
            if len(text) > MAX_RECORD_CHARS:
                raise ValueError(f"a picture's {name} takes at most {MAX_RECORD_CHARS} characters, this {len(text)}")
        with self.db.transaction() as tx:
            tx.serialize(f"pictures:{game_id}")
            kept = int(tx.query("SELECT COUNT(*) FROM throw_pictures WHERE game_id = ?", (game_id,))[0][0])
            if kept >= self.most:
                raise ValueError(f"this game keeps {kept} pictures, the most a game keeps: this throw keeps none")
            tx.execute(
                "INSERT INTO throw_pictures (game_id, seq, jpeg, bytes, width, height, reading, told, taken)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (game_id, seq, picture.jpeg, len(picture.jpeg), picture.width, picture.height, reading, told,
                 time.time() if at is None else at),
            )  # fmt: skip

    def rows(self, game_id: str) -> list[PictureRow]:
        """The game's pictures, kept and deleted, by the events they show (none for an unknown game)."""
        found = self.db.query(
            "SELECT seq, bytes, width, height, taken, deleted, reading, told FROM throw_pictures"
            " WHERE game_id = ? ORDER BY seq",
            (game_id,),
        )
        return [
            PictureRow(int(seq), int(size), int(width), int(height), float(taken), deleted,
                       None if reading is None else json.loads(reading), tuple(json.loads(told or "[]")))
            for seq, size, width, height, taken, deleted, reading, told in found
        ]  # fmt: skip

    def last_reading(self, game_id: str) -> dict[str, Any] | None:
        """The reading of the game's newest kept picture (its last throw the camera scored), or None."""
        found = self.db.query(
            "SELECT reading FROM throw_pictures WHERE game_id = ? AND reading IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (game_id,),
        )
        return json.loads(found[0][0]) if found else None

    def jpeg(self, game_id: str, seq: int) -> tuple[bytes, dict[str, Any]]:
        """The picture of the game's event ``seq`` and its reading as read.

        Raises:
            PictureNotFoundError: the event keeps no picture (typed by hand, not a throw, no such event), or
                its picture was deleted.
        """
        found = self.db.query(
            "SELECT jpeg, reading, deleted FROM throw_pictures WHERE game_id = ? AND seq = ?", (game_id, seq)
        )
        if not found:
            raise PictureNotFoundError(
                f"game {game_id!r} keeps no picture of event {seq}: only throws the camera scored have one"
            )
        jpeg, reading, deleted = found[0]
        if jpeg is None:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(deleted))
            raise PictureNotFoundError(f"the picture of event {seq} of game {game_id!r} was deleted on {when}")
        return bytes(jpeg), json.loads(reading)

    def delete(self, game_id: str, at: float | None = None) -> tuple[int, int]:
        """Delete the game's kept pictures (the JPEGs, readings and what was told; each row stays, marked deleted).

        Returns:
            How many pictures were deleted, and the bytes their JPEGs took.
        """
        with self.db.transaction() as tx:
            tx.serialize(f"pictures:{game_id}")
            count, size = tx.query(
                "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM throw_pictures WHERE game_id = ? AND deleted IS NULL",
                (game_id,),
            )[0]
            tx.execute(
                "UPDATE throw_pictures SET jpeg = NULL, reading = NULL, told = NULL, deleted = ?"
                " WHERE game_id = ? AND deleted IS NULL",
                (time.time() if at is None else at, game_id),
            )
        return int(count), int(size)

    def total_bytes(self) -> int:
        """The bytes every kept picture's JPEG takes, across all games."""
        return int(self.db.query("SELECT COALESCE(SUM(bytes), 0) FROM throw_pictures WHERE deleted IS NULL")[0][0])
