"""What the live window does, without the window: keys to commands, views to pixels and text.

Kept apart from Tk so it can be tested headless: :class:`LiveController` turns a
key into a :class:`~farklecam.service.table.TableSession` command (an illegal one becomes the
on-screen message, never an exception in the Tk loop), :func:`panel_lines` writes
the side panel, :func:`render_scene` draws the overlay and :func:`ppm_bytes` makes
the bytes ``tk.PhotoImage(data=...)`` shows without PIL.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import FarkleError
from farklecam.scoring.gamestate import Phase
from farklecam.service.overlay import annotate_reading
from farklecam.service.table import TableSession, TableView
from farklecam.vision.reading import Reading

__all__ = ["KEY_HELP", "LiveController", "panel_lines", "ppm_bytes", "render_scene"]

#: One line of key help for the panel.
KEY_HELP = (
    "Enter: take advice  1-6: pick dice  k: keep  b: bank  r: roll on  u: undo  q: quit\n"
    "t: mark the tray's corners (click them)  T: forget them"
)

_ENTER = frozenset({"Return", "KP_Enter", "Enter", "\r", "\n"})
_QUIT = frozenset({"q", "Q", "Escape"})


class LiveController:
    """Keys in, table commands out.

    Args:
        session: the table being played.
    """

    def __init__(self, session: TableSession) -> None:
        self.session = session
        self.marks: list[tuple[float, float]] | None = None  # tray corners clicked so far, while marking

    def handle_key(self, key: str) -> bool:
        """Run the command bound to ``key`` (a Tk keysym or a character); False means quit.

        Keys: Enter takes the advice (keep its dice, or bank / roll on), 1-6 pick dice of
        that face for the keep, k keeps the picked dice, b banks, r rolls on, u undoes,
        t marks the tray's corners (then clicks, see :meth:`mark`), T forgets them, q quits.
        Escape cancels marking, else quits.
        """
        session = self.session
        if self.marks is not None and key == "Escape":
            self.marks = None
            session.notify("tray marking cancelled")
            return True
        if key in _QUIT:
            return False
        if key == "t":
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


def panel_lines(view: TableView) -> list[str]:
    """The side panel: whose turn, the roll, scoring options (best marked), advice, scoreboard."""
    lines: list[str] = []
    if view.game_phase is Phase.GAME_OVER:
        lines.append(f"GAME OVER - won by {' and '.join(view.winners)}")
    elif view.game_phase is Phase.ROLL_OFF and view.roll_off:
        lines.append(f"roll-off: {view.roll_off[0]} throws one die (the highest starts)")
    elif view.player is not None:
        lines.append(f"{view.player}'s turn - turn total {view.turn_total}")
        if view.dice_to_throw:
            lines.append(f"throw {view.dice_to_throw} dice")
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
    return lines


def render_scene(
    image: npt.NDArray[np.uint8],
    view: TableView,
    max_width: int = 960,
    marks: Sequence[tuple[float, float]] = (),
) -> npt.NDArray[np.uint8]:
    """The frame with the overlay: dice by status, faces, the keep highlighted, RETHROW, a status line.

    ``marks`` are tray corners clicked so far (frame pixels), drawn as dots while marking.
    """
    reading = view.reading if view.reading is not None else Reading.empty((image.shape[1], image.shape[0]))
    status = view.settle.value.upper()
    if view.settle.value == "settling":
        status += f" {view.progress:.0%}"
    text = [status] + ([view.message] if view.message else [])
    scene = annotate_reading(image, reading, keep_faces=view.keep_faces, text_lines=text)
    for x, y in marks:
        cv2.circle(scene, (round(x), round(y)), 6, (15, 196, 241), -1, cv2.LINE_AA)
    if scene.shape[1] <= max_width:
        return scene
    height = max(1, round(scene.shape[0] * max_width / scene.shape[1]))
    return np.asarray(cv2.resize(scene, (max_width, height), interpolation=cv2.INTER_AREA), dtype=np.uint8)


def ppm_bytes(image: npt.NDArray[np.uint8]) -> bytes:
    """A BGR image as binary PPM (P6), which ``tk.PhotoImage(data=...)`` reads without PIL."""
    rgb = np.ascontiguousarray(image[:, :, ::-1])
    return f"P6 {rgb.shape[1]} {rgb.shape[0]} 255\n".encode("ascii") + rgb.tobytes()
