from __future__ import annotations

import numpy as np
import pytest

from farklecam.vision.crops import extract_crops
from farklecam.vision.faces.symbols import PIP_CROP_SIZE, count_pips, count_pips_in_boxes
from tests.vision.conftest import draw_die

STYLES = {
    "black-on-ivory": ((235, 240, 245), (20, 20, 20)),
    "white-on-blue": ((160, 40, 20), (250, 250, 250)),
    "yellow-on-green": ((40, 140, 30), (40, 220, 240)),
}


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("face", [1, 2, 3, 4, 5, 6])
def test_counts_drawn_dice(face: int, style: str) -> None:
    body, pip = STYLES[style]
    frame = np.full((200, 200, 3), 128, np.uint8)
    box = draw_die(frame, face, 70, 70, 60, body, pip)
    crop = extract_crops(frame, [box], PIP_CROP_SIZE)[0]
    result = count_pips(crop)
    assert result.count == face
    assert result.confidence >= 0.8
    assert result.centres.shape == (face, 2)


def test_blank_face_has_no_confidence() -> None:
    frame = np.full((200, 200, 3), 128, np.uint8)
    frame[70:130, 70:130] = 230
    crop = extract_crops(frame, [[70, 70, 130, 130]], PIP_CROP_SIZE)[0]
    assert count_pips(crop).confidence == 0.0


def test_in_boxes() -> None:
    frame = np.full((200, 400, 3), 128, np.uint8)
    boxes = [draw_die(frame, 3, 20, 60, 60), draw_die(frame, 5, 220, 60, 60)]
    counts, conf = count_pips_in_boxes(frame, boxes)
    assert counts.tolist() == [3, 5] and (conf > 0.8).all()
