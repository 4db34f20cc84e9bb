"""``farklecam live``: put the pieces together (source, reader, game file, table, window).

:func:`open_session` decides which game is played (the saved one when it matches
the players and rules asked for, else a new one, the old file moved aside), and
:func:`run_live` opens the frame source and the window. The saved game survives
every way this can end: q, the close button, an unplugged camera, a crash.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.winprob import fair_head_start
from farklecam.service.live.controller import LiveController
from farklecam.service.live.gamefile import GameFile
from farklecam.service.table import TableSession
from farklecam.vision.camera.sources import CameraSource, Frame, VideoFileSource
from farklecam.vision.settle.detector import FrameReader, SettleConfig

if TYPE_CHECKING:
    from farklecam.service.live.demo import DemoThrow
    from farklecam.vision.profiles.profile import Profile

__all__ = ["DEFAULT_PLAYERS", "LiveOptions", "open_session", "run_live"]

#: Players of a new game when none are named.
DEFAULT_PLAYERS = ("Player 1", "Player 2")


@dataclass(frozen=True)
class LiveOptions:
    """What ``farklecam live`` was asked for.

    Attributes:
        rules: the rules asked for; None when none were (a saved game keeps its own; a new one plays boxed).
        players: names in seating order; empty for the saved game's, or :data:`DEFAULT_PLAYERS`.
        camera: camera index, used unless ``video`` or ``demo`` is given.
        video: play a video file instead of a camera.
        demo: play scripted throws (no camera, no model).
        game_file: where the game is saved; None for the user data folder.
        new_game: start a new game even if a saved one could be resumed.
        roll_off: a new game starts with a roll-off (one die each, the highest starts), held by the
            camera as the page holds it; else the first player starts.
        head_start: a new game's head start: points by name, ``"fair"`` (the second of two players gets
            :func:`farklecam.scoring.winprob.fair_head_start`), or None for none.
        model_dir: folder of the ONNX models; None for the bundled ones.
        tray: the tray floor's four corners in pixels, calibrated once for the fixed camera;
            None to find the tray in each frame (the cocked test then runs under a vertical
            learned from the dice).
        straight_down: the camera looks straight down, which gives the cocked test its
            vertical without a tray (:attr:`farklecam.vision.reader.ReaderConfig.straight_down`).
        profile: the table's profile, whose taught dice vote on every face and leaning call, and which every
            correction made in the window is kept in (read with from the next read); None for none.
        settle: settle-layer thresholds.
    """

    rules: Rules | None = None
    players: tuple[str, ...] = ()
    camera: int = 0
    video: Path | None = None
    demo: bool = False
    game_file: Path | None = None
    new_game: bool = False
    roll_off: bool = False
    head_start: Mapping[str, int] | Literal["fair"] | None = None
    model_dir: Path | None = None
    tray: list[list[float]] | None = None
    straight_down: bool = False
    profile: Profile | None = None
    settle: SettleConfig = field(default_factory=SettleConfig)


def open_session(options: LiveOptions, reader: FrameReader | None) -> TableSession:
    """The table for this run: the saved game resumed, or a new game (the old file archived).

    A saved game is resumed unless ``new_game``, it is over, or the players or rules asked
    for differ from it. The session saves to the game file after every action.

    Raises:
        StorageError: the game file cannot be read, moved aside or written.
    """
    store = GameFile(options.game_file)
    saved = store.load()
    note = ""
    if saved is not None:
        other_rules = options.rules is not None and options.rules.key() != saved.rules.key()
        differs = bool(options.players and options.players != saved.players) or other_rules
        if options.new_game or saved.is_over or differs:
            archived = store.archive()
            note = f"; the previous game was moved to {archived}"
            saved = None
    if saved is not None:
        session = TableSession(saved.rules, reader=reader, settle=options.settle, game=saved, saver=store)
        where = f"{saved.rules.name} rules, from {store.path}; --new starts another"
        return _noted(session, f"resumed the saved game ({len(saved.events)} actions, {where})")
    players = options.players or DEFAULT_PLAYERS
    rules = options.rules or get_rules("boxed")
    first_player = None if options.roll_off else players[0]
    head_start = options.head_start
    if isinstance(head_start, str):  # "fair": solved from the rules' win table
        head_start = fair_head_start(rules, players, first_player)
    game = Game(rules, players, first_player=first_player, head_start=head_start)
    store.save(game.to_json())
    session = TableSession(rules, reader=reader, settle=options.settle, game=game, saver=store)
    first = f"roll-off: {players[0]} throws one die first" if options.roll_off else f"{players[0]} throws first"
    return _noted(session, f"new game, saved in {store.path}{note}; {first}")


def _noted(session: TableSession, text: str) -> TableSession:
    session.notify(text)
    return session


@contextlib.contextmanager
def _camera_or_video(options: LiveOptions) -> Iterator[Iterator[Frame]]:
    """The camera or video asked for, opened (and closed afterwards)."""
    if options.video is not None:
        with VideoFileSource(options.video) as video:
            yield iter(video)
    else:
        with CameraSource(options.camera) as camera:
            yield iter(camera)


def _demo_throws(session: TableSession) -> Callable[[], DemoThrow | None]:
    """Demo throws that follow the game: as many dice as it wants, when it waits for a throw."""
    from farklecam.service.live.demo import DemoThrow

    rng = random.Random(7)

    def more() -> DemoThrow | None:
        if not session.expects_throw:
            return None
        n = 1 if session.game.phase is Phase.ROLL_OFF else session.game.dice_to_throw or session.rules.dice
        faces = tuple(rng.randint(1, 6) for _ in range(n))
        return DemoThrow(faces, cocked=(0,) if n > 1 and rng.random() < 0.1 else (), hand=rng.random() < 0.15)

    return more


def run_live(options: LiveOptions) -> int:
    """Open the source, the reader and the window, and play until q; returns the exit status.

    Raises:
        CameraError: the camera or video cannot be opened (the saved game is untouched).
        ModelLoadError: the ONNX models are missing or broken.
        StorageError: the game file cannot be used.
        FarkleError: no display to open the window on.
    """
    from farklecam.service.live.window import LiveWindow

    if options.demo:  # scripted throws that follow the game: no camera, no model
        from farklecam.service.live.demo import DemoTable

        table = DemoTable([], settled_frames=45, seed=1)
        session = open_session(options, table)
        table.more = _demo_throws(session)
        LiveWindow(LiveController(session), iter(table), title="farklecam - demo", pace=True).run()
        return 0
    from farklecam.vision.pose.view_search import VerticalMemory
    from farklecam.vision.reader import DiceReader, ReaderConfig

    with _camera_or_video(options) as frames:  # the camera first: a missing one fails before models load
        config = ReaderConfig(straight_down=options.straight_down)
        reader = DiceReader(options.model_dir, tray=options.tray, config=config, profile=options.profile)
        reader = reader.with_vertical_memory(VerticalMemory())
        session = open_session(options, reader)
        title = f"farklecam - {options.video or f'camera {options.camera}'}"
        if reader.profile is not None:  # the players' corrections teach the profile this window reads with
            from farklecam.service.profiles.teach_from_table import teaching_hook

            session.on_correct = teaching_hook(reader.profile, source=title.removeprefix("farklecam - "))
        LiveWindow(LiveController(session), frames, title=title, pace=options.video is not None).run()
    return 0
