from __future__ import annotations

import dataclasses
import json
from contextlib import ExitStack as DoesNotRaise
from typing import Any

import numpy as np
import pytest

from farklecam.vision.reading import Die, DieStatus, Reading, TrayState


def mock_reading(**overrides: Any) -> Reading:
    fields: dict[str, Any] = {
        "xyxy": [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 70, 10]],
        "confidence": [0.9, 0.8, 0.7, 0.6],
        "face": [5, 1, 0, 3],
        "face_confidence": [0.99, 0.95, 0.9, 0.4],
        "status": ["ok", "ok", "cocked", "uncertain"],
    }
    fields.update(overrides)
    return Reading(**fields)


@pytest.mark.parametrize(
    ("overrides", "expectation", "message"),
    [
        ({}, DoesNotRaise(), None),
        ({"xyxy": [[0, 0, 10]] * 4}, pytest.raises(ValueError), r"shape \(_, 4\), but got shape \(4, 3\)"),
        ({"confidence": [0.9]}, pytest.raises(ValueError), r"confidence must be .* \(4,\) .* got shape \(1,\)"),
        ({"face": [[1, 2, 3, 4]]}, pytest.raises(ValueError), r"face must be a 1D .* got shape \(1, 4\)"),
        ({"face": [7, 1, 0, 3]}, pytest.raises(ValueError), r"0 \(unknown\) or 1-6"),
        ({"status": ["ok", "ok", "leaning", "ok"]}, pytest.raises(ValueError), r"'leaning'"),
        ({"tray": [[0, 0], [1, 1]]}, pytest.raises(ValueError), r"tray .* \(k>=3, 2\), but got shape \(2, 2\)"),
        ({"image_size": (0, 10)}, pytest.raises(ValueError), r"image_size"),
        ({"data": {"pips": [1, 2]}}, pytest.raises(ValueError), r"data\['pips'\] .* got shape \(2,\)"),
    ],
)
def test_validation(overrides: dict[str, Any], expectation: Any, message: str | None) -> None:
    with expectation as info:
        mock_reading(**overrides)
    if message:
        assert info is not None
        assert info.match(message)


def test_empty_and_len() -> None:
    empty = Reading.empty((640, 480))
    assert len(empty) == 0
    assert empty.to_dict() == {"dice": [], "rethrow": 0, "unclear": 0, "faces": [], "tray": "none"}
    assert empty.image_size == (640, 480)
    plain = Reading(xyxy=[], confidence=[], face=[], face_confidence=[], status=[])
    assert plain.xyxy.shape == (0, 4)


def test_the_tray_state_is_one_of_four_words() -> None:
    assert dataclasses.replace(Reading.empty(), tray_state=TrayState.UNSURE).to_dict()["tray"] == "unsure"
    with pytest.raises(ValueError, match="tray_state must be one of"):
        dataclasses.replace(Reading.empty(), tray_state="maybe")


def test_dtypes_and_read_only() -> None:
    r = mock_reading()
    assert r.xyxy.dtype == np.float32 and r.face.dtype == np.int64
    with pytest.raises(ValueError):
        r.face[0] = 2
    source = np.zeros((1, 4), np.float32)
    Reading(xyxy=source, confidence=[1], face=[1], face_confidence=[1], status=["ok"])
    assert source.flags.writeable  # the caller's array is copied, not frozen


def test_boolean_mask_int_and_slice() -> None:
    r = mock_reading(data={"pips": [5, 1, 0, 2]})
    ok = r[r.status == DieStatus.OK]
    assert len(ok) == 2 and ok.face.tolist() == [5, 1] and ok.data["pips"].tolist() == [5, 1]
    assert r[2].status.tolist() == ["cocked"]
    assert r[1:3].face.tolist() == [1, 0]
    assert r[[3, 0]].face.tolist() == [3, 5]
    with pytest.raises(IndexError):
        r[np.array([True, False])]


def test_faces_and_rethrow() -> None:
    r = mock_reading(status=["ok", "ok", "cocked", "off_tray"])
    assert r.faces == (1, 5)
    assert r.rethrow == 2 and r.unclear == 0
    assert r.rethrow_mask.tolist() == [False, False, True, True]
    unsure = mock_reading(status=["ok", "uncertain", "cocked", "ok"])
    assert unsure.rethrow == 1 and unsure.unclear == 1  # a die nobody can tell is looked at, not thrown again


def test_dice() -> None:
    dice = mock_reading().dice()
    assert dice[0] == Die(5, (0.0, 0.0, 10.0, 10.0), pytest.approx(0.9), DieStatus.OK, pytest.approx(0.99))
    assert dice[2].face is None and dice[2].status is DieStatus.COCKED


def test_to_dict_is_json() -> None:
    d = mock_reading().to_dict()
    assert json.loads(json.dumps(d)) == d
    assert set(d) == {"dice", "rethrow", "unclear", "faces", "tray"}
    assert d["dice"][0] == {
        "face": 5,
        "box": [0.0, 0.0, 10.0, 10.0],
        "confidence": 0.9,
        "status": "ok",
    }
    assert d["dice"][2]["face"] is None
    assert d["rethrow"] == 1 and d["unclear"] == 1 and d["faces"] == [1, 5]


def test_a_told_face_changes_only_that_unread_die() -> None:
    unread = Reading(
        xyxy=[[0, 0, 10, 10], [20, 0, 30, 10]], confidence=[0.9, 0.9], face=[4, 0], face_confidence=[0.9, 0.2],
        status=["ok", "uncertain"],
    )  # fmt: skip
    told = unread.with_face(1, 6)
    assert told.faces == (4, 6) and told.rethrow == 0 and float(told.face_confidence[1]) == 1.0
    assert unread.faces == (4,) and unread.unclear == 1  # frozen: the original is untouched
    for index, face, message in [(2, 6, "no die 2"), (0, 6, "not uncertain"), (1, 0, "a face is 1-6")]:
        with pytest.raises(ValueError, match=message):
            unread.with_face(index, face)
