"""python -m farklecam.datasets.rebuild: which folders it makes, that it resumes and keeps, and that its recipes
agree."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from farklecam.datasets.rebuild import (
    OUT_OF_WORLD,
    RUNS,
    NamedRun,
    RendererRun,
    main,
    plan,
    rebuild_out_of_world,
    rebuild_scenes,
)
from farklecam.datasets.synthetic.dataset import READY_FILE, SceneRun


def test_the_default_plan_is_evaluation_and_calibration_and_training_adds_the_rest() -> None:
    default = {r.folder for r in plan()}
    assert default == {r.folder for r in RUNS if r.role in ("evaluation", "calibration")}
    assert {r.folder for r in plan(training=True)} == {r.folder for r in RUNS}
    assert [r.folder for r in plan(only=["calib_lean"])] == ["calib_lean"]
    with pytest.raises(ValueError, match="no generated folder nope; one of"):
        plan(only=["nope", "calib_lean"])


def test_each_generated_evaluation_set_is_the_holdout_of_its_training_run() -> None:
    # farklecam.models.evaluate.run's numbers mean "never trained on" only while the two recipes agree.
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


def test_the_out_of_world_sets_are_made_as_the_model_card_says() -> None:
    card = (Path(__file__).resolve().parents[2] / "models" / "README.md").read_text()
    for run in OUT_OF_WORLD:
        assert f"-m {run.module} --out data/{run.folder} --count {run.count} --seed {run.seed}" in card


def test_an_out_of_world_set_is_kept_when_ready_skipped_without_its_venv_and_a_failure_named(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    no_venv = RendererRun("eval/b", "farklecam.datasets.blender", seed=40, count=2, python="no-such-venv/bin/python")
    broken = RendererRun("eval/x", "farklecam.datasets.no_such_generator", seed=1, count=2)
    result = rebuild_out_of_world(tmp_path, [no_venv, broken], root)
    assert result["eval/b"].startswith("skipped: no no-such-venv/bin/python")
    assert result["eval/x"] == "failed: farklecam.datasets.no_such_generator exited 1"
    (tmp_path / "eval" / "b").mkdir(parents=True)
    (tmp_path / "eval" / "b" / READY_FILE).write_text("seed=40 start=0 count=2 samples=16 size=640x480\n")
    assert rebuild_out_of_world(tmp_path, [no_venv], root) == {"eval/b": "kept"}
    (tmp_path / "eval" / "b" / READY_FILE).write_text("seed=40 start=150 count=2 samples=16 size=640x480\n")
    assert rebuild_out_of_world(tmp_path, [no_venv], root)["eval/b"].startswith("skipped")  # a part is not the run
