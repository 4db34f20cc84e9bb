"""What the pictures behind scored throws take: bytes per picture, and a whole tournament's.

    python bench/throw_pictures.py SOURCE... [--players 40] [--seeds 1 2 3] [--webcam]

Each SOURCE is a generated game video with its truth beside it (``NAME.mp4`` and ``NAME.json``
from ``python -m farklecam.datasets.synthetic.throw_videos``: the frame each throw came to rest
on, and its dice), or a folder of labelled photos (``images/`` and ``labels/``, YOLO boxes). Each
settled frame becomes the picture a table keeps (``farklecam.service.throw_picture.make_picture``,
with its dice as the reading) and is stored through ``ThrowPictures`` in a fresh SQLite file, as
``farklecam serve`` stores it; ``--webcam`` first scales each frame to the 1280 px width the page
sends. Per source it prints the JPEG bytes (median and largest), the reading's JSON and the bytes
the database file grew by per picture (JPEG, reading and the row's overhead together).

The tournament's figure multiplies that by the throws a whole tournament of ``--players`` makes,
every throw scored by the camera: each seed's tournament is played by the advisor
(``farklecam tournament simulate``), and every roll, throw of passed dice and roll-off die of
every table's game is counted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from farklecam.datasets.yolo import find_images, label_file, read_labels
from farklecam.scoring import tournament_sim
from farklecam.scoring.actions import PassedRoll, Roll, RollOff
from farklecam.scoring.game import Game
from farklecam.scoring.presets import get_rules
from farklecam.service.picture_store import ThrowPictures
from farklecam.service.storage import GameStore
from farklecam.service.throw_picture import ThrowPicture, make_picture
from farklecam.vision.reading import Reading

#: The page's frames are at most this wide (``FRAME_MAX_WIDTH`` in ``static/app.js``).
WEBCAM_WIDTH = 1280
#: One throw of the scripted game every picture is filed under (the rows' key refers to events).
TURN = ("roll 1,1,1,1,2,3", "keep 1,1,1,1", "bank")


def reading_of(boxes: list[tuple[float, float, float, float]], faces: list[int], size: tuple[int, int]) -> Reading:
    """The dice of a settled frame as a reading (every die read, confidently)."""
    n = len(boxes)
    return Reading(
        xyxy=np.array(boxes, np.float32).reshape(-1, 4),
        confidence=[0.95] * n,
        face=faces,
        face_confidence=[0.95] * n,
        status=["ok"] * n,
        image_size=size,
    )


def video_frames(video: Path) -> Iterator[tuple[np.ndarray, Reading]]:
    """Each throw's settled frame of a generated game video, with its dice."""
    truth = json.loads(video.with_suffix(".json").read_text())
    capture = cv2.VideoCapture(str(video))
    try:
        for throw in truth["throws"]:
            capture.set(cv2.CAP_PROP_POS_FRAMES, throw["rest_frame"] + 4)  # resting a moment: as the settle rule waits
            ok, frame = capture.read()
            if not ok:
                continue
            labels = throw["labels"]
            size = (frame.shape[1], frame.shape[0])
            yield frame, reading_of([tuple(d["box"]) for d in labels], [int(d["face"]) for d in labels], size)
    finally:
        capture.release()


def photo_frames(folder: Path) -> Iterator[tuple[np.ndarray, Reading]]:
    """Each labelled photo of a folder, with its dice (a leaning die's class reads as face 0)."""
    for path in find_images(folder):
        frame = cv2.imread(str(path))
        if frame is None:
            continue
        height, width = frame.shape[:2]
        boxes = read_labels(label_file(path))
        faces = [b.cls + 1 if b.cls < 6 else 0 for b in boxes]
        yield frame, reading_of([b.to_xyxy(width, height) for b in boxes], faces, (width, height))


def as_webcam(frame: np.ndarray, reading: Reading) -> tuple[np.ndarray, Reading]:
    """The frame scaled to the width the page sends, and its reading with it."""
    scale = WEBCAM_WIDTH / frame.shape[1]
    size = (WEBCAM_WIDTH, round(frame.shape[0] * scale))
    boxes = reading.xyxy * np.float32(scale)
    big = cv2.resize(frame, size, interpolation=cv2.INTER_LINEAR)
    return big, reading_of([tuple(b) for b in boxes.tolist()], reading.face.tolist(), size)


def stored_bytes(pictures: list[ThrowPicture], folder: Path) -> float:
    """The bytes an SQLite game database grows by per picture kept in it."""
    game = Game(get_rules("boxed").with_options({"target": 1_000_000}), ["Ann", "Bob"], first_player="Ann")
    for text in TURN * len(pictures):
        game.apply(text)
    path = folder / "pictures.sqlite3"
    with GameStore(path) as store:
        store.add_game("g", game)
        store.db.query("PRAGMA wal_checkpoint(TRUNCATE)")
        before = path.stat().st_size
        kept = ThrowPictures(store.db, most=len(pictures))
        for k, picture in enumerate(pictures):
            kept.keep("g", 1 + 3 * k, picture)  # each turn's roll
        store.db.query("PRAGMA wal_checkpoint(TRUNCATE)")
        return (path.stat().st_size - before) / len(pictures)


def tournament_throws(players: int, seed: int) -> int:
    """The throws (rolls, passed dice, roll-off dice) of a whole simulated tournament of ``players``."""
    throws = 0
    play_table = tournament_sim.play_table

    def counting(*args: object, **kwargs: object) -> Game:
        nonlocal throws
        game = play_table(*args, **kwargs)  # type: ignore[arg-type]
        throws += sum(isinstance(e.action, Roll | PassedRoll | RollOff) for e in game.events)
        return game

    tournament_sim.play_table = counting  # type: ignore[assignment]
    try:
        tournament_sim.simulate(players, seed)
    finally:
        tournament_sim.play_table = play_table  # type: ignore[assignment]
    return throws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path, help="game videos (NAME.mp4 + NAME.json) or photo folders")
    parser.add_argument("--players", type=int, default=40, help="the tournament's field (default 40)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="tournaments to simulate")
    parser.add_argument("--webcam", action="store_true", help=f"scale each frame to {WEBCAM_WIDTH} px wide first")
    args = parser.parse_args(argv)
    everything: list[ThrowPicture] = []
    per_picture: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, source in enumerate(args.sources):
            frames = video_frames(source) if source.suffix.lower() == ".mp4" else photo_frames(source)
            if args.webcam:
                frames = (as_webcam(frame, reading) for frame, reading in frames)
            pictures = [make_picture(frame, reading) for frame, reading in frames]
            if not pictures:
                print(f"{source}: no frames", file=sys.stderr)
                continue
            sizes = sorted(len(p.jpeg) for p in pictures)
            readings = [len(json.dumps(p.reading)) for p in pictures]
            folder = Path(tmp) / str(k)
            folder.mkdir()
            grown = stored_bytes(pictures, folder)
            per_picture.append(grown)
            everything += pictures
            print(f"{source}: {len(pictures)} pictures {pictures[0].width}x{pictures[0].height}; JPEG median "
                  f"{statistics.median(sizes) / 1000:.1f} kB, largest {sizes[-1] / 1000:.1f} kB; reading median "
                  f"{statistics.median(readings):.0f} characters; database {grown / 1000:.1f} kB "
                  "a picture")  # fmt: skip
    if not everything:
        return 1
    mean = sum(len(p.jpeg) for p in everything) / len(everything)
    worst = max(per_picture)
    print(f"all {len(everything)} pictures: JPEG mean {mean / 1000:.1f} kB; database per picture "
          f"{min(per_picture) / 1000:.1f}-{worst / 1000:.1f} kB by source")  # fmt: skip
    for seed in args.seeds:
        throws = tournament_throws(args.players, seed)
        print(f"tournament of {args.players}, seed {seed}: {throws} throws; their pictures "
              f"{throws * min(per_picture) / 1e6:.1f}-{throws * worst / 1e6:.1f} MB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
