"""Golden listings of the scoring rules: every roll of 1-6 dice and every legal set-aside, per preset.

Like python-chess's perft tables, each preset's listing is a checked-in text file
(``tests/scoring/golden/<preset>.txt``) that ``tests/scoring/test_golden.py``
regenerates in memory and compares, so a change to the rules shows as a diff of
the rolls it touches. After a deliberate rule change, rewrite the files with
``python -m tests.scoring.golden --write`` and review the diff.

The listing uses the engine's public API only (:func:`legal_set_asides`, what
``farklecam score`` prints). Every multiset of 1-6 dice is listed (923 rolls):
by number of dice, then faces ascending. One block per roll::

    roll 1 1 1 3 4 5
      1 1 1 5      350  left 2    three 1s, single 5
      ...
    roll 2 2 3 4 6 6
      farkle

Each keep line: the faces kept, their points, the dice left (``hot`` when every
die has scored), and the combinations counted; keeps in the engine's order
(best points first).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from pathlib import Path

from farklecam.scoring.presets import PRESETS
from farklecam.scoring.setasides import SetAside, legal_set_asides

__all__ = ["GOLDEN_DIR", "WRITE_COMMAND", "all_rolls", "golden_path", "listing", "parse_blocks"]

GOLDEN_DIR = Path(__file__).resolve().parent
WRITE_COMMAND = "python -m tests.scoring.golden --write"


def all_rolls(max_dice: int = 6) -> list[tuple[int, ...]]:
    """Every multiset of 1..``max_dice`` dice, by size then faces ascending (923 for six dice)."""
    return [roll for n in range(1, max_dice + 1) for roll in combinations_with_replacement(range(1, 7), n)]


def golden_path(preset: str) -> Path:
    """The checked-in listing of one preset."""
    return GOLDEN_DIR / f"{preset}.txt"


def _faces(faces: tuple[int, ...]) -> str:
    return " ".join(map(str, faces))


def _keep_line(option: SetAside) -> str:
    left = "hot" if option.hot_dice else f"left {option.dice_left}"
    return f"  {_faces(option.keep):<11}  {option.points:>5}  {left:<7}  {', '.join(option.combinations)}"


def _block(roll: tuple[int, ...], options: tuple[SetAside, ...]) -> list[str]:
    lines = [f"roll {_faces(roll)}"]
    lines += [_keep_line(o) for o in options] if options else ["  farkle"]
    return lines


def listing(preset: str) -> str:
    """The golden text of one preset, generated now from the scoring engine."""
    rules = PRESETS[preset].rules
    lines = [
        f"# farklecam golden set-asides, preset {preset}: {PRESETS[preset].summary}",
        f"# Every roll of 1-{rules.dice} dice, every legal keep: faces kept, points, dice left or hot, combinations.",
        f"# Generated from farklecam.scoring.setasides.legal_set_asides; rewrite with: {WRITE_COMMAND}",
    ]
    for roll in all_rolls(rules.dice):
        lines += _block(roll, legal_set_asides(roll, rules))
    return "\n".join(lines) + "\n"


def parse_blocks(text: str) -> dict[str, list[str]]:
    """Split a listing into its roll blocks: ``"roll 1 1 5"`` -> that block's keep lines."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("roll "):
            current = blocks.setdefault(line, [])
        elif current is not None and line.startswith("  "):
            current.append(line)
    return blocks


def preset_names() -> list[str]:
    """The presets that have a golden listing: every preset, in the registry's order."""
    return list(PRESETS)
