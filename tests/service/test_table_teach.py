"""A die corrected at the table teaches the table's profile, cut from the frame the throw settled on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from farklecam.scoring.presets import get_rules
from farklecam.service.corrections import DieCorrection
from farklecam.service.live.demo import DemoTable, DemoThrow
from farklecam.service.profiles.store import PROFILES_ENV, ProfileStore
from farklecam.service.profiles.teach_from_table import profile_truth, teaching_hook
from farklecam.service.table import TableSession
from farklecam.vision.profiles.adapter import ProfileAdapter
from farklecam.vision.reader import DiceReader
from farklecam.vision.reading import Reading

BOXED = get_rules("boxed")


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return DiceReader()


@pytest.fixture
def adapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: DiceReader) -> ProfileAdapter:
    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    return reader.bind_profile(ProfileStore().open_or_create("table"))


def settled_session(on_correct: object) -> TableSession:
    demo = DemoTable([DemoThrow((1, 5, 2, 3, 4, 6), glare=False)], size=(640, 480), seed=2)
    session = TableSession(BOXED, ["Ann", "Bob"], reader=demo, on_correct=on_correct)  # type: ignore[arg-type]
    for frame in demo:
        session.on_frame(frame)
    assert session.settled_throw is not None and len(session.game.events) == 1
    return session


def test_a_correction_of_a_camera_throw_is_kept_in_the_profile(adapter: ProfileAdapter) -> None:
    handed: list[DieCorrection] = []
    teach = teaching_hook(adapter, source="camera 0")
    session = settled_session(lambda c: (handed.append(c), teach(c)))
    throw = session.settled_throw
    assert throw is not None
    told = 1 + int(throw.face[0]) % 6
    session.correct(0, "face", told)
    assert "not handed on" not in session.view().message
    [correction] = handed
    assert correction.frame is not None and correction.frame.shape == (480, 640, 3)  # the full frame, not the picture
    kept = ProfileStore().open("table").corrections  # on disk, for the next read and other processes
    assert [(c.truth, c.face, c.source, c.frame_size) for c in kept] == [(str(told), told, "camera 0", (640, 480))]
    np.testing.assert_allclose(kept[0].box, throw.xyxy[0], atol=0.01)  # kept to a hundredth of a pixel
    shown = int(throw.face[1])
    session.correct(1, "off-tray")  # a die off the tray still teaches the face it showed
    assert [(c.truth, c.face) for c in ProfileStore().open("table").corrections][1:] == [("off_tray", shown)]
    assert len(adapter.profile) == 2


def test_a_correction_without_a_frame_teaches_nothing(adapter: ProfileAdapter) -> None:
    session = TableSession(BOXED, ["Ann", "Bob"], on_correct=teaching_hook(adapter))
    session.throw(
        Reading(
            xyxy=[[40.0 * i, 0.0, 40.0 * i + 30, 30.0] for i in range(6)],
            confidence=[0.9] * 6,
            face=[1, 6, 2, 3, 5, 5],
            face_confidence=[0.95] * 6,
            status=["ok"] * 6,
            image_size=(320, 240),
        )
    )
    view = session.correct(1, "face", 5)
    assert view.message == "die #2 is a 5: Ann threw 1 2 3 5 5 5" and len(adapter.profile) == 0


@pytest.mark.parametrize(
    ("fix", "face", "truth"),
    [("face", 4, ("4", None)), ("add", 2, ("2", None)), ("cocked", None, ("cocked", None)),
     ("not-a-die", None, ("not_die", None)), ("off-tray", None, ("off_tray", 5))],
)  # fmt: skip
def test_each_fix_becomes_its_profile_truth(fix: str, face: int | None, truth: tuple[str, int | None]) -> None:
    read = Reading(xyxy=[[0.0, 0.0, 30.0, 30.0]], confidence=[0.9], face=[5], face_confidence=[0.9], status=["ok"])
    index = None if fix == "add" else 0
    assert profile_truth(DieCorrection(fix, index, face, (0.0, 0.0, 30.0, 30.0), read)) == truth
