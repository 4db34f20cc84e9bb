"""What the live window does, without the window: keys to commands, views to pixels and text.

Kept apart from Tk so it can be tested headless: :class:`LiveController` turns a
key (or a click on the picture) into a :class:`~farklecam.service.table.TableSession` command (an
illegal one becomes the on-screen message, never an exception in the Tk loop), :func:`panel_lines` writes
the side panel, :func:`farkle_news` says when a farkle just passed the turn,
:func:`render_scene` draws the overlay and :func:`ppm_bytes` makes
the bytes ``tk.PhotoImage(data=...)`` shows without PIL.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import FarkleError
from farklecam.scoring.gamestate import GameState, Phase, TurnEnd
from farklecam.service.corrections import added_box, die_at
from farklecam.service.overlay import STATUS_COLORS, annotate_reading
from farklecam.service.overlay.labels import draw_label, tag_size
from farklecam.service.table import TableSession, TableView
from farklecam.vision.reading import DieStatus, Reading

__all__ = [
    "KEY_HELP",
    "PANEL_COLUMNS",
    "Correcting",
    "LiveController",
    "farkle_news",
    "named_dice",
    "panel_lines",
    "ppm_bytes",
    "render_scene",
]

#: The panel's width in characters: longer lines are wrapped at spaces to fit it.
PANEL_COLUMNS = 60

#: The key help at the foot of the panel, in lines that fit :data:`PANEL_COLUMNS`.
KEY_HELP = (
    "Enter: take advice  1-6: pick dice  k: keep  b: bank\n"
    "r: roll on  u: undo  q: quit\n"
    "t: mark the tray's corners (click them)  T: forget them\n"
    "c: correct a die: its number (or click the die), then\n"
    "   1-6 its face, l leaning, o off the tray, x no die;\n"
    "   after c, a click where no die is adds a missed one"
)

_ENTER = frozenset({"Return", "KP_Enter", "Enter", "\r", "\n"})
_QUIT = frozenset({"q", "Q", "Escape"})
#: The keys that say what a picked die is, besides its face 1-6.
_FIX_KEYS = {"l": "cocked", "L": "cocked", "o": "off-tray", "O": "off-tray", "x": "not-a-die", "X": "not-a-die"}
_FACE_KEYS = frozenset("123456")


@dataclass(frozen=True, slots=True)
class Correcting:
    """A correction under way: ``c`` was pressed (or a die clicked), and the die or its fix is awaited.

    Attributes:
        index: the die picked, counted from 0 (its tag says ``#index+1``); None while none is.
        at: where a die the camera missed lies (frame pixels), once clicked; None otherwise.
    """

    index: int | None = None
    at: tuple[float, float] | None = None

    @property
    def picked(self) -> bool:
        """Whether a die (or a missed die's spot) is picked, so that the next key says what it is."""
        return self.index is not None or self.at is not None


class LiveController:
    """Keys in, table commands out.

    Args:
        session: the table being played.
    """

    def __init__(self, session: TableSession) -> None:
        self.session = session
        self.marks: list[tuple[float, float]] | None = None  # tray corners clicked so far, while marking
        self.correcting: Correcting | None = None  # a die being corrected, from c (or a click) to its fix

    def handle_key(self, key: str) -> bool:
        """Run the command bound to ``key`` (a Tk keysym or a character); False means quit.

        Keys: Enter takes the advice (keep its dice, or bank / roll on), 1-6 pick dice of
        that face for the keep, k keeps the picked dice, b banks, r rolls on, u undoes,
        t marks the tray's corners (then clicks, see :meth:`mark`), T forgets them, q quits.
        c corrects a die of the settled throw: its number (the overlay then numbers every
        die) or a click on it picks it, then 1-6 say its face, l that it leans, o that it
        lies off the tray, x that it is no die (:meth:`click` adds a die the camera missed).
        Escape cancels marking or correcting, else quits.
        """
        session = self.session
        if self.marks is not None and key == "Escape":
            self.marks = None
            session.notify("tray marking cancelled")
            return True
        if self.correcting is not None:
            return self._correcting_key(key)
        if key in _QUIT:
            return False
        if key in {"c", "C"}:
            self.start_correcting()
        elif key == "t":
            self.start_marking()
        elif key == "T":
            self._use_tray(None, "tray corners forgotten: the tray is found in each frame")
        try:
            if key in _ENTER:
                session.accept_suggestion()
            elif key in {"1", "2", "3", "4", "5", "6"}:
                session.toggle(int(key))
            elif key in {"k", "K"}:
                session.keep()
            elif key in {"b", "B"}:
                session.bank()
            elif key in {"r", "R"}:
                session.roll_again()
            elif key in {"u", "U"}:
                session.undo()
        except FarkleError as exc:
            session.notify(str(exc))
        return True

    # ------------------------------------------------------------------ correcting a die
    def start_correcting(self) -> None:
        """Wait for the number of the die to correct (or a click on it, or where a die was missed)."""
        throw = self.session.settled_throw
        if throw is None:
            self.session.notify("no settled throw to correct: press c once the dice rest")
            return
        self.correcting = Correcting()
        ask = f"correct which die? press its number (1-{len(throw)}) or click it; or " if len(throw) else ""
        self.session.notify(f"{ask}click where the camera missed a die (Esc cancels)")

    def click(self, x: float, y: float) -> None:
        """A click on the picture, in frame pixels: a tray corner while marking, else a die to correct.

        A click on a die picks it for correcting (then a key says what it is); after ``c``, a click
        where no die lies marks a die the camera missed (then 1-6 say its face).
        """
        if self.marks is not None:
            self.mark(x, y)
            return
        throw = self.session.settled_throw
        hit = None if throw is None else die_at(throw, x, y)
        if hit is not None:
            self._pick(hit)
        elif self.correcting is not None and throw is not None:
            self.correcting = Correcting(at=(x, y))
            self.session.notify("a die the camera missed, here: press its face 1-6 (Esc cancels)")

    def _pick(self, index: int) -> None:
        """Die ``index`` (from 0) is the one to correct: ask what it is."""
        throw = self.session.settled_throw
        if throw is None:
            self.correcting = None
            self.session.notify("the dice moved: correction cancelled")
            return
        if not 0 <= index < len(throw):
            which = f"press 1-{len(throw)}" if len(throw) else "click where the camera missed one"
            self.session.notify(f"no die #{index + 1}: {which} (Esc cancels)")
            return
        self.correcting = Correcting(index=index)
        die = throw.dice()[index]
        read = "leaning" if die.status is DieStatus.COCKED else str(die.face or "?")
        what = "press its face 1-6, l leaning, o off the tray, x not a die (Esc cancels)"
        self.session.notify(f"die #{index + 1} (read {read}): {what}")

    def _correcting_key(self, key: str) -> bool:
        """A key while correcting: Escape cancels, a number picks a die, then a key says what it is."""
        correcting, session = self.correcting, self.session
        assert correcting is not None
        if key == "Escape":
            self.correcting = None
            session.notify("correction cancelled")
            return True
        if not correcting.picked:
            if key.isdigit() and key != "0" and len(key) == 1:
                self._pick(int(key) - 1)
            elif key in _QUIT:  # q still quits, whatever is under way
                return False
            return True
        if key not in _FACE_KEYS and key not in _FIX_KEYS:
            return key not in _QUIT  # anything else leaves the die picked; q still quits
        self.correcting = None
        try:
            if correcting.at is not None:
                if key not in _FACE_KEYS:
                    session.notify("a missed die is added with its face: c, click it, then 1-6")
                    return True
                session.add_die(correcting.at[0], correcting.at[1], int(key))
            elif correcting.index is not None:
                fix, face = ("face", int(key)) if key in _FACE_KEYS else (_FIX_KEYS[key], None)
                session.correct(correcting.index, fix, face)
        except FarkleError as exc:
            session.notify(str(exc))
        return True

    def picked_box(self) -> tuple[float, float, float, float] | None:
        """Where the die being corrected lies (frame pixels), to outline it; None while none is picked."""
        correcting, throw = self.correcting, self.session.settled_throw
        if correcting is None or throw is None:
            return None
        if correcting.at is not None:
            return added_box(throw, *correcting.at)
        if correcting.index is not None and correcting.index < len(throw):
            x1, y1, x2, y2 = (float(v) for v in throw.xyxy[correcting.index])
            return (x1, y1, x2, y2)
        return None

    # ------------------------------------------------------------------ tray
    def start_marking(self) -> None:
        """Wait for four clicks on the tray floor's corners (:meth:`mark`)."""
        if getattr(self.session.reader, "with_tray", None) is None:
            self.session.notify("this table's reader takes no tray corners")
            return
        self.marks = []
        self.session.notify("click corner 1 of 4 of the tray's floor, where it meets the walls (Esc cancels)")

    def mark(self, x: float, y: float) -> None:
        """One corner clicked, in frame pixels; the fourth calibrates the reader's tray."""
        if self.marks is None:
            return
        self.marks.append((x, y))
        if len(self.marks) < 4:
            self.session.notify(f"click corner {len(self.marks) + 1} of 4 of the tray's floor (Esc cancels)")
            return
        corners, self.marks = [[round(x, 1), round(y, 1)] for x, y in self.marks], None
        flat = ",".join(f"{v:g}" for corner in corners for v in corner)
        self._use_tray(corners, f"tray marked: leaning dice are checked; next time start with --tray {flat}")

    def news(self, detail: bool = True) -> str:
        """The farkle that just passed the turn, while the next player has not thrown (:func:`farkle_news`)."""
        return farkle_news(self.session.game.state, detail)  # one immutable state: safe from the frame thread too

    def _use_tray(self, corners: list[list[float]] | None, news: str) -> None:
        with_tray = getattr(self.session.reader, "with_tray", None)
        if with_tray is None:
            self.session.notify("this table's reader takes no tray corners")
            return
        try:
            self.session.reader = with_tray(corners)
        except ValueError as exc:
            self.session.notify(f"those corners are no tray ({exc}); press t to mark them again")
            return
        self.session.notify(news)


def _faces(faces: tuple[int, ...] | list[int]) -> str:
    return " ".join(map(str, faces)) or "-"


def farkle_news(state: GameState, detail: bool = True) -> str:
    """``"FARKLE - Ann scores nothing this turn (threw 2 2 3 4 6 6); Bob throws next"``, or ``""``.

    A farkle ends the turn at once and the next player's turn looks like any other: without a
    word the players miss that the points are gone. The news lasts until the next player's first
    throw (or an undo), so it is read however long the table takes to look.

    Args:
        state: the game's state.
        detail: with the throw and any penalty; without, short enough for a banner on the picture
            (``"FARKLE - Ann scores nothing; Bob throws next"``).
    """
    waiting = state.phase is Phase.AWAITING_ROLL and state.turn_total == 0
    if not state.turns or state.turns[-1].end is not TurnEnd.FARKLED:
        return ""
    if not waiting and state.phase is not Phase.GAME_OVER:
        return ""
    turn = state.turns[-1]
    lost = f" and loses {turn.penalty}" if turn.penalty else ""
    threw = f" (threw {_faces(turn.last_roll)})" if turn.last_roll else ""
    after = "the game is over" if state.phase is Phase.GAME_OVER else f"{state.current} throws next"
    if not detail:
        return f"FARKLE - {turn.player} scores nothing; {after}"
    return f"FARKLE - {turn.player} scores nothing this turn{lost}{threw}; {after}"


def named_dice(reading: Reading | None) -> str:
    """The dice of ``reading`` that are not scored, by number: ``"throw again: #2 leaning; check: #5 unclear"``.

    The numbers are the dice's places in the reading, counted from 1, and the overlay tags the
    same dice with the same numbers ("#2 LEAN"), so a die named here is found on the picture.
    """
    if reading is None:
        return ""
    why = {DieStatus.COCKED: "leaning", DieStatus.OFF_TRAY: "off the tray"}
    again = [f"#{i + 1} {why[d.status]}" for i, d in enumerate(reading.dice()) if d.status in why]
    check = [f"#{i + 1} unclear" for i, d in enumerate(reading.dice()) if d.status is DieStatus.UNCERTAIN]
    parts = ([f"throw again: {', '.join(again)}"] if again else []) + ([f"check: {', '.join(check)}"] if check else [])
    return "; ".join(parts)


def _wrapped(lines: list[str]) -> list[str]:
    """Each line cut at spaces to :data:`PANEL_COLUMNS`; a longer word (a file's path) is cut where it must be."""
    out: list[str] = []
    for line in lines:
        for part in line.split("\n"):
            if len(part) <= PANEL_COLUMNS:
                out.append(part)
                continue
            indent = " " * (len(part) - len(part.lstrip()) + 2)
            out += textwrap.wrap(part, PANEL_COLUMNS, subsequent_indent=indent, break_on_hyphens=False)
    return out


def panel_lines(view: TableView, news: str = "") -> list[str]:
    """The side panel: news, whose turn, the roll, options (best marked), advice, scoreboard, key help.

    Every line fits :data:`PANEL_COLUMNS`, the panel's width: the window never cuts one off.

    Args:
        view: the table's view.
        news: a line to lead with (:func:`farkle_news`).
    """
    lines: list[str] = [news, ""] if news else []
    if view.game_phase is Phase.GAME_OVER:
        lines.append(f"GAME OVER - won by {' and '.join(view.winners)}")
    elif view.game_phase is Phase.ROLL_OFF and view.roll_off:
        lines.append(f"roll-off: {view.roll_off[0]} throws one die (the highest starts)")
    elif view.player is not None:
        lines.append(f"{view.player}'s turn - turn total {view.turn_total}")
        if view.dice_to_throw:
            lines.append(f"throw {view.dice_to_throw} dice")
    if named := named_dice(view.reading):
        lines.append(named)
    if view.roll:
        lines.append(f"roll: {_faces(view.roll)}")
        best = view.advice.keep if view.advice is not None else ()
        lines.append("options:")
        for option in view.options[:8]:
            mark = "*" if option.keep == best else " "
            hot = " hot dice" if option.hot_dice else f" ({option.dice_left} left)"
            lines.append(f" {mark} keep {_faces(option.keep):<11} {option.points:>5}{hot}")
        if len(view.options) > 8:
            lines.append(f"   ... {len(view.options) - 8} more")
    if view.advice is not None and view.advice.keep:
        lines.append(f"advice: keep {_faces(view.advice.keep)}, then {(view.next_action or '').upper()}")
    elif view.next_action is not None:
        lines.append(f"advice: {view.next_action.upper()}")
    if view.expected is not None and view.next_action is not None:
        lines.append(f"expected turn value: {view.expected:.0f}")
    if view.pass_advice is not None:
        lines.append(f"passed: {view.pass_advice.text}")
    if view.selected:
        lines.append(f"picked: {_faces(view.selected)} (k keeps them)")
    lines.append("")
    lines.append("scores:")
    for line in view.scores:
        board = "" if line.on_board else "  (not on the board)"
        lines.append(f" {'>' if line.current else ' '} {line.player:<12} {line.score:>6}{board}")
    if view.last_round:
        lines.append(view.last_round)
    lines.append("")
    if view.message:
        lines.append(view.message)
    lines.append(KEY_HELP)
    return _wrapped(lines)


def render_scene(
    image: npt.NDArray[np.uint8],
    view: TableView,
    max_width: int = 960,
    marks: Sequence[tuple[float, float]] = (),
    news: str = "",
    *,
    numbered: bool = False,
    picked: tuple[float, float, float, float] | None = None,
) -> npt.NDArray[np.uint8]:
    """The frame with the overlay: dice by status, faces, the keep highlighted, RETHROW, a status line.

    ``marks`` are tray corners clicked so far (frame pixels), drawn as dots while marking;
    ``news`` (a farkle, :func:`farkle_news`) is a banner across the foot of the picture.
    ``numbered`` tags every die with its number (while a die to correct is picked by it), and
    ``picked`` (frame pixels) outlines the die being corrected.
    """
    reading = view.reading if view.reading is not None else Reading.empty((image.shape[1], image.shape[0]))
    status = "SETTLED, CORRECTED" if view.corrected else view.settle.value.upper()
    if view.settle.value == "settling":
        status += f" {view.progress:.0%}"
    text = [status] + ([view.message] if view.message else [])
    scene = annotate_reading(image, reading, keep_faces=view.keep_faces, text_lines=text, number_all=numbered)
    for x, y in marks:
        cv2.circle(scene, (round(x), round(y)), 6, (15, 196, 241), -1, cv2.LINE_AA)
    if picked is not None:
        x1, y1, x2, y2 = (round(v) for v in picked)
        cv2.rectangle(scene, (x1 - 4, y1 - 4), (x2 + 4, y2 + 4), (255, 255, 255), 2, cv2.LINE_AA)
    if news:
        banner = news.encode("ascii", "replace").decode()  # Hershey fonts draw ASCII only
        width, _ = tag_size(banner, 1.0)
        scale = min(max(0.5, scene.shape[1] / 1100), 0.98 * scene.shape[1] / width)  # as large as fits across
        draw_label(scene, banner, (0, scene.shape[0]), STATUS_COLORS[DieStatus.OFF_TRAY], scale)
    if scene.shape[1] <= max_width:
        return scene
    height = max(1, round(scene.shape[0] * max_width / scene.shape[1]))
    return np.asarray(cv2.resize(scene, (max_width, height), interpolation=cv2.INTER_AREA), dtype=np.uint8)


def ppm_bytes(image: npt.NDArray[np.uint8]) -> bytes:
    """A BGR image as binary PPM (P6), which ``tk.PhotoImage(data=...)`` reads without PIL."""
    rgb = np.ascontiguousarray(image[:, :, ::-1])
    return f"P6 {rgb.shape[1]} {rgb.shape[0]} 255\n".encode("ascii") + rgb.tobytes()
