"""The settle layer on a rendered throw (pybullet): tumbling dice, a glare frame, a hand, the pickup.

The frames are the synthetic generator's; the reader is built from its ground-truth
labels with a real reader's failure modes added: a die that moved since the last
frame is read as a random face (motion blur), and the glare frame misreads a die.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from farklecam.vision.camera.sources import Frame
from farklecam.vision.reading import Reading
from farklecam.vision.settle.detector import SettleDetector, SettlePhase

pytest.importorskip("pybullet", reason="the synthetic renderer needs pybullet (synth extra)")

from farklecam.datasets.synthetic import render_throw_sequence

SIZE = (160, 120)


class LabelReader:
    """Readings from the sidecar of the frame being read, with motion blur and glare errors."""

    def __init__(self) -> None:
        self.sidecar: dict[str, Any] = {"dice": []}
        self.previous: dict[str, Any] = {"dice": []}
        self.rng = np.random.default_rng(0)
        self.glare_reads = 0

    def read(self, frame: np.ndarray, /) -> Reading:
        dice = self.sidecar["dice"]
        if not dice:
            return Reading.empty(SIZE)
        before = [d["box"] for d in self.previous["dice"]]
        faces = []
        for die in dice:
            moved = not any(np.abs(np.subtract(die["box"], b)).max() < 1.0 for b in before)
            faces.append(int(self.rng.integers(1, 7)) if moved else die["face"])
        if self.sidecar["bad"] == "glare":
            faces[0] = faces[0] % 6 + 1
            self.glare_reads += 1
        return Reading(
            xyxy=np.array([d["box"] for d in dice], np.float32) + self.rng.normal(0, 0.3, (len(dice), 4)),
            confidence=[0.9] * len(dice),
            face=[0 if d["status"] == "cocked" else f for d, f in zip(dice, faces, strict=True)],
            face_confidence=[0.9] * len(dice),
            status=[d["status"] for d in dice],
            image_size=SIZE,
        )


@pytest.fixture(scope="module")
def clip() -> list[tuple[np.ndarray, dict[str, Any]]]:
    return list(render_throw_sequence(2, width=SIZE[0], height=SIZE[1], fps=10.0, settled_seconds=1.0))


def test_a_rendered_throw_settles_once_with_the_true_faces(clip: list[tuple[np.ndarray, dict[str, Any]]]) -> None:
    reader, detector = LabelReader(), SettleDetector()
    results: list[tuple[dict[str, Any], Reading]] = []
    phases = []
    for image, sidecar in clip:
        reader.previous, reader.sidecar = reader.sidecar, sidecar
        state = detector.step(Frame(image, sidecar["frame"], sidecar["time_s"]), reader)
        phases.append((sidecar, state.phase))
        if state.is_new and state.reading is not None:
            results.append((sidecar, state.reading))
    assert len(results) == 1, [s["phase"] for s, _ in results]
    sidecar, reading = results[0]
    assert sidecar["phase"] == "settled"
    truth = sidecar["dice"]
    assert reading.faces == tuple(sorted(d["face"] for d in truth if d["status"] == "ok"))
    assert reading.rethrow == sum(d["status"] != "ok" for d in truth)
    # the overexposed glare frame is motion to the gate (never read), and the pickup empties the tray
    assert [p for s, p in phases if s["bad"] == "glare"] == [SettlePhase.MOVING]
    assert phases[-1][1] is SettlePhase.IDLE


def test_a_rendered_game_reports_each_throw_once_and_never_lifted_dice() -> None:
    """Throw after throw with set-aside dice lifted out, hands, glare, slow last dice: one report per throw."""
    from farklecam.datasets.synthetic.sequence import ThrowTruth, render_game_video

    truths: list[ThrowTruth] = []
    reader, detector = LabelReader(), SettleDetector()
    reports: list[tuple[dict[str, Any], Reading]] = []
    for image, sidecar in render_game_video(11, throws=3, width=SIZE[0], height=SIZE[1], fps=10.0, truths=truths):
        reader.previous, reader.sidecar = reader.sidecar, sidecar
        state = detector.step(Frame(image, sidecar["frame"], sidecar["time_s"]), reader)
        if state.is_new and state.reading is not None:
            reports.append((sidecar, state.reading))
    assert [s["throw"] for s, _ in reports] == [t.throw for t in truths] == [0, 1, 2]
    for (sidecar, reading), truth in zip(reports, truths, strict=True):
        assert (reading.faces, reading.rethrow) == (truth.faces, truth.rethrow)
        assert 0 <= sidecar["time_s"] - truth.rest_time <= 1.0  # latched within a second of the rest
