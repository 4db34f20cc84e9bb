"""The scoring rules against their golden listings (``tests/scoring/golden/<preset>.txt``).

Every roll of 1-6 dice and every legal set-aside with its points, per preset: a rule
change shows as a diff of the rolls it touches. After a deliberate change, rewrite the
files with ``python -m tests.scoring.golden --write`` and review the diff.
"""

from __future__ import annotations

import difflib

import pytest

from tests.scoring.golden import WRITE_COMMAND, all_rolls, golden_path, listing, parse_blocks, preset_names

SHOWN = 8  # rolls whose changed lines a failure message shows


def _changed_rolls(expected: str, actual: str) -> tuple[list[str], list[str]]:
    """Rolls whose block differs (or is missing on one side), and the changed lines of the first few."""
    old, new = parse_blocks(expected), parse_blocks(actual)
    changed = [roll for roll in dict.fromkeys([*new, *old]) if old.get(roll) != new.get(roll)]
    shown = []
    for roll in changed[:SHOWN]:
        shown.append(roll)
        before, after = old.get(roll, ["(not in the file)"]), new.get(roll, ["(not listed by the engine)"])
        diff = list(difflib.unified_diff(before, after, n=0, lineterm=""))[2:]  # past the ---/+++ header
        shown += [f"  {line[0]} {line[1:].strip()}" for line in diff if line[:1] in "-+"]
    return changed, shown


def test_every_roll_is_listed() -> None:
    rolls = all_rolls()
    assert len(rolls) == len(set(rolls)) == 923  # C(6+n-1, n) summed over n = 1..6


@pytest.mark.parametrize("preset", preset_names())
def test_set_asides_match_golden_listing(preset: str) -> None:
    path = golden_path(preset)
    assert path.exists(), f"no golden listing for preset {preset!r}: write it with `{WRITE_COMMAND}`"
    expected = path.read_text(encoding="utf-8")
    actual = listing(preset)
    if actual == expected:
        return
    changed, shown = _changed_rolls(expected, actual)
    rolls = ", ".join(r.removeprefix("roll ") for r in changed[:40]) + (" ..." if len(changed) > 40 else "")
    where = f"{len(changed)} roll(s) changed: {rolls}" if changed else "only the header changed"
    pytest.fail(
        f"preset {preset!r}: the set-asides differ from {path.name}; {where}\n(- in the file, + from the engine)\n"
        + "\n".join(shown)
        + f"\nIf the rule change is intended, rewrite the listings with `{WRITE_COMMAND}` and review the diff.",
        pytrace=False,
    )


def test_a_changed_keep_is_named_by_its_roll() -> None:
    text = golden_path("boxed").read_text(encoding="utf-8")
    old_line = next(line for line in text.splitlines() if line.startswith("  1 1 1 ") and line.endswith("three 1s"))
    changed, shown = _changed_rolls(text.replace(old_line, old_line.replace(" 300 ", " 999 "), 1), text)
    assert len(changed) == 1 and changed[0].startswith("roll ")
    assert shown[0] == changed[0] and any(" 999 " in line for line in shown)
