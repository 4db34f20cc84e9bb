"""Experiment record (rule 81d0657): best-threshold cocked F1, two-class detector against the crop test alone.

``measure.py --crop-only`` first (the shipped crop test's figures, cached), then ``measure.py CHECKPOINT``.
Unlike ``farklecam.models.training.cocked.best_threshold`` (a 0.05 grid over the dice found), this sweeps every score
and
counts a leaning die never found as a miss, so that a detector is not flattered by what it fails to find.
"""

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
import numpy as np

sys.path.insert(0, str(REPO))
from farklecam.models.training.offline import go_offline

go_offline()
from farklecam.datasets.yolo import find_images
from farklecam.models.evaluate.metrics import COCKED_CLASS, match_by_centre
from farklecam.models.evaluate.run import load_labels
from farklecam.models.thresholds.cocked_fusion import collect_rows
from farklecam.vision.detection.detector import letterbox
from farklecam.vision.images import load_image


def best_f1(scores, truth, total):
    if len(scores) == 0:
        return {"f1": 0.0, "recall": 0.0, "precision": 0.0, "threshold": None}
    order = np.argsort(-scores)
    tp = np.cumsum(truth[order] == 1)
    fp = np.cumsum(truth[order] != 1)
    r = tp / max(total, 1)
    p = tp / np.maximum(tp + fp, 1)
    f = np.where(tp > 0, 2 * r * p / np.maximum(r + p, 1e-9), 0)
    k = int(np.argmax(f))
    return {
        "f1": round(float(f[k]), 4),
        "recall": round(float(r[k]), 4),
        "precision": round(float(p[k]), 4),
        "threshold": round(float(scores[order][k]), 4),
    }


def leaning_total(folder):
    total = 0
    for path in find_images(folder):
        frame = load_image(path)
        lab = load_labels(path, frame.shape[1], frame.shape[0])
        if lab.tray is None:
            continue
        occ = lab.occluded if lab.occluded is not None else np.zeros(len(lab.classes), bool)
        total += int(((lab.classes == COCKED_CLASS) & ~occ).sum())
    return total


CACHE = Path(f"{REPO}/runs/twoclass/crop_alone.json")
cached = json.loads(CACHE.read_text()) if CACHE.exists() else {}
if sys.argv[1] == "--crop-only":
    for name in ("calib_synth", "calib_lean"):
        folder = Path(f"{REPO}/data") / name
        total = leaning_total(folder)
        rows = collect_rows([folder])
        cached[name] = {"total": total, "crop": best_f1(rows.test.astype(np.float64), rows.truth, total)}
        print(name, cached[name], flush=True)
    CACHE.write_text(json.dumps(cached))
    raise SystemExit(0)
import torch
import torchvision
from ultralytics import YOLO

det = YOLO(sys.argv[1])
net = det.model.float().eval()


def raw_predict(frame, conf=0.25):
    """Boxes (agnostic NMS on the larger class score) with each box's leaning probability."""
    img, fit = letterbox(frame, (320, 320), stride=32)
    x = torch.from_numpy(img[:, :, ::-1].copy()).permute(2, 0, 1)[None].float() / 255
    with torch.no_grad():
        out = net(x)[0][0]  # (4 + 2, N): xywh in the padded picture, class probabilities
    xywh, probs = out[:4].T, out[4:].T
    score = probs.max(1).values
    keep = score >= conf
    xywh, probs, score = xywh[keep], probs[keep], score[keep]
    xyxy = torch.cat([xywh[:, :2] - xywh[:, 2:] / 2, xywh[:, :2] + xywh[:, 2:] / 2], 1)
    idx = torchvision.ops.nms(xyxy, score, 0.7)
    xyxy = xyxy[idx].numpy()
    xyxy[:, [0, 2]] -= fit.pad_x
    xyxy[:, [1, 3]] -= fit.pad_y
    return xyxy / fit.scale, probs[idx, 1].numpy()


report = {}
for name in ("calib_synth", "calib_lean"):
    folder = Path(f"{REPO}/data") / name
    total, crop = cached[name]["total"], cached[name]["crop"]
    scores, truth = [], []
    for path in find_images(folder):
        frame = load_image(path)
        lab = load_labels(path, frame.shape[1], frame.shape[0])
        if lab.tray is None:
            continue
        xyxy, conf = raw_predict(frame)
        t = np.full(len(xyxy), -1)
        for i, j in match_by_centre(xyxy, lab.xyxy):
            occluded = lab.occluded is not None and bool(lab.occluded[j])
            t[i] = -2 if occluded else int(lab.classes[j] == COCKED_CLASS)
        scores += list(conf[t != -2])
        truth += list(t[t != -2])
    two = best_f1(np.asarray(scores), np.asarray(truth), total)
    report[name] = {"leaning_dice": total, "crop_test_alone": crop, "two_class_detector": two}
    print(name, json.dumps(report[name]), flush=True)
for k in ("crop_test_alone", "two_class_detector"):
    report["mean_f1_" + k] = round(float(np.mean([report[n][k]["f1"] for n in ("calib_synth", "calib_lean")])), 4)
# dice found on the real validation photos (either class), at the detector's usual confidence
found = labelled = hits = 0
for path in find_images(Path(f"{REPO}/data/val/byler_d6")):
    frame = load_image(path)
    lab = load_labels(path, frame.shape[1], frame.shape[0])
    boxes, _ = raw_predict(frame)
    pairs = match_by_centre(boxes, lab.xyxy)
    found += len(boxes)
    labelled += len(lab.xyxy)
    hits += len(pairs)
report["val_byler_d6_die"] = {"recall": round(hits / labelled, 4), "precision": round(hits / max(found, 1), 4)}
print(json.dumps(report, indent=1))
