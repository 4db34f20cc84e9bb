"""models.train's command line: a crop-effect share outside 0..1 is refused with one clear line."""

from __future__ import annotations

import pytest

from models.train import _parse


def test_crop_effect_shares_are_read() -> None:
    args = _parse(["--cls-streaks", "0.3", "--cls-motion-blur", "0"])
    assert args.cls_streaks == 0.3 and args.cls_motion_blur == 0.0
    assert _parse([]).cls_streaks is None  # unset: ClassifierConfig's default


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--cls-streaks", "1.5", "is not a share between 0 and 1"),
        ("--cls-motion-blur", "-0.1", "is not a share between 0 and 1"),
        ("--cls-streaks", "lots", "is not a number"),
    ],
)
def test_a_bad_share_is_one_clear_line(flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _parse([flag, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
