"""A symbol face (a logo 6, a skull 1) reads ``uncertain``, never a number (farklecam.vision.faces.symbols)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from farklecam.vision.faces.symbols import MIN_SIDE_PX, symbol_faces
from farklecam.vision.reader import DiceReader, ReaderConfig
from farklecam.vision.reading import DieStatus, Reading
from tests.vision.conftest import draw_die
from tests.vision.test_reader import ScriptedClassifier


def paint_logo(image: np.ndarray, box: tuple[int, int, int, int], ink: tuple[int, int, int] = (20, 20, 20)) -> None:
    """Paint a maker's logo over a die's top face (in place): its pips covered, a ring with a letter in it."""
    x1, y1, x2, y2 = box
    cx, cy, r = (x1 + x2) // 2, (y1 + y2) // 2, int(0.36 * min(x2 - x1, y2 - y1))
    body = tuple(int(v) for v in image[y1 + 2, x1 + 2])
    cv2.circle(image, (cx, cy), r, body, -1)
    cv2.circle(image, (cx, cy), int(0.8 * r), ink, max(1, r // 5))
    cv2.putText(image, "F", (cx - r // 2, cy + r // 2), cv2.FONT_HERSHEY_SIMPLEX, r / 22, ink, max(1, r // 6))


def table_with(face: int, side: int) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    frame = np.full((240, 320, 3), (60, 110, 40), np.uint8)
    return frame, draw_die(frame, face, 130, 80, side)


@settings(max_examples=30, deadline=None)
@given(face=st.integers(1, 6), side=st.integers(MIN_SIDE_PX, 80))
def test_no_pip_face_is_a_symbol(face: int, side: int) -> None:
    frame, box = table_with(face, side)
    assert not symbol_faces(frame, [box])[0]


@pytest.mark.parametrize(("face", "side"), [(1, 40), (1, 64), (6, 40), (6, 64)])
def test_a_logo_over_the_pips_is_a_symbol(face: int, side: int) -> None:
    frame, box = table_with(face, side)
    paint_logo(frame, box)
    assert symbol_faces(frame, [box]).tolist() == [True]
    assert symbol_faces(frame, [(box[0], box[1], box[0] + 20, box[1] + 20)]).tolist() == [False]  # too small to judge


def test_the_reader_never_scores_a_logo_the_classifier_reads_as_a_one() -> None:
    frame, box = table_with(1, 64)
    plain = frame.copy()
    paint_logo(frame, box)
    found = Reading(xyxy=[box], confidence=[0.9], face=[0], face_confidence=[0], status=["ok"])
    sure_one = ScriptedClassifier([[0.97, 0.01, 0.01, 0.0, 0.0, 0.0, 0.01]])  # a ring logo read as a 1 at 0.97
    reader = DiceReader(
        detector=lambda _f: found,
        classifier=sure_one,  # type: ignore[arg-type]
        config=ReaderConfig(auto_tray=False, vertical_search=False),
    )
    logo = reader.read(frame)
    assert logo.status.tolist() == [DieStatus.UNCERTAIN] and logo.faces == () and logo.data["symbol"].tolist() == [True]
    one = reader.read(plain)
    assert one.status.tolist() == [DieStatus.OK] and one.faces == (1,) and one.data["symbol"].tolist() == [False]
