"""The pose network at run time: each die's up-axis in the camera's frame, and its tilt.

The network (trained by :mod:`farklecam.models.training.pose`) reads an unturned RGB crop, cut as the face
classifier's are (:func:`farklecam.vision.crops.extract_crops`), and outputs the die's up-axis in
the frame of its viewing ray (:func:`farklecam.vision.pose.tilt.ray_rotations`); :class:`PoseNet` turns
it back into the camera's frame and, given the table's normal, into degrees of tilt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from farklecam.vision.crops import CROP_CONTEXT, CROP_SIZE, crops_to_tensor, extract_crops
from farklecam.vision.onnx_runtime import OnnxModel, load_onnx
from farklecam.vision.pose.tilt import (
    consensus,
    default_intrinsics,
    from_ray_frame,
    normal_from_view,
    ray_rotations,
    tilt_degrees,
    turn_in_ray_frame,
    view_from_normal,
)
from farklecam.vision.pose.upright import UprightView

from farklecam.errors import ModelLoadError

__all__ = ["POSE_NAMES", "VIEWS", "DicePose", "PoseNet"]

#: The pose network's outputs (its ``names`` metadata): the up-axis in the ray's frame.
POSE_NAMES = ("up_x", "up_y", "up_z")
#: Views of each crop the network reads (:meth:`PoseNet.ray_up`): four quarter turns. Eight (each
#: mirrored too) gain little more for twice the work.
VIEWS = 4


def _turned(crops: npt.NDArray[np.uint8], quarters: int, mirror: bool) -> npt.NDArray[np.uint8]:
    """Crops (n, s, s, 3) turned ``quarters`` quarter turns counter-clockwise on screen, then mirrored left to right."""
    turned = np.rot90(crops, k=quarters, axes=(1, 2))
    return np.ascontiguousarray(turned[:, :, ::-1] if mirror else turned)


@dataclass(frozen=True)
class DicePose:
    """A frame's dice measured: up-axes, the table's normal and each die's tilt.

    Attributes:
        up_axes: each die's up-axis in the camera's frame (n, 3), unit length.
        normal: the table's normal in the camera's frame (3,), or None where neither a marked
            tray nor the dice could give it.
        agreed: which dice the normal was found from (all False for a marked tray's).
        tilt_deg: each die's tilt (n,), NaN where the normal is unknown.
        view: the vertical the tilts were measured under: the marked tray's, else the one the
            dice's consensus gives (its normal and focal length); None where neither is known.
            The off-tray test places the dice's bases along it.
    """

    up_axes: npt.NDArray[np.float64]
    normal: npt.NDArray[np.float64] | None
    agreed: npt.NDArray[np.bool_]
    tilt_deg: npt.NDArray[np.float64]
    view: UprightView | None = None


class PoseNet:
    """Each die's up-axis and tilt from the frame, its boxes and, where marked, the tray's vertical.

    Example:
        >>> pose = PoseNet("runs/pose/pose_net.onnx")(frame, reading.xyxy)
        >>> pose.tilt_deg
    """

    def __init__(self, model: OnnxModel | str | Path, threads: int | None = None, views: int = VIEWS) -> None:
        if views not in (1, 4, 8):
            raise ValueError(f"views must be 1, 4 or 8, but got {views!r}")
        self.model = model if isinstance(model, OnnxModel) else load_onnx(model, threads=threads)
        meta = self.model.metadata
        names = tuple(str(n) for n in meta.get("names", []))
        if names != POSE_NAMES:
            raise ModelLoadError(f"ONNX model {self.model.path} has outputs {list(names)}; expected {list(POSE_NAMES)}")
        self.crop_size = int(meta.get("crop_size", CROP_SIZE))
        self.crop_context = float(meta.get("crop_context", CROP_CONTEXT))
        self.views = views

    def ray_up(self, frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Each box's die's up-axis in the frame of its viewing ray (n, 3), unit length (:meth:`read_crops`)."""
        boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
        if len(boxes) == 0:
            return np.zeros((0, 3), np.float64)
        return self.read_crops(extract_crops(frame, boxes, self.crop_size, self.crop_context))

    def read_crops(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
        """Each crop's (n, s, s, 3 BGR) die's up-axis in the frame of its viewing ray (n, 3), unit length.

        Each crop is read :attr:`views` times, turned by quarter turns (and, with 8, each
        mirrored too): exact pixel moves the network trained under (its crops are turned
        and mirrored at random, their targets with them). Each answer is turned back
        (:func:`farklecam.vision.pose.tilt.turn_in_ray_frame`) and the answers are averaged, which
        cuts the error a single view makes by its own chance (see the model card) and
        makes the answer turn exactly as its crop does.
        """
        n = len(crops)
        turns = [
            (q, m) for q in range(4 if self.views > 1 else 1) for m in ((False, True) if self.views == 8 else (False,))
        ]
        seen = np.concatenate([_turned(crops, q, m) for q, m in turns])
        out = np.asarray(self.model.run(crops_to_tensor(seen))[0], np.float64)
        if out.shape != (len(seen), len(POSE_NAMES)):
            raise ModelLoadError(f"ONNX model {self.model.path} returned outputs of shape {out.shape}")
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        back = np.zeros((n, 3))
        for v, (q, m) in enumerate(turns):
            answer = out[v * n : (v + 1) * n].copy()
            if m:
                answer[:, 0] = -answer[:, 0]  # un-mirror, then turn back
            back += turn_in_ray_frame(answer, np.full(n, -90.0 * q), np.zeros(n, bool))
        unit: npt.NDArray[np.float64] = back / np.maximum(np.linalg.norm(back, axis=1, keepdims=True), 1e-12)
        return unit

    def __call__(self, frame: npt.NDArray[np.uint8], xyxy: npt.ArrayLike, view: UprightView | None = None) -> DicePose:
        """The frame's dice measured.

        With ``view`` (a marked tray's vertical) its focal length places the rays and its
        vertical is the table's normal; without, the dice give both (:func:`farklecam.vision.pose.tilt.consensus`).
        """
        boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2.0
        ray_up = self.ray_up(frame, boxes)
        size = (frame.shape[1], frame.shape[0])
        agreed = np.zeros(len(boxes), bool)
        if view is not None:
            focal, principal = default_intrinsics(size, view)
            up = from_ray_frame(ray_up, ray_rotations(centres, focal, principal))
            normal: npt.NDArray[np.float64] | None = normal_from_view(view)
        else:
            found = consensus(ray_up, centres, size)
            if found is None:
                focal, principal = default_intrinsics(size)
                up, normal = from_ray_frame(ray_up, ray_rotations(centres, focal, principal)), None
            else:
                normal, up, agreed = found.normal, found.up_axes, found.agreed
                view = view_from_normal(normal, found.focal, default_intrinsics(size)[1])
        tilt = tilt_degrees(up, normal) if normal is not None else np.full(len(up), np.nan)
        return DicePose(up, normal, agreed, tilt, view)
