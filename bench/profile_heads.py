"""Which head should a profile adapt reads with? Heads compared on the classifier's own features, offline.

    python -m farklecam.datasets.real export-holdout data/validation --validation
    python bench/profile_heads.py data/validation/matteop65_webcam data/validation/byler_d6 --seeds 10

Chosen on the real photos' validation slice, never on the held-out fifth the curve
(``bench/profile_curve.py``) is judged on. Each folder is read in four looks: as it is, with a
maker's logo painted over every six (``bench/symbol_faces.py``; the classifier reads it as a
one), in inverted colours and blurred (sigma 2 px): what a profile must learn, and what it
must not spoil.
Per seed the pictures are shuffled, the first N labelled dice taught (their features at four
quarter turns, as ``farklecam teach`` stores them) and the rest judged on the classifier's
probabilities mixed by each head: the face read (best face) against the label, and a die
scored wrong where that face is wrong at a probability of 0.6 or more (the reader's
``face_min_conf``). Heads:

- ``votes P K S``: :class:`farklecam.vision.profiles.head.NeighbourVotes` with prior P, K
  neighbours and similarity scale S (the shipped head, at every setting of a grid);
- ``prototype W``: cosine softmax (scale 0.04) to each taught class's mean feature, mixed at weight W;
- ``logistic W``: softmax regression fitted in numpy on the taught features (200 steps, L2 1e-2),
  mixed at weight W.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from farklecam.datasets.yolo import find_images, label_file, read_labels
from farklecam.service.profiles.teach import match_by_centre
from farklecam.vision.faces.classifier import FaceClassifier
from farklecam.vision.images import load_image
from farklecam.vision.profiles.head import NeighbourVotes
from farklecam.vision.reader import DiceReader

Array = npt.NDArray[np.float32]
Die = tuple[str, int, Array, Array, Array]
Head = Callable[[list[Die], Array, Array], Array]
#: The looks each folder is read in.
LOOKS = ("as is", "logo6", "inverted", "blurred")


def dice(folder: Path, look: str) -> list[Die]:
    """Each labelled die the detector finds in one look: picture, face, probabilities, view-0 feature, 4 turns."""
    import cv2
    from symbol_faces import paint

    reader = DiceReader()
    classifier = reader.classifier
    assert isinstance(classifier, FaceClassifier)
    found: list[Die] = []
    for image in find_images(folder):
        frame = load_image(image).copy()
        height, width = frame.shape[:2]
        labels = read_labels(label_file(image))
        boxes = np.array([b.to_xyxy(width, height) for b in labels], np.float32).reshape(-1, 4)
        if look == "logo6":
            for label, box in zip(labels, boxes, strict=True):
                if label.cls == 5:
                    paint(frame, list(box), "logo")
        elif look == "inverted":
            frame = np.ascontiguousarray(255 - frame)
        elif look == "blurred":
            frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), 2.0), np.uint8)
        xyxy = reader.detector(frame).xyxy
        scores = classifier(frame, xyxy)
        turns = classifier.embed_crops(classifier.crops(frame, xyxy))
        probs = scores.class_probs()
        for i, j in match_by_centre(xyxy, boxes):
            assert scores.embedding is not None
            found.append((image.name, labels[j].cls + 1, probs[i], scores.embedding[i], turns[i]))
    return found


def unit(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.asarray(x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12), np.float32)


def votes(prior: float, k: int, scale: float) -> Head:
    def head(taught: list[Die], probs: Array, queries: Array) -> Array:
        features = np.stack([d[4] for d in taught])
        classes = np.array([d[1] - 1 for d in taught], np.int64)
        return NeighbourVotes.build(features, classes, prior=prior, neighbours=k, scale=scale).mix(probs, queries)

    return head


def prototype(weight: float) -> Head:
    def head(taught: list[Die], probs: Array, queries: Array) -> Array:
        classes = np.array([d[1] - 1 for d in taught])
        means = unit(np.stack([d[4] for d in taught])).mean(axis=1)
        present = np.unique(classes)
        centres = unit(np.stack([means[classes == c].mean(axis=0) for c in present]))
        z = unit(queries) @ centres.T / 0.04
        q = np.exp(z - z.max(axis=1, keepdims=True))
        full = np.zeros_like(probs)
        full[:, present] = q / q.sum(axis=1, keepdims=True)
        return np.asarray((1 - weight) * probs + weight * full, np.float32)

    return head


def logistic(weight: float) -> Head:
    def head(taught: list[Die], probs: Array, queries: Array) -> Array:
        x = unit(np.concatenate([d[4] for d in taught]))
        y = np.repeat([d[1] - 1 for d in taught], 4)
        target = np.eye(probs.shape[1])[y]
        w, b = np.zeros((x.shape[1], probs.shape[1])), np.zeros(probs.shape[1])
        for _ in range(200):
            z = x @ w + b
            p = np.exp(z - z.max(axis=1, keepdims=True))
            g = (p / p.sum(axis=1, keepdims=True) - target) / len(x)
            w -= 1.0 * (x.T @ g + 1e-2 * w)
            b -= 1.0 * g.sum(axis=0)
        z = unit(queries) @ w + b
        q = np.exp(z - z.max(axis=1, keepdims=True))
        return np.asarray((1 - weight) * probs + weight * q / q.sum(axis=1, keepdims=True), np.float32)

    return head


def score(
    worlds: dict[str, list[Die]], head: Head, sizes: list[int], seeds: int
) -> dict[tuple[str, int], tuple[float, float, float, float]]:
    """(world, N) -> mean face accuracy without and with the head, and dice scored wrong per 100 without and with."""
    out = {}
    for name, found in worlds.items():
        pictures = sorted({d[0] for d in found})
        for n in sizes:
            rows = []
            for seed in range(seeds):
                order = [pictures[i] for i in np.random.default_rng(seed).permutation(len(pictures))]
                rank = {p: k for k, p in enumerate(order)}
                ordered = sorted(found, key=lambda d: rank[d[0]])
                taught, used = ordered[:n], {d[0] for d in ordered[:n]}
                judged = [d for d in found if d[0] not in used]
                if len(taught) < n or len(judged) < 20:
                    continue
                truth = np.array([d[1] for d in judged])
                probs = np.stack([d[2] for d in judged])
                mixed = head(taught, probs, np.stack([d[3] for d in judged]))
                row = []
                for p in (probs, mixed):
                    face, sure = p[:, :6].argmax(axis=1) + 1, p[:, :6].max(axis=1)
                    row += [float(np.mean(face == truth)), 100.0 * float(np.mean((face != truth) & (sure >= 0.6)))]
                rows.append(row)
            if rows:
                a = np.mean(rows, axis=0)
                out[(name, n)] = (a[0], a[2], a[1], a[3])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--sizes", nargs="+", type=int, default=[5, 20, 60, 200])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    worlds = {}
    for folder in args.folders:
        for look in LOOKS:
            worlds[f"{folder.name} {look}"] = dice(folder, look)
    heads: dict[str, Head] = {
        f"votes {p} {k} {s}": votes(p, k, s)
        for p, k, s in itertools.product((0.3, 1.0, 3.0), (1, 3, 5), (0.02, 0.04, 0.08))
    }
    heads |= {f"prototype {w}": prototype(w) for w in (0.3, 0.5)}
    heads |= {f"logistic {w}": logistic(w) for w in (0.3, 0.5)}
    results = []
    for name, head in heads.items():
        table = score(worlds, head, args.sizes, args.seeds)
        gain = [with_ - without for without, with_, _, _ in table.values()]
        worse = [wrong_with - wrong for _, _, wrong, wrong_with in table.values()]
        results.append((float(np.mean(gain)), float(np.min(gain)), float(np.mean(worse)), name, table))
    results.sort(key=lambda r: -r[0])
    print("head                    mean gain  worst gain  scored wrong /100 (change)")
    for gain, worst, worse, name, _ in results:
        print(f"{name:22s}  {gain:+.4f}    {worst:+.4f}     {worse:+.2f}")
    best = results[0]
    print(f"\nbest: {best[3]}")
    for (world, n), (a0, a1, w0, w1) in best[4].items():
        print(f"  {world:28s} N={n:3d}  face {a0:.3f} -> {a1:.3f}  scored wrong /100 {w0:.2f} -> {w1:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
