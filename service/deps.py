"""Typed dependencies: what a route may ask for, and the lazily loaded dice reader.

Routes declare ``games: GamesDep`` or ``reader: ReaderDep`` instead of reaching
into ``request.app.state``; tests swap any of them with
``app.dependency_overrides[get_reader] = lambda: fake``. Each getter takes an
:class:`~starlette.requests.HTTPConnection`, so the same dependency serves
HTTP routes and the WebSocket.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import numpy as np
import numpy.typing as npt
from fastapi import Depends
from starlette.requests import HTTPConnection

from farklecam.errors import FarkleError, ImageError, ProfileError
from farklecam.service.corrections import CorrectionHook, DieCorrection
from farklecam.service.errors import PictureTooLargeError, ServerBusyError, UnsupportedMediaError
from farklecam.service.live_tables import LiveTables
from farklecam.service.picture_store import ThrowPictures
from farklecam.service.read_gate import ReadGate
from farklecam.service.settings import PIXEL_BUDGET, Settings
from farklecam.service.storage import Games
from farklecam.service.table import TableSession
from farklecam.service.throw_picture import reading_in_frame
from farklecam.vision.images import MAX_PIXELS, decode_image, image_format, image_size
from farklecam.vision.onnx_runtime import default_threads
from farklecam.vision.pose.view_search import VerticalMemory
from farklecam.vision.reading import Reading
from farklecam.vision.settle.detector import FrameReader  # the one definition; re-exported for the app's factory

if TYPE_CHECKING:
    from farklecam.vision.profiles.adapter import ProfileAdapter
    from farklecam.vision.profiles.profile import Profile

log = logging.getLogger(__name__)

__all__ = [
    "PIXEL_BUDGET",
    "READS_AT_ONCE",
    "READ_LINE",
    "READ_THREADS",
    "Cameras",
    "CamerasDep",
    "FrameReader",
    "GamesDep",
    "LazyReader",
    "PicturesDep",
    "PixelBudget",
    "ReaderDep",
    "ReaderSlot",
    "ReaderSlotDep",
    "SettingsDep",
    "SharedReader",
    "Tables",
    "TablesDep",
    "get_cameras",
    "get_games",
    "get_pictures",
    "get_reader",
    "get_reader_slot",
    "get_settings",
    "get_tables",
]


#: Reads the server runs at once, across all tables and requests: two where there are two cores. One read
#: leaves a core idle while the other read's Python steps (crops, tray, vote) run; more than the cores
#: only thrash them. Ten threads reading game-video frames through one slot (2 cores, load average 11 from
#: other work, 2026-12-03): 3.1-3.9 reads a second one at a time, 4.2-5.3 two at a time. Ten tables
#: through the WebSocket (``bench/tables.py 10``, one and two alternated, load average 3-7) could not tell
#: them apart: median lag 0.67-1.24 s with one, 0.90-1.28 s with two; the machine's other work swung more.
READS_AT_ONCE = max(1, min(2, default_threads()))
#: The model threads each of those reads uses: the cores shared between them. Each onnxruntime session
#: otherwise takes every core and its threads busy-wait between operators, so two reads at once on two
#: cores ran four spinning threads: ten tables (``bench/tables.py 10``, 2 cores) were answered 10.5-11.6
#: frames a second with two threads a read, 12.0-12.9 with one (two runs each), median lag 0.77-0.82 -> 0.68 s.
READ_THREADS = max(1, default_threads() // READS_AT_ONCE)


#: Uploads to ``POST /api/read`` that may wait for their turn or be read at once; the next one is told to try
#: again (429). Each holds its encoded bytes (at most ``Settings.max_upload_bytes``) while it waits.
READ_LINE = 16


class PixelBudget:
    """Decoded pixels in memory at once, shared by every read: the bound on the memory pictures take.

    A read holds its picture's pixels from just before it is decoded until its answer no longer needs
    them; one that would pass the budget waits. Waiters are served in arrival order, so a large picture
    is not passed over forever by a stream of small ones.

    Args:
        pixels: the budget; a picture larger than this alone is refused, never waited for.
    """

    def __init__(self, pixels: int) -> None:
        if pixels < 1:
            raise ValueError(f"a pixel budget must be at least 1, but got {pixels}")
        self.pixels = pixels
        self._free = pixels
        self._line: deque[object] = deque()
        self._changed = threading.Condition()

    @property
    def free(self) -> int:
        """Pixels no read holds now."""
        with self._changed:
            return self._free

    @contextmanager
    def hold(self, pixels: int) -> Iterator[None]:
        """Hold ``pixels`` of the budget for the block, waiting for them in arrival order.

        Raises:
            PictureTooLargeError: more pixels than the whole budget (waiting would never end).
        """
        if pixels > self.pixels:
            raise PictureTooLargeError(
                f"this server decodes at most {_megapixels(self.pixels)} at a time, and the picture has "
                f"{_megapixels(pixels)}: send it smaller"
            )
        ticket = object()
        with self._changed:
            self._line.append(ticket)
            try:
                self._changed.wait_for(lambda: self._line[0] is ticket and self._free >= pixels)
            finally:
                self._line.remove(ticket)
                self._changed.notify_all()  # the next in line may fit beside this one
            self._free -= pixels
        try:
            yield
        finally:
            with self._changed:
                self._free += pixels
                self._changed.notify_all()


def _megapixels(pixels: int) -> str:
    """``"1.2 megapixels"``, or ``"1200 pixels"`` where that would read 0.0."""
    return f"{pixels / 1e6:.1f} megapixels" if pixels >= 100_000 else f"{pixels} pixels"


def picture_pixels(data: bytes, source: str) -> int:
    """The pixels ``data`` will decode to, read from its header alone, so nothing is allocated for a refusal.

    Raises:
        UnsupportedMediaError: not a JPEG, PNG, BMP or WebP picture (checked by its magic bytes).
        ImageError: a cut or corrupt header, or a picture of zero size.
        PictureTooLargeError: more than :data:`farklecam.vision.images.MAX_PIXELS`, which no reader takes.
    """
    if image_format(data[:16]) is None:
        raise UnsupportedMediaError(f"{source}: not a picture the reader takes (JPEG, PNG, BMP or WebP)")
    width, height = image_size(data, source)
    if width <= 0 or height <= 0:
        raise ImageError(f"{source}: image has zero size ({width}x{height})")
    if width * height > MAX_PIXELS:
        raise PictureTooLargeError(
            f"{source}: image too large ({width}x{height} = {width * height / 1e6:.1f} megapixels; "
            f"the limit is {MAX_PIXELS / 1e6:.0f})"
        )
    return width * height


class SharedReader:
    """The one loaded reader, shared by every table and request, at most :data:`READS_AT_ONCE` reads at once.

    Args:
        reader: the loaded reader.
        gate: taken around each read (:data:`READS_AT_ONCE` of them at a time, the urgent first:
            :mod:`farklecam.service.read_gate`).
    """

    def __init__(self, reader: FrameReader, gate: ReadGate) -> None:
        self._reader, self._gate = reader, gate

    @property
    def profile(self) -> ProfileAdapter | None:
        """The profile the reader reads with, bound to its classifier (None: none, or a reader that takes none)."""
        from farklecam.vision.profiles.adapter import ProfileAdapter  # the classifier's stack: only once asked

        profile = getattr(self._reader, "profile", None)
        return profile if isinstance(profile, ProfileAdapter) else None

    def with_profile(self, profile: ProfileAdapter | None) -> SharedReader:
        """The same reader (same models, same gate) reading with ``profile`` instead of its own (None: none).

        Raises:
            ProfileError: a profile given to a reader that takes none.
        """
        with_profile = getattr(self._reader, "with_profile", None)
        if with_profile is None:
            if profile is None:
                return self  # a reader that takes no profile reads without one already
            raise ProfileError("this server's reader takes no profile")
        return SharedReader(with_profile(profile), self._gate)

    def read(
        self,
        frame: npt.NDArray[np.uint8],
        tray: list[list[float]] | None = None,
        memory: VerticalMemory | None = None,
        straight_down: bool | None = None,
    ) -> Reading:
        """Read one frame; with ``tray`` (the floor's corners) as the calibrated tray of this read only.

        Args:
            frame: the BGR frame.
            tray: calibrated corners for this read.
            memory: the camera's learned vertical (:class:`farklecam.vision.pose.view_search.VerticalMemory`), for
                a reader that takes one (others ignore it: it only saves time and helps small throws).
            straight_down: whether this camera looks straight down, for a reader that takes it
                (:meth:`farklecam.vision.reader.DiceReader.with_straight_down`); None keeps the reader's own.

        Raises:
            ImageError: a tray was given to a reader that cannot take one.
        """
        reader = self._reader
        with_memory = getattr(reader, "with_vertical_memory", None)
        if memory is not None and with_memory is not None:
            reader = with_memory(memory)
        with_straight_down = getattr(reader, "with_straight_down", None)
        if straight_down is not None and with_straight_down is not None:
            reader = with_straight_down(straight_down)
        if tray is not None:
            with_tray = getattr(reader, "with_tray", None)
            if with_tray is None:
                raise ImageError("this server's reader takes no tray corners")
            try:
                reader = with_tray(tray)  # the same loaded models; only this read sees the tray
            except ValueError as exc:
                raise ImageError(f"bad tray corners {tray}: {exc}") from None
        with self._gate:
            return reader.read(frame)


class ReaderSlot:
    """Holds the dice reader, built on first use so that requests that never read images never load models.

    A failed load (:class:`~farklecam.errors.ModelLoadError`) is not remembered: the
    next request tries again, so models installed while the server runs are picked up.

    The slot also owns what bounds reading's cost: the gate (:data:`READS_AT_ONCE` reads, and
    decodes, at a time), the :class:`PixelBudget` every decoded picture is counted against, and
    the line of uploads waiting (:data:`READ_LINE`).

    Args:
        factory: builds the reader (loads the ONNX models).
        reads_at_once: reads that may run at the same time (the rest wait their turn).
        pixel_budget: decoded pixels held at once (:class:`PixelBudget`).
        read_line: uploads that may wait or be read at once (:meth:`place_in_line`).
    """

    def __init__(
        self,
        factory: Callable[[], FrameReader],
        reads_at_once: int | None = None,
        pixel_budget: int = PIXEL_BUDGET,
        read_line: int = READ_LINE,
    ) -> None:
        self._factory = factory
        self._reader: FrameReader | None = None
        self._load_lock = threading.Lock()
        self.reads_at_once = READS_AT_ONCE if reads_at_once is None else reads_at_once
        if self.reads_at_once < 1:
            raise ValueError(f"reads_at_once must be at least 1, but got {self.reads_at_once}")
        self._gate = ReadGate(self.reads_at_once)
        self.budget = PixelBudget(pixel_budget)
        self.read_line = read_line
        self._in_line = 0
        self._line_guard = threading.Lock()
        #: The threads uploads and WebSocket frames wait for the budget and are read in: their own, so
        #: pictures waiting their turn never hold the threads every other route answers in.
        self.read_threads = anyio.CapacityLimiter(read_line)
        self._profiles: dict[Path, ProfileAdapter] = {}
        self._profiles_guard = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the models are in memory."""
        return self._reader is not None

    def get(self) -> SharedReader:
        """The reader, loading it if needed (thread-safe; loads once).

        Raises:
            ModelLoadError: the model files are missing or broken.
        """
        if self._reader is None:
            with self._load_lock:
                if self._reader is None:
                    self._reader = self._factory()
        return SharedReader(self._reader, self._gate)

    def profile(self, name: str) -> ProfileAdapter:
        """The profile ``name`` bound to the reader's classifier, one adapter per profile for every table choosing it.

        Tables that read with one profile must share its adapter: each keeps the votes built from the
        corrections it has seen, and a correction taught at one table is read at the others from their
        next read on. The server's own profile (``serve --profile``) is the reader's, so a table choosing
        it by name teaches the same one as the tables that kept the server's.

        Raises:
            ProfileError: an invalid or unknown name, a profile that cannot be read, or a reader taking none.
            ModelLoadError: the models are missing or broken (binding needs the loaded classifier).
        """
        from farklecam.service.profiles.store import ProfileStore  # the profiles' stack: only once a table asks

        store = ProfileStore()
        folder = store.path(name).resolve()
        shared = self.get()
        own = shared.profile
        if own is not None and own.profile.folder.resolve() == folder:
            return own
        with self._profiles_guard:
            adapter = self._profiles.get(folder)
            if adapter is not None and folder.is_dir():
                return adapter
            opened = store.open(name)  # unknown, or forgotten since it was bound: refused here
            bind: Callable[[Profile], ProfileAdapter] | None = getattr(self._reader, "bind_profile", None)
            if bind is None:
                raise ProfileError("this server's reader takes no profile")
            self._profiles[folder] = adapter = bind(opened)
            return adapter

    @contextmanager
    def decoded(self, data: bytes, source: str) -> Iterator[npt.NDArray[np.uint8]]:
        """The picture decoded inside the reads gate, its pixels held against the budget until the block ends.

        The size comes from the header first: a picture the budget can never hold is refused before
        anything is allocated, and one that must wait waits as a few bytes, not as a decoded frame.

        Raises:
            UnsupportedMediaError: not a picture (415).
            ImageError: a corrupt or truncated picture (422).
            PictureTooLargeError: more pixels than the limit or the whole budget (413).
        """
        with self.budget.hold(picture_pixels(data, source)):
            with self._gate:  # decoding is a read's work too: it runs beside at most READS_AT_ONCE - 1 others
                frame = decode_image(data, source)
            yield frame

    @contextmanager
    def place_in_line(self) -> Iterator[None]:
        """A place among the uploads waiting or being read, for the block.

        Raises:
            ServerBusyError: :attr:`read_line` uploads already wait (429): each holds its bytes meanwhile.
        """
        with self._line_guard:
            if self._in_line >= self.read_line:
                raise ServerBusyError(
                    f"the server is already reading or holding {self._in_line} pictures: send this one again "
                    "in a few seconds"
                )
            self._in_line += 1
        try:
            yield
        finally:
            with self._line_guard:
                self._in_line -= 1


class LazyReader:
    """A reader that loads the models on its first frame (what a :class:`TableSession` is given).

    Args:
        slot: holds the shared reader.
        tray: the tray floor's calibrated corners for this table's frames (None: found in each frame).
            A table's page may set or clear it at any time; the next frame read uses it.
        straight_down: this table's camera looks straight down (a server's ``--straight-down``
            sets every table's start; the table's page may switch it at any time).

    Attributes:
        memory: this table's camera's vertical, learned from its dice while no tray is calibrated.
        profile_name: the profile this table chose (:meth:`choose_profile`; None: none), once it chose.
        profile_chosen: whether this table chose; until then it reads and teaches with the server's profile.
    """

    def __init__(self, slot: ReaderSlot, tray: list[list[float]] | None = None, *, straight_down: bool = False) -> None:
        self.slot, self.tray, self.straight_down = slot, tray, straight_down
        self.memory = VerticalMemory()
        #: Whether the last frame was read without the marked tray: the camera moved since it was marked.
        self.tray_moved = False
        #: Whether the last frame's dice showed the camera, said to look straight down, to be tilted.
        self.tilted = False
        self.profile_name: str | None = None
        self.profile_chosen = False
        self._profile: ProfileAdapter | None = None

    def choose_profile(self, name: str | None) -> None:
        """Read and teach with the profile ``name`` from the next frame on (None: no profile), over the server's.

        A table's dice and light are its own: the page of each table names the profile that knows them,
        whatever profile the server was started with.

        Raises:
            ProfileError: an invalid or unknown name, or a reader that takes no profile; nothing changes then.
            ModelLoadError: the models are missing or broken.
        """
        adapter = None if name is None else self.slot.profile(name)
        self._profile, self.profile_name, self.profile_chosen = adapter, name, True

    def teaching_profile(self) -> ProfileAdapter | None:
        """The profile this table's corrections teach: the one it reads with (None: none)."""
        return self._profile if self.profile_chosen else self.slot.get().profile

    @property
    def vertical(self) -> str:
        """Where this table's vertical comes from: ``"tray"``, ``"straight_down"``, ``"learned"`` or ``"searching"``.

        ``"tray"``: calibrated corners; ``"straight_down"``: the server was told its cameras look
        straight down; ``"tilted"``: so it was told, but the last frame's dice clearly lay under
        another vertical (read under theirs). ``"checking"``: one was learned, but the camera
        seems to have moved since and no search has confirmed it yet (leaning dice are then
        judged cautiously). ``"moved"``: a tray is marked, but the camera moved since, so it is
        set aside until marked again.
        """
        if self.tray is not None:
            return "moved" if self.tray_moved else "tray"
        if self.straight_down:
            return "tilted" if self.tilted else "straight_down"
        if self.memory.view is None:
            return "searching"
        return "checking" if self.memory.doubted else "learned"

    def read(self, frame: npt.NDArray[np.uint8], /) -> Reading:
        """Read one frame with the slot's reader (loading it first if needed), this table's tray and memory."""
        reader = self.slot.get()
        if self.profile_chosen:
            reader = reader.with_profile(self._profile)
        reading = reader.read(frame, self.tray, self.memory, self.straight_down)
        self.tray_moved = self.tray is not None and reading.tray_set_aside
        self.tilted = reading.straight_down_doubted
        return reading


class Cameras:
    """The fixed cameras that API clients name (``camera`` on ``POST /api/read``): each learns its vertical once.

    Args:
        most: cameras remembered (the least recently used are forgotten: they only lose their vertical).
    """

    def __init__(self, most: int = 64) -> None:
        self.most = most
        self._memories: dict[str, VerticalMemory] = {}
        self._guard = threading.Lock()

    def memory(self, name: str) -> VerticalMemory:
        """The named camera's memory, made on first use."""
        with self._guard:
            memory = self._memories.pop(name, None) or VerticalMemory()
            self._memories[name] = memory
            while len(self._memories) > self.most:
                self._memories.pop(next(iter(self._memories)))
            return memory


class Tables:
    """The live tables: one :class:`~farklecam.service.table.TableSession` per game with a camera streaming to it.

    A session shares the game object of :class:`~farklecam.service.storage.Games`, so REST
    actions and camera throws change the same game; its saver commits through
    :meth:`Games.persist`, and each throw it scores keeps its picture in ``pictures``. Use
    :meth:`session` under ``games.lock(game_id)``.

    Args:
        games: the games.
        pictures: where camera-scored throws keep their pictures; None keeps none.
        max_tables: sessions kept without a camera streaming to them (the least recently used are
            dropped; they hold settle state only). A table whose camera streams is never dropped: with
            more streams than this (a second server's tables reopened here), eviction would restart
            their settle state on every frame and no throw would settle.
        live: where this server says which tables' cameras stream to it (None: nowhere).
    """

    def __init__(
        self,
        games: Games,
        pictures: ThrowPictures | None = None,
        max_tables: int = 16,
        live: LiveTables | None = None,
    ) -> None:
        self.games, self.pictures, self.max_tables, self.live = games, pictures, max_tables, live
        self._sessions: dict[str, TableSession] = {}
        self._streams: Counter[str] = Counter()  # open camera streams per game
        self._guard = threading.Lock()

    def stream_opened(self, game_id: str) -> None:
        """A camera stream of ``game_id`` opened: its table is kept until the last one closes."""
        with self._guard:
            self._streams[game_id] += 1

    def stream_closed(self, game_id: str) -> None:
        """A camera stream of ``game_id`` closed."""
        with self._guard:
            self._streams[game_id] -= 1
            if self._streams[game_id] <= 0:
                del self._streams[game_id]
            self._drop_idle()

    def _drop_idle(self) -> None:
        """Drop the least recently used tables no camera streams to, down to ``max_tables`` (under the guard)."""
        idle = [game_id for game_id in self._sessions if game_id not in self._streams]
        for game_id in idle[: max(0, len(idle) - self.max_tables)]:
            del self._sessions[game_id]

    def existing(self, game_id: str) -> TableSession | None:
        """The game's table if one is live here (None: no camera has streamed to it since it was dropped)."""
        with self._guard:
            return self._sessions.get(game_id)

    def session(self, game_id: str, reader: FrameReader) -> TableSession:
        """The table of a game, made (or remade, if the game was reloaded from disk) as needed.

        Args:
            game_id: the game.
            reader: reads the session's frames from now on (the newest stream's reader, with its tray).

        Raises:
            GameNotFoundError: no game has this id.
        """
        game = self.games.get(game_id)
        with self._guard:
            session = self._sessions.pop(game_id, None)
        if session is None or session.game is not game:
            session = TableSession(game.rules, game=game, reader=reader)
            session.saver = lambda _json, s=session: self.games.persist(game_id, s.game)
            if self.pictures is not None:
                session.on_throw = partial(self.pictures.keep, game_id)
            session.on_correct = _teacher(session, game_id)
            _recall_last_throw(session, game_id, self.pictures)
        session.reader = reader  # settle state stays; a reconnected page's reader (and tray) takes over
        with self._guard:
            self._sessions[game_id] = session
            self._drop_idle()
        return session


def _recall_last_throw(session: TableSession, game_id: str, pictures: ThrowPictures | None) -> None:
    """Show a new table of ``game_id`` the last throw its camera scored (kept with its picture, on any server).

    Why: a table reopened here after its server stopped, or after a restart, has no history, and the
    die a player leaves lying after lifting the kept ones out would be scored as a new throw.
    """
    if pictures is None:
        return
    try:
        record = pictures.last_reading(game_id)
        if record is not None:
            session.detector.recall(reading_in_frame(record))
    except (FarkleError, ValueError) as exc:  # a table without its last throw still plays: only that die may count
        log.warning("table %s: its last throw could not be recalled: %s", game_id, exc)


def _teacher(session: TableSession, game_id: str) -> CorrectionHook:
    """A table's correction hook: the dice its players correct teach the profile its newest stream reads with.

    The profile is asked at each correction, not when the table is made, so that one the page chose
    later (:meth:`LazyReader.choose_profile`) is the one taught; a table without one teaches nothing.
    """

    def teach(correction: DieCorrection) -> None:
        reader = session.reader
        if correction.frame is None or not isinstance(reader, LazyReader):  # nothing to cut a die from
            return
        profile = reader.teaching_profile()
        if profile is not None:
            from farklecam.service.profiles.teach_from_table import teach_correction  # the classifier's stack

            teach_correction(profile, correction, source=f"game {game_id}")

    return teach


def get_settings(conn: HTTPConnection) -> Settings:
    """The app's settings."""
    settings: Settings = conn.app.state.settings
    return settings


def get_games(conn: HTTPConnection) -> Games:
    """The games (their store plus the replayed cache) opened by the lifespan."""
    games: Games = conn.app.state.games
    return games


def get_pictures(conn: HTTPConnection) -> ThrowPictures:
    """The pictures of camera-scored throws, in the games' database."""
    pictures: ThrowPictures = conn.app.state.pictures
    return pictures


def get_reader_slot(conn: HTTPConnection) -> ReaderSlot:
    """The slot holding the (perhaps not yet loaded) reader."""
    slot: ReaderSlot = conn.app.state.reader
    return slot


def get_reader(slot: Annotated[ReaderSlot, Depends(get_reader_slot)]) -> FrameReader:
    """The dice reader, loaded on first use (runs in a worker thread: loading takes a while).

    Raises:
        ModelLoadError: the model files are missing or broken (the service answers 503).
    """
    return slot.get()


def get_cameras(conn: HTTPConnection) -> Cameras:
    """The named fixed cameras of ``POST /api/read``."""
    cameras: Cameras = conn.app.state.cameras
    return cameras


def get_tables(conn: HTTPConnection) -> Tables:
    """The live tables (camera sessions per game)."""
    tables: Tables = conn.app.state.tables
    return tables


SettingsDep = Annotated[Settings, Depends(get_settings)]
GamesDep = Annotated[Games, Depends(get_games)]
PicturesDep = Annotated[ThrowPictures, Depends(get_pictures)]
ReaderDep = Annotated[FrameReader, Depends(get_reader)]
ReaderSlotDep = Annotated[ReaderSlot, Depends(get_reader_slot)]
TablesDep = Annotated[Tables, Depends(get_tables)]
CamerasDep = Annotated[Cameras, Depends(get_cameras)]
