"""The die detector: a one-class YOLO exported by ultralytics, run with onnxruntime only.

ultralytics' pre- and post-processing is re-done in numpy: the same letterbox, the head
decoded by :mod:`farklecam.vision.detection.yolo_head`, a confidence threshold and NMS.
Input size and class names come from the model's metadata. A model with a dynamic input
is fed the smallest padded rectangle that holds the frame (ultralytics' ``rect``), and can
look again at a larger size where the dice are small (:class:`SmallDiceLook`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from farklecam.errors import ModelLoadError
from farklecam.vision.detection.yolo_head import (
    Candidates,
    candidates_from_decoded,
    candidates_from_levels,
    level_strides,
    select,
)
from farklecam.vision.onnx_runtime import OnnxModel, load_onnx
from farklecam.vision.reading import DieStatus, Reading

__all__ = ["CONF_METADATA_KEY", "DEFAULT_CONF", "CloserLook", "DieDetector", "Letterbox", "LookMemory", "letterbox"]

_PAD_VALUE = 114
#: YOLO's coarsest feature map is 1/32 of the input: the padding granule when the model does not say.
_DEFAULT_STRIDE = 32
#: Metadata key in which training may record the detector's recommended threshold.
CONF_METADATA_KEY = "farklecam_det_conf"
#: Threshold when neither the caller nor the model says otherwise.
DEFAULT_CONF = 0.25


@dataclass(frozen=True, slots=True)
class Letterbox:
    """How a frame was fitted into the model's input, to map boxes back."""

    scale: float  #: input pixels per frame pixel
    pad_x: float  #: left padding in input pixels
    pad_y: float  #: top padding in input pixels

    def to_frame(self, xyxy: npt.NDArray[np.float32], width: int, height: int) -> npt.NDArray[np.float32]:
        """Map boxes from input pixels back to frame pixels, clipped to the frame."""
        out = xyxy.copy()
        out[:, [0, 2]] = (out[:, [0, 2]] - self.pad_x) / self.scale
        out[:, [1, 3]] = (out[:, [1, 3]] - self.pad_y) / self.scale
        out[:, [0, 2]] = out[:, [0, 2]].clip(0, width)
        out[:, [1, 3]] = out[:, [1, 3]].clip(0, height)
        return out


#: A closer look's input side is a multiple of this (the largest stride of the detector's levels).
_SIDE_STEP = 32


@dataclass(frozen=True, slots=True)
class CloserLook:
    """A second read, at the input size that shows small dice as large as the detector learned them.

    The detector learned dice 15-40 px wide in its input. A webcam-sized frame of a tray
    fitted into the model's own input shrinks 25-40 px dice to under 10 px, where touching
    dice merge or vanish; read again with the frame scaled so that the dice found measure
    about ``target_px``, they are found and kept apart. A frame in which nothing is found
    is read again at its own size (up to ``max_side``): its dice may be too small to show.
    """

    side_px: float = 24.0  #: median die side (the model's own input pixels) under which the frame is read again
    target_px: float = 26.0  #: the median die side the second read aims for
    max_side: int = 1280  #: the second read's input side never exceeds this, nor the frame's own

    def __post_init__(self) -> None:
        if not 0 < self.side_px <= self.target_px or self.max_side < 64:
            raise ValueError(
                f"a closer look needs 0 < side_px <= target_px and max_side >= 64, got {self.side_px}, "
                f"{self.target_px}, {self.max_side}"
            )

    def size_for(self, median_side: float | None, own_side: int, frame_side: int) -> int | None:
        """The input side to read again at, for dice of ``median_side`` at the model's own size; None: no need.

        ``median_side`` None means nothing was found at the model's own size.
        """
        if median_side is not None and median_side >= self.side_px:
            return None
        limit = min(self.max_side, frame_side) // _SIDE_STEP * _SIDE_STEP  # the input pads to the stride
        wanted = limit if median_side is None else own_side * self.target_px / max(median_side, 1.0)
        side = int(min(limit, round(wanted / _SIDE_STEP) * _SIDE_STEP))
        return side if side > own_side else None


class LookMemory:
    """The input side one camera's last frame needed, so the next frame starts there (one per camera)."""

    def __init__(self) -> None:
        #: The closer look's input side for the next frame; None: start at the model's own size.
        self.imgsz: int | None = None


def letterbox(
    frame: npt.NDArray[np.uint8], size: tuple[int, int], stride: int | None = None
) -> tuple[npt.NDArray[np.uint8], Letterbox]:
    """Resize keeping the aspect ratio and pad to ``size`` = (height, width), as ultralytics does.

    With ``stride`` the frame is padded only up to the next multiple of it (ultralytics'
    ``auto`` letterbox, for models of dynamic input size). Returns the padded BGR image and
    the :class:`Letterbox` used.
    """
    h, w = frame.shape[:2]
    out_h, out_w = size
    scale = min(out_h / h, out_w / w)
    new_w, new_h = max(1, round(w * scale)), max(1, round(h * scale))  # a sliver of a frame still has a pixel
    dw, dh = out_w - new_w, out_h - new_h
    if stride is not None:
        dw, dh = dw % stride, dh % stride
    dw, dh = dw / 2, dh / 2
    resized = frame if (new_w, new_h) == (w, h) else cv2.resize(frame, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    top, bottom = round(dh - 0.1), round(dh + 0.1)
    left, right = round(dw - 0.1), round(dw + 0.1)
    padded = cv2.copyMakeBorder(
        resized, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(_PAD_VALUE, _PAD_VALUE, _PAD_VALUE)
    )
    return np.asarray(padded, dtype=np.uint8), Letterbox(scale, float(left), float(top))


def _imgsz(model: OnnxModel) -> tuple[int, int]:
    """The input size (height, width): from metadata, else from a fixed input shape."""
    value = model.metadata.get("imgsz")
    if isinstance(value, int):
        return value, value
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return int(value[0]), int(value[1])
    h, w = model.fixed_dim(2), model.fixed_dim(3)
    if h and w:
        return h, w
    raise ModelLoadError(f"ONNX model {model.path} gives no input size (metadata 'imgsz' or a fixed shape)")


class DieDetector:
    """Finds dice in a frame; returns a :class:`Reading` with boxes and confidences, every die ``uncertain``.

    The confidence threshold is ``conf`` if given, else the model's own (metadata
    ``farklecam_det_conf``), else :data:`DEFAULT_CONF`. A model of fixed input size ignores ``closer``.
    """

    def __init__(
        self,
        model: OnnxModel | str | Path,
        conf: float | None = None,
        iou: float = 0.5,
        max_det: int = 100,
        threads: int | None = None,
        closer: CloserLook | None = None,
    ) -> None:
        self.model = model if isinstance(model, OnnxModel) else load_onnx(model, threads=threads)
        self.imgsz = _imgsz(self.model)
        stride = self.model.metadata.get("stride")
        dynamic = self.model.fixed_dim(2) is None and self.model.fixed_dim(3) is None
        #: Pad to a multiple of this (a model of dynamic input size), or None: pad to ``imgsz``.
        self.stride: int | None = None
        if dynamic:
            self.stride = stride if isinstance(stride, int) and stride > 0 else _DEFAULT_STRIDE
        names = self.model.metadata.get("names", {0: "die"})
        self.names: dict[int, str] = (
            {int(k): str(v) for k, v in names.items()} if isinstance(names, dict) else dict(enumerate(names))
        )
        if conf is None:
            meta_conf = self.model.metadata.get(CONF_METADATA_KEY)
            conf = float(meta_conf) if isinstance(meta_conf, (int, float)) else DEFAULT_CONF
        self.conf, self.iou, self.max_det = conf, iou, max_det
        #: Whether the model is a per-level head (decoded here) rather than ultralytics' decoded one.
        self.per_level = level_strides(self.model.output_names) is not None
        #: The second look where the dice are small; only a model of free input size can take it.
        self.closer = closer if dynamic else None

    def preprocess(
        self, frame: npt.NDArray[np.uint8], imgsz: tuple[int, int] | None = None
    ) -> tuple[npt.NDArray[np.float32], Letterbox]:
        """Letterbox a BGR frame into the model's input tensor (1, 3, H, W), RGB 0..1, at ``imgsz`` or the model's."""
        padded, box = letterbox(frame, imgsz or self.imgsz, self.stride)
        tensor = cv2.dnn.blobFromImage(padded, scalefactor=1.0 / 255.0, swapRB=True)
        return np.asarray(tensor, dtype=np.float32), box

    def _detect(
        self, frame: npt.NDArray[np.uint8], imgsz: tuple[int, int]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], Letterbox]:
        """Boxes (model input pixels) and scores of the dice found with the frame fitted to ``imgsz``."""
        tensor, box = self.preprocess(frame, imgsz)
        try:
            xyxy, scores, _classes = select(self._candidates(tensor), self.iou, self.max_det)
        except ValueError as exc:
            raise ModelLoadError(f"ONNX model {self.model.path} is not a YOLO detector: {exc}") from exc
        return xyxy, scores, box

    def _own_side(self, xyxy: npt.NDArray[np.float32], box: Letterbox, frame: npt.NDArray[np.uint8]) -> float | None:
        """The median side of the dice found (``xyxy`` in the input pixels of ``box``) at the model's own size."""
        if not len(xyxy):
            return None
        height, width = frame.shape[:2]
        own_scale = min(self.imgsz[0] / height, self.imgsz[1] / width)
        sides = np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]) * (own_scale / box.scale)
        return float(np.median(sides))

    def _candidates(self, tensor: npt.NDArray[np.float32]) -> Candidates:
        """Run the network on an input tensor and keep the cells over the threshold."""
        outputs = self.model.run(tensor)
        if self.per_level:
            named = dict(zip(self.model.output_names, outputs, strict=True))
            return candidates_from_levels(named, (tensor.shape[2], tensor.shape[3]), self.conf)
        raw = outputs[0]
        if raw.ndim == 3 and raw.shape[1] != 4 + len(self.names) and raw.shape[2] == 4 + len(self.names):
            raw = raw.transpose(0, 2, 1)  # an export with the boxes axis first
        return candidates_from_decoded(raw, self.conf)

    def __call__(self, frame: npt.NDArray[np.uint8], memory: LookMemory | None = None) -> Reading:
        """The dice in a BGR frame, best first; with a camera's ``memory`` read first at the size it last needed."""
        height, width = frame.shape[:2]
        look, own = self.closer, max(self.imgsz)
        start = memory.imgsz if look is not None and memory is not None else None
        if look is not None and memory is not None and start is not None:
            xyxy, scores, box = self._detect(frame, (start, start))  # the size this camera's dice needed
            if len(scores):  # an empty tray between throws keeps the camera's size
                small = look.size_for(self._own_side(xyxy, box, frame), own, max(height, width)) is not None
                memory.imgsz = start if small else None
        else:
            xyxy, scores, box = self._detect(frame, self.imgsz)
            side = look.size_for(self._own_side(xyxy, box, frame), own, max(height, width)) if look else None
            if side is not None:
                closer = self._detect(frame, (side, side))
                if len(closer[1]) >= len(scores):  # a closer look that finds fewer dice is no help
                    xyxy, scores, box = closer
                    if memory is not None and len(scores):
                        memory.imgsz = side
        n = len(scores)
        return Reading(
            xyxy=box.to_frame(xyxy, width, height),
            confidence=scores,
            face=np.zeros(n, np.int64),
            face_confidence=np.zeros(n, np.float32),
            status=np.full(n, DieStatus.UNCERTAIN.value),
            image_size=(width, height),
        )
