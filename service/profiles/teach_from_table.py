"""Teaching a profile from the table: each die the players correct becomes a correction of the table's profile.

The players' word on a die of a settled throw is the best label a table ever gets: it names a
die the reader got wrong, on this table's dice, under this table's light. Kept in the profile
the table reads with, the same die is read right from the next read on. Only a correction that
carries the frame the throw settled on can teach (the profile keeps the die's pixels); one
entered without a camera frame is passed over.
"""

from __future__ import annotations

from collections.abc import Callable

from farklecam.service.corrections import CorrectionHook, DieCorrection
from farklecam.vision.faces.classifier import COCKED_NAME, NOT_DIE_NAME
from farklecam.vision.profiles.adapter import ProfileAdapter
from farklecam.vision.profiles.profile import OFF_TRAY

__all__ = ["profile_truth", "teach_correction", "teaching_hook"]

#: The table's word for a die that is no face (:data:`~farklecam.scoring.actions.CORRECTION_FIXES`) -> the profile's.
_TRUTH_OF_FIX = {"cocked": COCKED_NAME, "off-tray": OFF_TRAY, "not-a-die": NOT_DIE_NAME}


def profile_truth(correction: DieCorrection) -> tuple[str, int | None]:
    """What the profile keeps of ``correction``: its truth, and the face a die off the tray showed.

    The truth is one of :data:`~farklecam.vision.profiles.profile.TRUTHS`. A die off the tray still
    teaches its face, where the reading had one (a die read as leaning had none).

    Raises:
        ValueError: a fix the table does not make, or a face or add without its face.
    """
    if correction.fix in ("face", "add"):
        if correction.face is None or not 1 <= correction.face <= 6:
            raise ValueError(f"a {correction.fix!r} correction needs a face 1-6, got {correction.face!r}")
        return str(correction.face), None
    truth = _TRUTH_OF_FIX.get(correction.fix)
    if truth is None:
        raise ValueError(f"no profile truth for the correction {correction.fix!r}")
    face: int | None = None
    if truth == OFF_TRAY and correction.index is not None:
        read = int(correction.reading.face[correction.index])
        face = read if 1 <= read <= 6 else None  # a leaning die read before shows no face
    return truth, face


def teach_correction(adapter: ProfileAdapter, correction: DieCorrection, *, source: str | None = None) -> bool:
    """Keep ``correction`` in the adapter's profile, cut from the frame its throw settled on.

    Args:
        adapter: the table's profile, bound to the classifier that reads the table.
        correction: what the players said of one die.
        source: where the frame came from, kept with the correction (a camera, a game).

    Returns:
        Whether it was kept: False for a correction without a frame (a throw entered by hand).

    Raises:
        ValueError: a correction the profile cannot keep (:func:`profile_truth`).
        ProfileError: the profile cannot be written.
    """
    if correction.frame is None:
        return False
    truth, face = profile_truth(correction)
    adapter.correct(correction.frame, [correction.box], [truth], faces=[face], source=source)
    return True


def teaching_hook(
    adapter: ProfileAdapter | Callable[[], ProfileAdapter | None], source: str | None = None
) -> CorrectionHook:
    """A :attr:`~farklecam.service.table.TableSession.on_correct` that teaches every correction to a profile.

    Args:
        adapter: the profile, or a function giving it when a correction comes (a reader loaded on first
            use binds its profile only then); a function that gives None teaches nothing.
        source: kept with every correction (:func:`teach_correction`).
    """

    def teach(correction: DieCorrection) -> None:
        if correction.frame is None:  # nothing to cut a die from: no reason to load the reader for it
            return
        bound = adapter if isinstance(adapter, ProfileAdapter) else adapter()
        if bound is not None:
            teach_correction(bound, correction, source=source)

    return teach
