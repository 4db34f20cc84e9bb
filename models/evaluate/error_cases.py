"""What the evaluator got wrong, image by image: the worklist for the next model.

A table of metrics says *how often* the reader fails; improving it needs
*which* dice and *why*. For every image not read exactly, ``ErrorCases``
writes the frame with the labels (thin white, with the true class) and the
reading (thick, coloured by status, with the class read) drawn on it, and one
JSON line per image listing each missed die, each extra detection and each
wrong read with its box size and confidences. ``python -m farklecam.models.evaluate DIR
--errors OUT`` fills ``OUT/<folder>/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from farklecam.models.evaluate.metrics import COCKED_CLASS, ImageLabels, match_scored, predicted_classes
from farklecam.service.overlay import STATUS_COLORS, BoxAnnotator, Scene, draw_label
from farklecam.vision.reading import DieStatus, Reading

__all__ = ["ErrorCases", "class_name", "describe_errors"]


def class_name(cls: int) -> str:
    """A class id as people say it: ``"5"``, ``"cocked"`` or ``"none"`` (found but not read)."""
    if cls == COCKED_CLASS:
        return "cocked"
    return str(cls + 1) if 0 <= cls < COCKED_CLASS else "none"


def _side(xyxy: np.ndarray) -> float:
    return float(np.sqrt(max(0.0, float(xyxy[2] - xyxy[0])) * max(0.0, float(xyxy[3] - xyxy[1]))))


def describe_errors(reading: Reading, labels: ImageLabels) -> list[dict[str, Any]]:
    """Every disagreement between a reading and its labels.

    Kinds: ``wrong`` (read as another class), ``missed``, ``extra``, and where the
    labels say which dice are off the tray, ``off_tray`` (off, not flagged) and
    ``on_tray`` (flagged off but on it).

    Occluded dice are set aside as the metrics do (:func:`farklecam.models.evaluate.metrics.match_scored`).
    """
    scored = match_scored(reading, labels)
    pred_cls = predicted_classes(reading)
    errors: list[dict[str, Any]] = []
    for i, j in scored.pairs:
        truth, read = int(labels.classes[j]), int(pred_cls[i])
        if truth != read:
            errors.append(
                {
                    "kind": "wrong",
                    "label": class_name(truth),
                    "read": class_name(read),
                    "status": str(reading.status[i]),
                    "face_confidence": round(float(reading.face_confidence[i]), 3),
                    "box": [round(float(v), 1) for v in reading.xyxy[i]],
                    "side_px": round(_side(reading.xyxy[i]), 1),
                }
            )
    if labels.off_tray is not None:
        for i, j in scored.pairs:
            read_off = reading.status[i] == DieStatus.OFF_TRAY
            if read_off != bool(labels.off_tray[j]):
                errors.append(
                    {
                        "kind": "off_tray" if labels.off_tray[j] else "on_tray",
                        "label": class_name(int(labels.classes[j])),
                        "status": str(reading.status[i]),
                        "box": [round(float(v), 1) for v in reading.xyxy[i]],
                        "side_px": round(_side(reading.xyxy[i]), 1),
                    }
                )
    matched_pred = {i for i, _ in scored.pairs}
    matched_label = {j for _, j in scored.pairs}
    for j in scored.labels:
        if j not in matched_label:
            box = labels.xyxy[j]
            errors.append(
                {
                    "kind": "missed",
                    "label": class_name(int(labels.classes[j])),
                    "box": [round(float(v), 1) for v in box],
                    "side_px": round(_side(box), 1),
                }
            )
    for i in scored.predictions:
        if i not in matched_pred:
            errors.append(
                {
                    "kind": "extra",
                    "read": class_name(int(pred_cls[i])),
                    "confidence": round(float(reading.confidence[i]), 3),
                    "box": [round(float(v), 1) for v in reading.xyxy[i]],
                    "side_px": round(_side(reading.xyxy[i]), 1),
                }
            )
    return errors


@dataclass
class ErrorCases:
    """Writes the images a folder got wrong, and ``errors.jsonl`` describing each one.

    Args:
        out_dir: where to write (created on first use).
    """

    out_dir: Path
    counts: dict[str, int] = field(
        default_factory=lambda: {"wrong": 0, "missed": 0, "extra": 0, "off_tray": 0, "on_tray": 0}
    )

    def record(self, image_path: Path, frame: Scene, reading: Reading, labels: ImageLabels) -> None:
        """Write one image not read exactly (no-op when the reading agrees with its labels)."""
        errors = describe_errors(reading, labels)
        if not errors:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for error in errors:
            self.counts[error["kind"]] += 1
        scene = self._draw(frame, reading, labels)
        cv2.imwrite(str(self.out_dir / f"{image_path.stem}.jpg"), scene, [cv2.IMWRITE_JPEG_QUALITY, 90])
        line = {"image": str(image_path), "errors": errors}
        with (self.out_dir / "errors.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    @staticmethod
    def _draw(frame: Scene, reading: Reading, labels: ImageLabels) -> Scene:
        scene = frame.copy()
        scale = max(0.4, scene.shape[1] / 1600)
        for box, cls in zip(labels.xyxy, labels.classes, strict=True):
            x1, y1, x2, y2 = (round(float(v)) for v in box)
            cv2.rectangle(scene, (x1, y1), (x2, y2), (255, 255, 255), 1)
            draw_label(scene, class_name(int(cls)), (x1, y2), (255, 255, 255), scale, above=False)
        BoxAnnotator().annotate(scene, reading)
        pred_cls = predicted_classes(reading)
        for box, cls, status in zip(reading.xyxy, pred_cls, reading.status, strict=True):
            x1, y1 = round(float(box[0])), round(float(box[1]))
            draw_label(scene, class_name(int(cls)), (x1, y1), STATUS_COLORS[status], scale)
        return np.ascontiguousarray(scene)
