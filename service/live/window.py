"""The Tk window of ``farklecam live``: the annotated camera picture and the score panel.

Frames are read, settled and drawn on a worker thread (the reader may take a
tenth of a second); the Tk thread only swaps in the newest picture every few
milliseconds and answers keys, so the window never freezes and never lags
behind the table. Pictures go to Tk as binary PPM (``tk.PhotoImage(data=...)``),
so no PIL is needed. A camera that fails mid-game is shown in the panel and the
window stays open: the game is saved and the keys still work.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterable

from farklecam.errors import FarkleError
from farklecam.service.live.controller import LiveController, panel_lines, ppm_bytes, render_scene
from farklecam.service.table import TableView
from farklecam.vision.camera.sources import Frame

__all__ = ["LiveWindow"]

_POLL_MS = 15


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
        self.panel = tk.Label(self.root, justify="left", anchor="nw", font="TkFixedFont", width=60, padx=8, pady=8)
        self.panel.pack(side="left", fill="both", expand=True)
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
                scene = render_scene(frame.image, view, marks=tuple(self.controller.marks or ()))
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
            self.panel.configure(text="\n".join(panel_lines(view)))
            self.frames_shown += 1
        self.root.after(_POLL_MS, self._poll)

    def refresh(self) -> None:
        """Redraw the panel from the session now (after a key)."""
        self.panel.configure(text="\n".join(panel_lines(self.controller.session.view())))

    def _on_click(self, event: object) -> None:
        """A click on the picture: a tray corner while marking (``t``), in frame pixels."""
        with self._lock:
            scale = self._scale
        self.controller.mark(float(getattr(event, "x", 0)) * scale, float(getattr(event, "y", 0)) * scale)
        self.refresh()

    def _on_key(self, event: object) -> None:
        key = str(getattr(event, "keysym", "") or getattr(event, "char", ""))
        if not self.controller.handle_key(key):
            self.close()
            return
        self.refresh()
