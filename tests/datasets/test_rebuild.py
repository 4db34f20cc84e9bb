"""python -m datasets.rebuild: which folders it makes, that it resumes and keeps, and that its recipes agree."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from datasets.rebuild import RUNS, NamedRun, main, plan, rebuild_scenes
from datasets.synthetic.dataset import READY_FILE, SceneRun


def test_the_default_plan_is_evaluation_and_calibration_and_training_adds_the_rest() -> None:
    default = {r.folder for r in plan()}
    assert default == {r.folder for r in RUNS if r.role in ("evaluation", "calibration")}
    assert {r.folder for r in plan(training=True)} == {r.folder for r in RUNS}
    assert [r.folder for r in plan(only=["calib_lean"])] == ["calib_lean"]
    with pytest.raises(ValueError, match="no generated folder nope; one of"):
        plan(only=["nope", "calib_lean"])


def test_each_generated_evaluation_set_is_the_holdout_of_its_training_run() -> None:
    # vision.evaluate.run's numbers mean "never trained on" only while the two recipes agree.
    training = {r.run.seed: r.run for r in RUNS if r.role == "training"}
    evaluation = [r for r in RUNS if r.role == "evaluation"]
    assert len(evaluation) == 3
    for named in evaluation:
        assert named.run.holdout_only
        assert dataclasses.replace(named.run, holdout_only=False) == training[named.run.seed]
    assert not any(r.run.holdout_only for r in RUNS if r.role != "evaluation")


def test_a_run_is_written_then_kept_and_a_changed_one_resumed(tmp_path: Path) -> None:
    small = NamedRun("tiny", "calibration", SceneRun(3, 4, width=64, height=48, version=1))
    assert rebuild_scenes(tmp_path, [small], jobs=1) == {"tiny": "written"}
    out = tmp_path / "tiny"
    images = sorted((out / "images").iterdir())
    assert len(images) == 4 and (out / READY_FILE).read_text() == small.run.ready_text()
    stamps = {p.name: p.stat().st_mtime_ns for p in images}

    assert rebuild_scenes(tmp_path, [small], jobs=1) == {"tiny": "kept"}
    assert {p.name: p.stat().st_mtime_ns for p in (out / "images").iterdir()} == stamps

    longer = dataclasses.replace(small, run=dataclasses.replace(small.run, count=6))
    assert rebuild_scenes(tmp_path, [longer], jobs=2) == {"tiny": "written"}
    after = {p.name: p.stat().st_mtime_ns for p in (out / "images").iterdir()}
    assert len(after) == 6 and all(after[name] == stamp for name, stamp in stamps.items())  # resumed, not redone
    assert (out / READY_FILE).read_text() == longer.run.ready_text()


@pytest.mark.parametrize("argv", [["--only", "nope"], ["--jobs", "0"]])
def test_the_command_refuses_what_it_cannot_do(tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--data", str(tmp_path), "--no-real", *argv])
    assert exc.value.code == 2
