"""The live window's pieces: keys, panel, pictures, the game file, the verb, and the Tk window under Xvfb."""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from farklecam.errors import CameraError, IllegalActionError, InvalidRulesError, StorageError, TrayError
from farklecam.scoring.actions import Correct, Keep, Roll
from farklecam.scoring.game import Game
from farklecam.scoring.gamestate import Phase
from farklecam.scoring.presets import get_rules
from farklecam.service.commands.base import tray_from_args
from farklecam.service.commands.live_verb import LIVE, parse_head_start, parse_players
from farklecam.service.live.app import LiveOptions, open_session
from farklecam.service.live.controller import (
    KEY_HELP,
    PANEL_COLUMNS,
    LiveController,
    farkle_news,
    named_dice,
    panel_lines,
    ppm_bytes,
    render_scene,
)
from farklecam.service.live.demo import DemoTable, DemoThrow
from farklecam.service.live.gamefile import GameFile, default_game_path
from farklecam.service.overlay.labels import label_text
from farklecam.service.table import TableSession
from farklecam.vision.reading import DieStatus, Reading
from farklecam.vision.tray.outline import TrayOutline

BOXED = get_rules("boxed")


def reading(faces: list[int]) -> Reading:
    n = len(faces)
    return Reading(
        xyxy=[[50.0 * i + 10, 40.0, 50.0 * i + 45, 75.0] for i in range(n)],
        confidence=[0.9] * n,
        face=faces,
        face_confidence=[0.95] * n,
        status=["ok"] * n,
        image_size=(320, 240),
    )


# ---------------------------------------------------------------------------- keys and panel
def test_keys_drive_the_table() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    keys = LiveController(session)
    session.throw(reading([1, 1, 1, 1, 2, 3]))
    for key in ("1", "1", "k"):
        assert keys.handle_key(key) is True
    assert session.game.actions_in_force[-1] == Keep((1, 1))
    assert keys.handle_key("u") and session.game.phase is Phase.AWAITING_KEEP
    assert keys.handle_key("Return") and session.game.actions_in_force[-1] == Keep((1, 1, 1, 1))
    assert keys.handle_key("b") and session.game.scores["Ann"] == 1000
    assert keys.handle_key("r") and "Bob: throw 6 dice" in session.view().message
    assert keys.handle_key("x") is True  # unbound: nothing happens
    assert keys.handle_key("q") is False and keys.handle_key("Escape") is False


def test_an_illegal_key_becomes_the_message_not_an_exception() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    keys = LiveController(session)
    assert keys.handle_key("b") is True
    assert "cannot bank" in session.view().message
    assert keys.handle_key("k") is True and "pick dice to keep first" in session.view().message


class TrayReader:
    """A reader that, like :meth:`farklecam.vision.reader.DiceReader.with_tray`, gives a copy with a checked tray."""

    def __init__(self, tray: TrayOutline | None = None) -> None:
        self.tray = tray

    def with_tray(self, corners: list[list[float]] | None) -> TrayReader:
        return TrayReader(None if corners is None else TrayOutline.from_corners(corners))

    def read(self, frame: np.ndarray) -> Reading:
        return Reading.empty((frame.shape[1], frame.shape[0]))


def test_t_and_four_clicks_calibrate_the_tray_and_capital_t_forgets_it() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"], reader=TrayReader())
    keys = LiveController(session)
    keys.mark(50, 50)  # a click while not marking does nothing
    assert session.reader.tray is None
    assert keys.handle_key("t") and "corner 1 of 4" in session.view().message
    corners = [(10.0, 20.0), (300.0, 25.0), (310.0, 230.0), (5.0, 220.0)]
    for x, y in corners[:3]:
        keys.mark(x, y)
    assert "corner 4 of 4" in session.view().message and session.reader.tray is None
    keys.mark(*corners[3])
    assert session.reader.tray.polygon.tolist() == [list(c) for c in corners]
    assert "--tray 10,20,300,25,310,230,5,220" in session.view().message  # how to start with it next time
    assert keys.marks is None and keys.handle_key("T") and session.reader.tray is None
    assert keys.handle_key("t")
    for _ in range(4):
        keys.mark(7, 7)  # four clicks on one spot enclose nothing: refused, the reader kept
    assert "no tray" in session.view().message and session.reader.tray is None
    assert keys.handle_key("t") and keys.handle_key("Escape") is True  # Escape cancels marking, not the game
    assert keys.marks is None and "cancelled" in session.view().message
    assert keys.handle_key("Escape") is False


def test_a_reader_without_a_tray_says_so() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"], reader=DemoTable([], seed=1))
    keys = LiveController(session)
    assert keys.handle_key("t") and "takes no tray corners" in session.view().message and keys.marks is None


def test_panel_shows_options_advice_and_scores() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    view = session.throw(reading([1, 5, 2, 3, 4, 6]))
    lines = panel_lines(view)
    assert lines[0] == "Ann's turn - turn total 0"
    assert "roll: 1 2 3 4 5 6" in lines
    best = [line for line in lines if line.startswith(" * keep")]
    assert best == [f" * keep {'1 2 3 4 5 6':<11}  1500 hot dice"]
    assert any(line.startswith("advice: keep 1 2 3 4 5 6, then ") for line in lines)
    assert " > Ann               0  (not on the board)" in lines
    assert lines[-len(KEY_HELP.splitlines()) :] == KEY_HELP.splitlines()


def test_a_farkle_is_news_until_the_next_player_throws() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    keys = LiveController(session)
    assert keys.news() == ""
    session.throw(reading([2, 2, 3, 4, 6, 6]))  # nothing scores
    news = "FARKLE - Ann scores nothing this turn (threw 2 2 3 4 6 6); Bob throws next"
    assert farkle_news(session.game.state) == keys.news() == news
    assert keys.news(detail=False) == "FARKLE - Ann scores nothing; Bob throws next"
    lines = panel_lines(session.view(), keys.news())
    assert lines[0].startswith("FARKLE - Ann scores nothing") and "Bob's turn - turn total 0" in lines
    session.throw(reading([1, 5, 2, 3, 4, 6]))  # Bob throws: the farkle is old news
    assert keys.news() == ""
    assert keys.handle_key("u") and keys.news() == news  # undone: Bob has not thrown yet


def test_a_farkle_penalty_is_named() -> None:
    session = TableSession(BOXED.with_options({"farkle_penalty": 500, "farkle_penalty_streak": 1}), ["Ann", "Bob"])
    session.throw(reading([2, 2, 3, 4, 6, 6]))
    assert farkle_news(session.game.state).startswith("FARKLE - Ann scores nothing this turn and loses 500 (threw")


def flagged() -> Reading:
    return Reading(
        xyxy=[[10.0 + 40 * i, 40.0, 45.0 + 40 * i, 75.0] for i in range(4)],
        confidence=[0.9] * 4,
        face=[5, 0, 4, 3],
        face_confidence=[0.95] * 4,
        status=["ok", "cocked", "off_tray", "uncertain"],
        image_size=(320, 240),
    )


def test_the_panel_names_the_dice_the_overlay_numbers() -> None:
    assert named_dice(flagged()) == "throw again: #2 leaning, #3 off the tray; check: #4 unclear"
    assert named_dice(reading([1, 5])) == "" and named_dice(None) == ""
    view = dataclasses.replace(TableSession(BOXED, ["Ann", "Bob"]).view(), reading=flagged())
    assert named_dice(flagged()) in panel_lines(view)
    dice = flagged().dice()
    tags = [label_text(die, number=None if die.status is DieStatus.OK else i + 1) for i, die in enumerate(dice)]
    assert tags == ["5", "#2 LEAN", "#3 4 OUT", "#4 3?"]  # as FaceLabelAnnotator draws them


def test_every_panel_line_fits_the_panel() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    session.throw(flagged())
    session.notify("tray marked: leaning dice are checked; next time start with --tray 10,20,300,25,310,230,5,220")
    news = "FARKLE - Ann scores nothing this turn (threw 2 2 3 4 6 6); Bob throws next"
    lines = panel_lines(session.view(), news)
    assert all(len(line) <= PANEL_COLUMNS for line in lines), [line for line in lines if len(line) > PANEL_COLUMNS]
    assert any("--tray 10,20,300,25,310,230,5,220" in line for line in lines)  # wrapped at spaces, not inside it
    path = "new game, saved in /home/someone/.local/share/farklecam/live/tables/evening/game.json"
    assert all(len(line) <= PANEL_COLUMNS for line in panel_lines(session.notify(path)))  # even a long path


def test_a_farkle_is_a_banner_on_the_picture() -> None:
    image = np.full((240, 320, 3), 40, np.uint8)
    view = TableSession(BOXED, ["Ann", "Bob"]).view()
    plain = render_scene(image, view)
    banner = render_scene(image, view, news="FARKLE - Ann scores nothing; Bob throws next")
    changed = np.flatnonzero((banner != plain).any(axis=(1, 2)))
    assert changed.size and changed.min() > 200  # across the foot of the picture
    assert (banner[-10:, :, 2] > 200).any()  # on the red of a die to throw again


def test_pictures_for_tk() -> None:
    image = np.full((240, 320, 3), 40, np.uint8)
    session = TableSession(BOXED, ["Ann", "Bob"])
    view = session.throw(reading([1, 5]))
    scene = render_scene(image, view)
    assert scene.shape == image.shape and not np.array_equal(scene, image)
    assert render_scene(np.zeros((600, 1600, 3), np.uint8), view).shape == (360, 960, 3)
    data = ppm_bytes(np.zeros((2, 3, 3), np.uint8))
    assert data.startswith(b"P6 3 2 255\n") and len(data) == len(b"P6 3 2 255\n") + 18


# ---------------------------------------------------------------------------- correcting a die
def test_c_then_a_dies_number_then_a_key_corrects_that_die() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    keys = LiveController(session)
    session.throw(reading([1, 6, 2, 3, 5, 5]))  # die #2 is a 5, read as a 6
    assert keys.handle_key("c") and "press its number (1-6)" in session.view().message
    assert keys.handle_key("7") and "no die #7: press 1-6" in session.view().message  # still asking
    assert keys.handle_key("2") and session.view().message.startswith("die #2 (read 6): press its face 1-6")
    assert keys.handle_key("5") and keys.correcting is None
    assert session.game.actions_in_force[-1] == Correct(2, "face", 5, (1, 2, 3, 5, 5, 5))
    assert session.view().message == "die #2 is a 5: Ann threw 1 2 3 5 5 5"
    for key, fix in (("l", "cocked"), ("o", "off-tray")):  # leaning, off the tray: the throw is taken back
        assert keys.handle_key("c") and keys.handle_key("3") and keys.handle_key(key)
        assert session.game.actions_in_force[-1] == Correct(3, fix) and "taken back" in session.view().message
        keys.handle_key("u")
    assert keys.handle_key("c") and keys.handle_key("3") and keys.handle_key("x")  # no die: five dice of six
    assert session.game.actions_in_force[-1] == Correct(3, "not-a-die") and "5 dice but 6" in session.view().message
    keys.handle_key("u")
    assert keys.handle_key("c") and keys.handle_key("Escape") and keys.correcting is None  # cancelled, not quit
    assert "cancelled" in session.view().message
    assert keys.handle_key("5") and session.view().selected == (5,)  # out of correcting, 1-6 pick dice again
    assert keys.handle_key("c") and keys.handle_key("q") is False  # q quits whatever is under way


def test_a_click_picks_a_die_to_correct_and_after_c_marks_a_missed_one() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    keys = LiveController(session)
    keys.click(30, 60)  # no throw yet: a click does nothing
    assert keys.correcting is None
    session.throw(reading([1, 5, 2, 3, 4]))  # five dice seen, six thrown: held back
    assert keys.handle_key("c") and keys.handle_key("4") and keys.picked_box() == (160.0, 40.0, 195.0, 75.0)
    keys.click(80, 60)  # a click on die #2 picks it instead
    assert keys.correcting is not None and keys.correcting.index == 1 and "die #2 (read 5)" in session.view().message
    keys.handle_key("Escape")
    keys.click(300, 200)  # away from the dice, outside correcting: nothing
    assert keys.correcting is None
    keys.handle_key("c")
    keys.click(300, 200)  # after c: a die the camera missed lies there
    assert keys.picked_box() == pytest.approx((282.5, 182.5, 317.5, 217.5))
    assert keys.handle_key("o") and "with its face" in session.view().message and keys.correcting is None
    keys.handle_key("c")
    keys.click(300, 200)
    assert keys.handle_key("6") and session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)),)
    assert session.view().message == "a missed 6 is added: Ann threw 1 2 3 4 5 6"
    keys.handle_key("c")
    keys.click(30, 60)
    assert keys.handle_key("1") and "die #1 already reads 1" in session.view().message  # refused: a message


def test_c_without_a_settled_throw_says_so_and_correcting_numbers_every_die() -> None:
    session = TableSession(BOXED, ["Ann", "Bob"])
    keys = LiveController(session)
    assert keys.handle_key("c") and keys.correcting is None and "no settled throw" in session.view().message
    image = np.full((240, 320, 3), 40, np.uint8)
    view = dataclasses.replace(session.throw(reading([1, 5])), reading=reading([1, 5]))
    plain = render_scene(image, view)
    numbered = render_scene(image, view, numbered=True, picked=(10.0, 40.0, 45.0, 75.0))
    assert not np.array_equal(plain, numbered)
    assert (numbered[36, 20:30] == 255).all()  # the die picked, outlined in white
    assert all(len(line) <= PANEL_COLUMNS for line in KEY_HELP.splitlines()) and "c: correct a die" in KEY_HELP


# ---------------------------------------------------------------------------- game file
def test_game_file_round_trip_and_archive(tmp_path: Path) -> None:
    store = GameFile(tmp_path / "live" / "game.json")
    assert store.load() is None and store.archive() is None
    game = Game(BOXED, ["Ann", "Bob"], first_player="Ann")
    game.apply("roll 1,1,5,2,3,4")
    store(game.to_json())
    assert store.load() == game
    assert [p.name for p in store.path.parent.iterdir()] == ["game.json"]  # no temporary file left behind
    moved = store.archive()
    assert moved is not None and moved.exists() and not store.path.exists()


def test_game_file_errors_are_storage_errors(tmp_path: Path) -> None:
    damaged = tmp_path / "game.json"
    damaged.write_text("{not json")
    with pytest.raises(StorageError, match="damaged"):
        GameFile(damaged).load()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StorageError, match="cannot save"):
        GameFile(blocker / "game.json").save("{}")


def test_default_game_file_is_in_the_user_data_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_game_path() == tmp_path / "farklecam" / "live" / "game.json"


def test_open_session_resumes_or_starts_anew(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    options = LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=path)
    first = open_session(options, None)
    first.throw(reading([1, 1, 1, 1, 2, 3]))
    first.keep([1, 1, 1, 1])
    resumed = open_session(LiveOptions(rules=BOXED, game_file=path), None)  # no players named: the saved game
    assert resumed.game == first.game and "resumed the saved game (2 actions, boxed rules" in resumed.view().message
    others = open_session(LiveOptions(rules=BOXED, players=("Cy", "Di"), game_file=path), None)
    assert others.game.players == ("Cy", "Di") and "previous game was moved to" in others.view().message
    assert len(list(tmp_path.glob("game-*.json"))) == 1
    fresh = open_session(LiveOptions(rules=BOXED, players=("Cy", "Di"), game_file=path, new_game=True), None)
    assert fresh.game.events == () and GameFile(path).load() == fresh.game
    zilch = open_session(LiveOptions(rules=get_rules("zilch"), game_file=path), None)
    assert zilch.rules.name == "zilch" and zilch.game.players == ("Player 1", "Player 2")
    again = open_session(LiveOptions(game_file=path), None)  # no rules asked for: the saved game's
    assert again.game == zilch.game and "zilch rules" in again.view().message


def test_a_new_game_gets_the_head_start_asked_for(tmp_path: Path) -> None:
    from farklecam.scoring.winprob import solve_win

    house = get_rules("house")
    fair = open_session(
        LiveOptions(rules=house, players=("Ann", "Bob"), game_file=tmp_path / "g.json", head_start="fair"), None
    )
    assert fair.game.head_start == {"Bob": solve_win(house).compensation()}
    assert GameFile(tmp_path / "g.json").load() == fair.game  # kept in the saved game
    given = parse_head_start("Bob=200, Cy=0")
    assert given == {"Bob": 200, "Cy": 0}
    with pytest.raises(InvalidRulesError, match="NAME=POINTS"):
        parse_head_start("Bob:200")
    with pytest.raises(IllegalActionError, match="first player"):
        open_session(LiveOptions(rules=house, players=("Ann", "Bob"), game_file=tmp_path / "r.json", head_start="fair",
                                 roll_off=True), None)  # fmt: skip


# ---------------------------------------------------------------------------- the verb
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="farklecam live")
    LIVE.configure(p)
    return p


def test_verb_options() -> None:
    args = parser().parse_args(["--video", "a.mp4", "--players", "Ann, Bob,Cy", "--rules", "zilch", "--new"])
    assert args.video == Path("a.mp4") and parse_players(args.players) == ("Ann", "Bob", "Cy") and args.new_game
    assert parse_players(None) == ()
    for bad in (["--camera", "1", "--video", "a.mp4"], ["--read-every", "0"]):
        with pytest.raises(SystemExit):
            parser().parse_args(bad)
    with pytest.raises(ValueError, match="two or more different names"):
        parse_players("Ann,Ann")


def test_tray_corners_are_parsed_or_refused_clearly() -> None:
    args = parser().parse_args(["--tray", "10,20, 600,25, 610,470, 5,460"])
    assert tray_from_args(args) == [[10, 20], [600, 25], [610, 470], [5, 460]]
    assert tray_from_args(parser().parse_args([])) is None
    for bad in ("1,2,3", "a,b,c,d,e,f,g,h", "1,2,3,4,5,6,7,8,9"):
        with pytest.raises(TrayError, match="four corners as 8 numbers"):
            tray_from_args(parser().parse_args(["--tray", bad]))
    for flat in ("0,0,0,0,0,0,0,0", "0,0,10,10,20,20,30,30"):
        with pytest.raises(TrayError, match="outlines no tray"):
            tray_from_args(parser().parse_args(["--tray", flat]))


def test_a_missing_camera_is_a_clear_error_and_the_game_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    game = Game(BOXED, ["Ann", "Bob"], first_player="Ann")
    game.apply("roll 1,1,5,2,3,4")
    GameFile(path).save(game.to_json())
    args = parser().parse_args(["--camera", "99", "--game-file", str(path)])
    with pytest.raises(CameraError, match=r"camera 99 is not available.*saved game is kept in"):
        LIVE.run(args)
    assert GameFile(path).load() == game


# ---------------------------------------------------------------------------- the window (Xvfb)
@pytest.fixture(autouse=True)
def _tk_dies_in_its_own_thread() -> Iterator[None]:
    """Collect a test's Tk objects here, in the thread that made them.

    Tk must be torn down by its own thread: left in a reference cycle, a window's Tk
    objects were collected later by a server test's worker thread, and Tcl aborted the
    whole test run there.
    """
    yield
    gc.collect()


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """A display for Tk: the one we have, else a private Xvfb; skipped when there is neither."""
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    if shutil.which("Xvfb") is None:
        pytest.skip("no display and no Xvfb")
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    number = b""
    while not number.endswith(b"\n") and select.select([read_fd], [], [], 10 if not number else 0.5)[0]:
        number += os.read(read_fd, 16)  # Xvfb writes the display number, then a newline
    os.close(read_fd)
    if not number.strip():
        server.kill()
        pytest.skip("Xvfb did not start")
    try:
        yield f":{number.decode().strip()}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_window_plays_a_throw_and_takes_keys(display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tkinter")
    from farklecam.service.live.window import LiveWindow

    monkeypatch.setenv("DISPLAY", display)
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6))], size=(320, 240), settled_frames=20, seed=3)
    session = open_session(LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=tmp_path / "g.json"), demo)
    window = LiveWindow(LiveController(session), iter(demo), title="test")
    pressed: list[str] = []
    deadline = time.monotonic() + 20

    def drive() -> None:
        phase = session.game.phase
        if time.monotonic() > deadline:  # keys never arrived: close rather than hang the suite
            window.close()
            return
        if phase is Phase.AWAITING_KEEP and not pressed:
            pressed.append("Return")
            window.root.focus_force()
            window.root.event_generate("<KeyPress-Return>", when="tail")
        elif phase is Phase.CAN_BANK_OR_ROLL:
            pressed.append("q")
            window.root.event_generate("<KeyPress-q>", when="tail")
            return
        window.root.after(20, drive)

    window.root.after(50, drive)
    window.run()
    assert pressed == ["Return", "q"]
    assert session.game.actions_in_force == (Roll((1, 2, 3, 4, 5, 6)), Keep((1, 2, 3, 4, 5, 6)))
    assert window.frames_shown > 0
    assert GameFile(tmp_path / "g.json").load() == session.game


def test_the_window_takes_tray_corners_by_clicks(display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tkinter")
    from farklecam.service.live.window import LiveWindow

    trays: list[list[list[float]] | None] = []

    class TrayDemo(DemoTable):
        def with_tray(self, corners: list[list[float]] | None) -> TrayDemo:
            trays.append(corners)
            return self

    monkeypatch.setenv("DISPLAY", display)
    demo = TrayDemo([DemoThrow((1, 5, 2, 3, 4, 6))], size=(320, 240), settled_frames=200, seed=3)
    session = open_session(LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=tmp_path / "g.json"), demo)
    window = LiveWindow(LiveController(session), iter(demo), title="test")
    corners = [(20, 30), (300, 28), (290, 220), (25, 210)]
    steps: list[str] = []
    deadline = time.monotonic() + 20

    def drive() -> None:
        if time.monotonic() > deadline or trays:
            window.close()
            return
        if window.frames_shown and not steps:  # a picture is up: mark its corners
            steps.append("t")
            window.root.focus_force()
            window.root.event_generate("<KeyPress-t>", when="tail")
            for x, y in corners:
                window.picture.event_generate("<Button-1>", x=x, y=y, when="tail")
        window.root.after(20, drive)

    window.root.after(50, drive)
    window.run()
    assert trays == [[[float(x), float(y)] for x, y in corners]]  # shown at full size: pixels are frame pixels


def test_the_window_corrects_a_die_clicked_on_the_picture(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tkinter")
    from farklecam.service.live.window import LiveWindow

    class Misread(DemoTable):
        """The demo table, its reader taking every 1 for a 2."""

        def read(self, frame_bgr: np.ndarray, /) -> Reading:
            read = super().read(frame_bgr)
            return dataclasses.replace(read, face=np.where(read.face == 1, 2, read.face))

    monkeypatch.setenv("DISPLAY", display)
    demo = Misread([DemoThrow((1, 5, 2, 3, 4, 6), glare=False)], size=(320, 240), settled_frames=200, seed=3)
    session = open_session(LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=tmp_path / "g.json"), demo)
    window = LiveWindow(LiveController(session), iter(demo), title="test")
    steps: list[str] = []
    deadline = time.monotonic() + 20

    def drive() -> None:
        throw = session.settled_throw
        if time.monotonic() > deadline or len(session.game.events) > 1:
            window.close()
            return
        if session.game.phase is Phase.AWAITING_KEEP and throw is not None and not steps:
            x1, y1, x2, y2 = throw.xyxy[int(np.flatnonzero(throw.face == 2)[0])]  # a 2 read where a 1 lies
            steps.append("c, click, 1")
            window.root.focus_force()
            window.root.event_generate("<KeyPress-c>", when="tail")
            window.picture.event_generate("<Button-1>", x=round((x1 + x2) / 2), y=round((y1 + y2) / 2), when="tail")
            window.root.event_generate("<KeyPress-1>", when="tail")
        window.root.after(20, drive)

    window.root.after(50, drive)
    window.run()
    assert steps and session.game.current_roll == (1, 2, 3, 4, 5, 6)  # one 2 of the two read was the 1
    assert str(session.game.events[-1].action).endswith("face 1 roll 1,2,3,4,5,6")
    assert GameFile(tmp_path / "g.json").load() == session.game


def test_the_window_announces_a_farkle_and_its_panel_and_legend_fit(
    display: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tkinter")
    import tkinter.font

    from farklecam.service.live.window import LiveWindow
    from farklecam.service.overlay.legend import LEGEND, hex_color

    monkeypatch.setenv("DISPLAY", display)
    # A camera as wide as the screen: the picture is shown smaller so that the panel fits beside it.
    demo = DemoTable([DemoThrow((2, 2, 3, 4, 6, 6))], size=(1280, 720), settled_frames=200, seed=3)
    session = open_session(LiveOptions(rules=BOXED, players=("Ann", "Bob"), game_file=tmp_path / "g.json"), demo)
    window = LiveWindow(LiveController(session), iter(demo), title="test")
    panels: list[str] = []
    cut: list[str] = []
    legend: set[tuple[str, str]] = set()
    edges: list[tuple[int, int]] = []
    deadline = time.monotonic() + 30
    tray = "tray marked: leaning dice are checked; next time start with --tray 10,20,300,25,310,230,5,220"

    def look() -> None:
        """The panel's text, its lines cut off at its right edge, and the window's right edge on the screen."""
        window.root.update_idletasks()
        font = tkinter.font.nametofont(str(window.panel.cget("font")))
        room = window.panel.winfo_width() - 2 * int(window.panel.cget("padx"))
        text = str(window.panel.cget("text"))
        panels.append(text)
        cut.extend(line for line in text.splitlines() if font.measure(line) > room)
        edges.append((window.root.winfo_rootx() + window.root.winfo_width(), window.root.winfo_screenwidth()))

    def drive() -> None:
        if time.monotonic() > deadline:
            window.close()
            return
        if "FARKLE" in str(window.panel.cget("text")):  # the farkle was recorded and shown
            look()
            session.notify(tray)  # the longest message the window writes
            window.refresh()
            look()
            legend.update((str(w.cget("text")), str(w.cget("background"))) for w in window.legend.grid_slaves())
            window.close()
            return
        window.root.after(20, drive)

    window.root.after(50, drive)
    window.run()
    assert panels, "the farkle was never shown"
    assert panels[0].startswith("FARKLE - Ann scores nothing this turn") and "Bob throws next" in panels[0]
    assert cut == [], "the panel cuts these lines off"
    assert all(right <= screen for right, screen in edges), edges
    assert "--tray 10,20,300,25,310,230,5,220" in panels[1]
    for entry in LEGEND:  # every mark, in its colour, with what it means
        assert (entry.tag, hex_color(entry.color)) in legend
        assert any(text == entry.meaning for text, _ in legend)
