"""The training command lines: a value out of range is refused with one clear line, before any work."""

from __future__ import annotations

import pytest

from farklecam.models.training.cocked import main as cocked_main
from farklecam.models.training.reproduce import _parse


def test_crop_effect_shares_are_read() -> None:
    args = _parse(["--cls-streaks", "0.3", "--cls-motion-blur", "0"])
    assert args.cls_streaks == 0.3 and args.cls_motion_blur == 0.0
    assert _parse([]).cls_streaks is None  # unset: ClassifierConfig's default


def test_the_classifier_width_is_read() -> None:
    assert _parse(["--cls-width-scale", "1.5"]).cls_width_scale == 1.5
    assert _parse([]).cls_width_scale is None  # unset: ClassifierConfig's default


pytestmark = pytest.mark.train  # the cocked test's command line lives beside torch

_COCKED_TRAIN = ["train", "--synthetic", "nowhere", "--out", "nowhere.onnx"]


@pytest.mark.parametrize(
    ("command", "flag", "value", "message"),
    [
        ("farklecam.models.training", "--cls-streaks", "1.5", "is not a share between 0 and 1"),
        ("farklecam.models.training", "--cls-motion-blur", "-0.1", "is not a share between 0 and 1"),
        ("farklecam.models.training", "--cls-streaks", "lots", "is not a number"),
        ("farklecam.models.training", "--cls-width-scale", "0.1", "outside 0.5..4"),
        ("farklecam.models.training.cocked", "--crop-size", "8", "outside 32..256"),
        ("farklecam.models.training.cocked", "--crop-size", "96.5", "is not a whole number"),
        ("farklecam.models.training.cocked", "--width-scale", "8", "outside 0.5..4"),
        ("farklecam.models.training.cocked", "--width-scale", "wide", "is not a number"),
        ("farklecam.models.training.cocked", "--weight-decay", "2", "outside 0..1"),
        ("farklecam.models.training.cocked", "--mixup", "-1", "outside 0..4"),
        ("farklecam.models.training.cocked", "--mixup", "some", "is not a number"),
    ],
)
def test_a_bad_value_is_one_clear_line(
    command: str, flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        if command == "farklecam.models.training":
            _parse([flag, value])
        else:
            cocked_main([*_COCKED_TRAIN, flag, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
