"""The reader's settings: :class:`ReaderConfig`, everything a caller may set about a read.

A setting is here only if a user or a deployment has a reason to change it. The
constants that tune each step (the detector's second look at small dice, the
classifier's early stop, the margin that marks a die cut by the picture's edge...)
live with the code they tune, and the model card (``models/README.md``) cites the
measurement behind each default once. :func:`config_override` is the one parser of
``FIELD=VALUE`` behind every measuring tool's ``--set``.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

__all__ = ["ReaderConfig", "config_override"]


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """What a caller may set about a read; the defaults are what the model card measured."""

    det_conf: float | None = None  #: minimum detector score for a die; None: the model's own recommendation
    face_min_conf: float = 0.6  #: classifier confidence under which a face reads ``uncertain``
    cocked_min_conf: float = 0.5  #: confidence needed to call a die ``cocked`` (else ``uncertain``)
    off_tray_min_inside: float = 0.5  #: share of a die's footprint that must lie inside the tray
    face_views: int = 4  #: quarter turns of each crop the classifier averages (1, 2, 4 or 8)
    cocked_test: bool = True  #: judge leaning dice with the model folder's cocked test, where it has one
    vertical_search: bool = True  #: with no tray marked, find the camera's vertical from the dice themselves
    straight_down: bool = False  #: the camera looks straight down at the dice (an overhead rig, within ~5 deg)
    straight_down_check_deg: float | None = (
        10.0  #: doubt ``straight_down`` where the dice agree on a vertical this far off
    )
    auto_tray: bool = True  #: look for the tray in every frame when no outline was given
    aruco: bool = False  #: look for ArUco corner markers in every frame (about 5 ms a frame)
    threads: int | None = None  #: onnxruntime intra-op threads (None: automatic)

    def __post_init__(self) -> None:
        for name in ("det_conf", "face_min_conf", "cocked_min_conf", "off_tray_min_inside"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in 0..1, but got {value!r}")
        if self.face_views not in (1, 2, 4, 8):
            raise ValueError(f"face_views must be 1, 2, 4 or 8, but got {self.face_views!r}")
        if self.straight_down_check_deg is not None and not 0.0 < self.straight_down_check_deg < 90.0:
            raise ValueError(f"straight_down_check_deg must be in (0, 90), but got {self.straight_down_check_deg!r}")
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads must be >= 1 or None, but got {self.threads!r}")


def config_override(text: str) -> tuple[str, object]:
    """``FIELD=VALUE`` (a :class:`ReaderConfig` field, a Python literal) -> ``(field, value)``.

    The one parser behind every tool's ``--set`` (measurement scripts change one setting
    at a time); a ``ValueError`` names the fields or the literal expected.
    """
    field, _, value = text.partition("=")
    names = {f.name for f in dataclasses.fields(ReaderConfig)}
    if field not in names:
        raise ValueError(f"{field!r} is no ReaderConfig field; one of {', '.join(sorted(names))}")
    try:
        return field, ast.literal_eval(value)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"{value!r} is not a Python literal (e.g. 0.9, None, True)") from exc
