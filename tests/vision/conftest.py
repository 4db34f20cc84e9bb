"""Shared fixtures for the vision tests: tiny contract-honouring ONNX models and drawn dice."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.vision.fakes import make_classifier, make_detector, raw_head

#: Pip centres of each face on a unit square (x, y in 0..1).
PIP_LAYOUT = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.5), (0.75, 0.5), (0.25, 0.75), (0.75, 0.75)],
}


def draw_die(
    image: np.ndarray,
    face: int,
    x: int,
    y: int,
    side: int,
    body: tuple[int, int, int] = (235, 235, 235),
    pip: tuple[int, int, int] = (20, 20, 20),
) -> tuple[int, int, int, int]:
    """Draw a die seen from above onto ``image`` (in place); returns its box."""
    cv2.rectangle(image, (x, y), (x + side, y + side), body, -1)
    for px, py in PIP_LAYOUT[face]:
        centre = (round(x + px * side), round(y + py * side))
        cv2.circle(image, centre, max(2, round(side * 0.09)), pip, -1, cv2.LINE_AA)
    return x, y, x + side, y + side


@pytest.fixture(scope="session")
def onnx_available() -> None:
    pytest.importorskip("onnx", reason="the fake models are built with the onnx package (training extra)")


@pytest.fixture(scope="session")
def fake_model_dir(tmp_path_factory: pytest.TempPathFactory, onnx_available: None) -> Path:
    """A model folder whose detector always finds two dice (in a 64 px input) and whose
    classifier reads a crop's colour: red "1", green "2", blue "3", black "cocked".

    In a 128x128 frame the dice are at (24, 24, 40, 40) and (72, 72, 88, 88).
    """
    root = tmp_path_factory.mktemp("models")
    make_detector(root / "die_detector.onnx", raw_head([[16, 16, 8, 8], [40, 40, 8, 8]], [0.9, 0.8]))
    make_classifier(root / "face_classifier.onnx")
    return root


@pytest.fixture(scope="session")
def leaning_scenes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve generated scenes, all leaning-rich, with sidecars: the bench scripts' tests read them.

    Twelve split both ways by the file-name hash (training part and held-out part).
    """
    from farklecam.datasets.synthetic.__main__ import main as generate

    out = tmp_path_factory.mktemp("leaning_scenes")
    assert generate(["--out", str(out), "--count", "12", "--seed", "13", "--lean-rate", "1"]) == 0
    return out
