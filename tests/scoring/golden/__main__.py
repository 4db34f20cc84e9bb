"""Check or rewrite the golden set-aside listings: ``python -m tests.scoring.golden [--write]``."""

from __future__ import annotations

import argparse
import sys

from tests.scoring.golden import golden_path, listing, preset_names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.scoring.golden", description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the files (default: only report which differ)")
    args = parser.parse_args(argv)
    stale = []
    for preset in preset_names():
        path = golden_path(preset)
        text = listing(preset)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(preset)
        if args.write:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(text.encode())} bytes)")
        else:
            print(f"{path} differs from the scoring engine")
    if not stale:
        print("golden listings are up to date")
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
