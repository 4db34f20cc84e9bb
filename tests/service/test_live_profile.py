"""``farklecam live --profile NAME``: the profile reaches the live reader; an unknown one is one line, status 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from farklecam.service.cli import main
from farklecam.service.live import app as live_app
from farklecam.service.live.app import LiveOptions
from farklecam.service.profiles.store import PROFILES_ENV

ROOT = Path(__file__).resolve().parents[2]


def test_live_hands_the_named_profile_to_its_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PROFILES_ENV, str(tmp_path / "profiles"))
    assert main(["live", "--profile", "nope", "--video", "x.mp4"]) == 2
    assert "no profile 'nope'" in capsys.readouterr().err
    labels = tmp_path / "labelled"
    (labels / "images").mkdir(parents=True)
    (labels / "labels").mkdir()
    shutil.copy(ROOT / "examples" / "tray_ok.jpg", labels / "images")
    shutil.copy(ROOT / "examples" / "labels" / "tray_ok.txt", labels / "labels")
    assert main(["teach", "t", "--labels", str(labels)]) == 0
    seen: list[LiveOptions] = []
    monkeypatch.setattr(live_app, "run_live", lambda options: seen.append(options) or 0)
    assert main(["live", "--profile", "t", "--video", "x.mp4"]) == 0
    assert seen[0].profile is not None and len(seen[0].profile) == 5
