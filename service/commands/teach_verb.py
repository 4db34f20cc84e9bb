"""``farklecam teach NAME --labels DIR``: teach a table's profile from labelled pictures.

Every labelled die of every picture becomes a correction of the profile ``NAME`` (made if
new). A picture that cannot be used (unreadable, no label file, a malformed line) is reported
on its own line and the rest are still taught; exit status 1 then, 2 for a bad NAME or DIR.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from farklecam.errors import FarkleError, ImageError
from farklecam.service.commands.base import Command

__all__ = ["TEACH"]


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the profile to teach (made if new): one table's dice and camera")
    parser.add_argument(
        "--labels",
        type=Path,
        required=True,
        metavar="DIR",
        help="pictures and YOLO label files, side by side or in images/ and labels/: one line a die, "
        "'class cx cy w h [ok|cocked|off_tray]', class = face - 1 (6: leaning, no face up), normalised; "
        "a box may cover the whole die or only its top face",
    )
    parser.add_argument("--models", type=Path, metavar="DIR", help="folder with the ONNX models (default: bundled)")


def _run(args: argparse.Namespace) -> int:
    from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

    from farklecam.service.profiles.labels import labelled_pictures
    from farklecam.service.profiles.store import ProfileStore, check_name
    from farklecam.service.profiles.teach import teach_picture
    from farklecam.vision.reader import DiceReader

    name = check_name(args.name)
    folder: Path = args.labels
    if not folder.is_dir():
        raise ImageError(f"--labels {folder}: no such folder")
    pictures = labelled_pictures(folder)
    if not pictures:
        raise ImageError(f"--labels {folder}: no pictures in it (looked for .jpg, .png, .bmp, .webp, .tif)")
    reader = DiceReader(args.models)
    store = ProfileStore()
    new = name not in store.names()
    profile = store.open_or_create(name)
    try:
        adapter = reader.bind_profile(profile)
    except FarkleError:
        if new:
            store.forget(name)  # a classifier that cannot teach leaves no empty profile behind
        raise
    added = unmatched = failures = 0
    bar = tqdm(pictures, unit="picture", desc=f"teaching {name}", leave=False, file=sys.stderr)
    for image, labels in bar:
        try:
            if not labels.is_file():
                raise OSError(f"no label file ({labels.name} beside it or in labels/)")
            taught = teach_picture(adapter, reader.detector, image, labels)
        except (FarkleError, OSError, ValueError) as exc:
            failures += 1
            text = str(exc).removeprefix(f"{image}: ")
            tqdm.write(f"farklecam: {image}: {text}", file=sys.stderr)
            continue
        added += taught.added
        unmatched += taught.unmatched
    bar.close()
    if new and not len(profile):
        store.forget(name)  # nothing was taught: no empty profile is left behind
    missed = f"; {unmatched} labelled dice matched no die the reader found" if unmatched else ""
    sys.stdout.write(
        f"taught {name}: {added} dice from {len(pictures) - failures} pictures{missed}; "
        f"it holds {len(profile)} corrections\n"
    )
    if failures:
        sys.stderr.write(f"farklecam: {failures} picture(s) could not be taught\n")
    return 1 if failures else 0


TEACH = Command("teach", "teach a table's profile its dice from labelled pictures", _configure, _run)
