"""A profile's corrections as a YOLO folder the training commands read: each crop and its label.

``OUT/images/ID.png`` is the correction's crop, ``OUT/labels/ID.txt`` one line
``class cx cy w h status`` for the die inside it: ``class`` = face - 1, or 6 for a die leaning
with no face up; ``status`` ``ok``, ``cocked`` or ``off_tray``. A crop taught as no die gets an
empty label file (a picture holding no die); a die off the tray whose face was never given has
no class to write and is left out.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from farklecam.errors import ProfileError
from farklecam.service.profiles.labels import COCKED_CLASS
from farklecam.vision.faces.classifier import COCKED_NAME, NOT_DIE_NAME
from farklecam.vision.profiles.profile import OFF_TRAY, Correction, Profile

__all__ = ["Exported", "export_profile", "label_line"]


@dataclass(frozen=True, slots=True)
class Exported:
    """How many corrections were written, and how many had no class to write."""

    written: int
    left_out: int


def label_line(correction: Correction) -> str | None:
    """The correction's label line in its own crop ('' for no die; None where no class can be written)."""
    if correction.truth == NOT_DIE_NAME:
        return ""
    x1, y1, x2, y2 = correction.box
    w, h = x2 - x1, y2 - y1
    side = max(w, h, 1e-6) * (1 + 2 * correction.crop_context)  # the square crop around the box's centre
    size = f"0.500000 0.500000 {w / side:.6f} {h / side:.6f}"
    if correction.truth == COCKED_NAME:
        return f"{COCKED_CLASS} {size} {COCKED_NAME}"
    if correction.face is None:
        return None
    status = OFF_TRAY if correction.truth == OFF_TRAY else "ok"
    return f"{correction.face - 1} {size} {status}"


def export_profile(profile: Profile, out: Path) -> Exported:
    """Write every correction of ``profile`` under ``out`` (``images/`` and ``labels/``).

    Raises:
        ProfileError: a crop is missing, or ``out`` cannot be written.
    """
    written = left_out = 0
    try:
        (out / "images").mkdir(parents=True, exist_ok=True)
        (out / "labels").mkdir(parents=True, exist_ok=True)
        for correction in profile.corrections:
            line = label_line(correction)
            if line is None:
                left_out += 1
                continue
            crop = profile.folder / correction.crop
            if not crop.is_file():
                raise ProfileError(f"profile {profile.name!r}: crop {correction.crop} is missing")
            shutil.copyfile(crop, out / "images" / f"{correction.id}.png")
            (out / "labels" / f"{correction.id}.txt").write_text(line + "\n" if line else "")
            written += 1
    except OSError as exc:
        raise ProfileError(f"cannot export profile {profile.name!r} to {out}: {exc}") from exc
    return Exported(written, left_out)
