"""The scene generators' command lines: a bad count or start is one clear argparse line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from farklecam.datasets.blender.__main__ import main as blender_main
from farklecam.datasets.raytraced.__main__ import main as raytraced_main


@pytest.mark.parametrize("main", [raytraced_main, blender_main], ids=["raytraced", "blender"])
@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--count", "0", "expected a positive whole number, got 0"),
        ("--count", "many", "expected a positive whole number, got 'many'"),
        ("--start", "-1", "expected a whole number of 0 or more, got -1"),
        ("--width", "1.5", "expected a positive whole number, got '1.5'"),
    ],
)
def test_a_bad_number_is_refused_in_one_line(
    main: object, flag: str, value: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--out", str(tmp_path), "--count", "1", flag, value]
    with pytest.raises(SystemExit) as exit_info:
        main(args)  # type: ignore[operator]
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # nothing written
