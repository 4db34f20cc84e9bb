"""The Tk window of ``farklecam live``: the annotated camera picture, the score panel and the legend.

Frames are read, settled and drawn on a worker thread (the reader may take a
tenth of a second); the Tk thread only swaps in the newest picture every few
milliseconds and answers keys, so the window never freezes and never lags
behind the table. Pictures go to Tk as binary PPM (``tk.PhotoImage(data=...)``),
so no PIL is needed. A camera that fails mid-game is shown in the panel and the
window stays open: the game is saved and the keys still work.

The panel's lines are wrapped to its width
(:data:`~farklecam.service.live.controller.PANEL_COLUMNS`), and the picture is shown smaller
where the screen is too narrow for both, so no text is ever cut off. Under the
panel the legend says what each mark on the dice means
(:data:`farklecam.service.overlay.legend.LEGEND`).
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from farklecam.errors import FarkleError
from farklecam.service.live.controller import PANEL_COLUMNS, LiveController, panel_lines, ppm_bytes, render_scene
from farklecam.service.overlay.base import ink_for
from farklecam.service.overlay.legend import LEGEND, hex_color
from farklecam.service.table import TableView
from farklecam.vision.camera.sources import Frame

if TYPE_CHECKING:
    import tkinter

__all__ = ["LiveWindow"]

_POLL_MS = 15
_PANEL_PAD = 8
#: The widest the picture is shown, and the narrowest where the screen is small.
_PICTURE_MAX, _PICTURE_MIN = 960, 320


class LiveWindow:
    """A Tk window playing ``frames`` through the controller's table session.

    Args:
        controller: keys and table.
        frames: the frame stream (an opened camera or video source, or the demo table).
        title: window title.
        pace: play frames no faster than their time stamps (videos, the demo); False for a live camera.

    Raises:
        FarkleError: no display to open a window on.
    """

    def __init__(
        self, controller: LiveController, frames: Iterable[Frame], *, title: str = "farklecam", pace: bool = False
    ) -> None:
        import tkinter as tk

        self._tk = tk
        try:
            self.root = tk.Tk()
        except tk.TclError as exc:
            raise FarkleError(f"cannot open a window ({exc}); use `farklecam read VIDEO` without a display") from exc
        self.controller = controller
        self.frames = frames
        self.pace = pace
        self.root.title(title)
        self.picture = tk.Label(self.root, background="black", borderwidth=0, highlightthickness=0)
        self.picture.pack(side="left", anchor="n")
        side = tk.Frame(self.root)
        side.pack(side="left", fill="both", expand=True, anchor="n")
        self.panel = tk.Label(
            side, justify="left", anchor="nw", font="TkFixedFont", width=PANEL_COLUMNS, padx=_PANEL_PAD, pady=_PANEL_PAD
        )
        self.panel.pack(side="top", fill="both", expand=True)
        self.legend = self._legend(side)
        self.legend.pack(side="top", anchor="w", padx=_PANEL_PAD, pady=(0, _PANEL_PAD))
        self._max_width = self._picture_width()
        self.root.bind("<Key>", self._on_key)
        self.picture.bind("<Button-1>", self._on_click)
        self.root.protocol("WM_DELETE_WINDOW", self.close)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._latest: tuple[bytes, TableView] | None = None
        self._scale = 1.0  # frame pixels per shown pixel (big frames are shown smaller)
        self._news: str | None = None
        self._failure: BaseException | None = None
        self._photo: object | None = None
        self._worker = threading.Thread(target=self._pump, name="farklecam-live", daemon=True)
        self.frames_shown = 0

    def _legend(self, parent: tkinter.Misc) -> tkinter.Frame:
        """What each mark on the dice means: the tag as drawn, in its colour, and a few words."""
        tk = self._tk
        frame: tkinter.Frame = tk.Frame(parent)
        tk.Label(frame, text="marks on the dice:", font="TkFixedFont").grid(row=0, column=0, columnspan=2, sticky="w")
        for row, entry in enumerate(LEGEND, start=1):
            tag = tk.Label(
                frame,
                text=entry.tag,
                font="TkFixedFont",
                background=hex_color(entry.color),
                foreground=hex_color(ink_for(entry.color)),
                padx=4,
            )
            tag.grid(row=row, column=0, sticky="w", pady=1)
            tk.Label(frame, text=entry.meaning, font="TkFixedFont").grid(row=row, column=1, sticky="w", padx=(6, 0))
        return frame

    def _picture_width(self) -> int:
        """The widest the picture may be shown so that the panel still fits on the screen beside it."""
        import tkinter.font

        char = tkinter.font.nametofont("TkFixedFont").measure("0")
        panel = char * PANEL_COLUMNS + 2 * _PANEL_PAD + 16  # the frame's borders, a little slack
        room = self.root.winfo_screenwidth() - panel
        return max(_PICTURE_MIN, min(_PICTURE_MAX, room))

    def _show_panel(self, lines: list[str]) -> None:
        """Show the panel's lines (:func:`panel_lines` wraps them to the panel's width)."""
        self.panel.configure(text="\n".join(lines))

    def run(self) -> None:
        """Show the window until q or the close button; re-raises an unexpected worker failure."""
        self._worker.start()
        self.refresh()
        self.root.after(100, self.root.focus_force)  # keys work at once, even without a window manager
        self.root.after(_POLL_MS, self._poll)
        self.root.mainloop()
        self._stop.set()
        self._worker.join()  # it checks the stop flag every frame
        self._release_tk()
        if self._failure is not None:
            raise self._failure

    def close(self) -> None:
        """Stop reading frames and close the window."""
        self._stop.set()
        self.root.quit()

    def _release_tk(self) -> None:
        """Destroy every Tk object here, on the Tk thread.

        Tcl aborts the process when its objects are freed from another thread, and the
        garbage collector may run on any thread; so nothing Tk is left for it to find.
        """
        self.picture.configure(image="")
        self._photo = None
        self.root.destroy()
        gc.collect()

    # ------------------------------------------------------------------ worker thread
    def _pump(self) -> None:
        session = self.controller.session
        start = time.monotonic()
        try:
            for frame in self.frames:
                if self._stop.is_set():
                    return
                view = session.on_frame(frame)
                marks = tuple(self.controller.marks or ())
                news = self.controller.news(detail=False)
                numbered, picked = self.controller.correcting is not None, self.controller.picked_box()
                scene = render_scene(frame.image, view, self._max_width, marks, news, numbered=numbered, picked=picked)
                picture = ppm_bytes(scene)
                with self._lock:
                    self._latest = (picture, view)
                    self._scale = frame.image.shape[1] / scene.shape[1]
                if self.pace and (wait := start + frame.timestamp - time.monotonic()) > 0:
                    self._stop.wait(wait)
            news = "the video has ended; the keys still work (q quits)"
        except FarkleError as exc:  # an unplugged camera: tell the table, keep the game and the window
            news = f"{exc}. The game is saved; the keys still work (q quits)"
        except BaseException as exc:  # not ours to hide: shown, then re-raised by run()
            self._failure = exc
            news = f"internal error: {exc!r}"
        with self._lock:
            self._news = news

    # ------------------------------------------------------------------ Tk thread
    def _poll(self) -> None:
        if self._stop.is_set():
            return
        with self._lock:
            latest, self._latest = self._latest, None
            news, self._news = self._news, None
        if news is not None:
            self.controller.session.notify(news)
            self.refresh()
        if latest is not None:
            picture, view = latest
            self._photo = self._tk.PhotoImage(data=picture, format="PPM")
            self.picture.configure(image=self._photo)
            self._show_panel(panel_lines(view, self.controller.news()))
            self.frames_shown += 1
        self.root.after(_POLL_MS, self._poll)

    def refresh(self) -> None:
        """Redraw the panel from the session now (after a key)."""
        self._show_panel(panel_lines(self.controller.session.view(), self.controller.news()))

    def _on_click(self, event: object) -> None:
        """A click on the picture, in frame pixels: a tray corner while marking (``t``), else a die to correct."""
        with self._lock:
            scale = self._scale
        self.controller.click(float(getattr(event, "x", 0)) * scale, float(getattr(event, "y", 0)) * scale)
        self.refresh()

    def _on_key(self, event: object) -> None:
        key = str(getattr(event, "keysym", "") or getattr(event, "char", ""))
        if not self.controller.handle_key(key):
            self.close()
            return
        self.refresh()
