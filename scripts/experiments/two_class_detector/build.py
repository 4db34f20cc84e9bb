"""Experiment record (rule 81d0657): stage 6's float ONNX weights as a two-class yolov8n checkpoint, and its dataset.

Needs ``runs/dets/stage6_float.onnx`` (``git show 1ca70c0^:models/die_detector.onnx``) and the generated
folders of ``python -m farklecam.datasets.rebuild --training`` plus ``data/synth_lean2``
(``docs/experiments/training.json``).
Then ``train.py`` fine-tunes it and ``measure.py CHECKPOINT`` prints the rule's table.
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
import numpy as np

sys.path.insert(0, str(REPO))
from farklecam.models.training.offline import go_offline

go_offline()
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from farklecam.datasets.training_sets import build_detector_dataset, real_frames, synthetic_frames
from farklecam.datasets.yolo import COCKED_CLASS

OUT = Path(f"{REPO}/runs/twoclass")
src = onnx.load(f"{REPO}/runs/dets/stage6_float.onnx")
weights = {t.name: numpy_helper.to_array(t) for t in src.graph.initializer}
from ultralytics.nn.tasks import DetectionModel

model = DetectionModel("yolov8n.yaml", nc=2, verbose=False)
modules = dict(model.named_modules())
done = 0
for name, w in weights.items():
    if not name.endswith(".weight"):
        continue
    mod_name = name[: -len(".weight")]
    conv = modules[mod_name]
    bias = weights[mod_name + ".bias"]
    parent = mod_name.rsplit(".", 1)[0]
    w_t, b_t = torch.from_numpy(w.copy()), torch.from_numpy(bias.copy())
    if w_t.shape[0] == 1 and conv.weight.shape[0] == 2:  # the class conv: both classes start as "die"
        w_t, b_t = w_t.repeat(2, 1, 1, 1), b_t.repeat(2)
    assert conv.weight.shape == w_t.shape, (name, conv.weight.shape, w_t.shape)
    with torch.no_grad():
        conv.weight.copy_(w_t)
        bn = modules.get(parent + ".bn") if mod_name.endswith(".conv") else None
        if bn is not None:
            bn.weight.fill_(1.0)
            bn.bias.copy_(b_t)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        else:
            conv.bias.copy_(b_t)
    done += 1
print("loaded", done, "convolutions")
# check: the class logits of channel 0 equal the ONNX's
model.eval()
seen = {}
hooks = [
    modules[f"model.22.cv3.{i}"].register_forward_hook(lambda m, a, o, i=i: seen.__setitem__(i, o.detach().numpy()))
    for i in range(3)
]
x = np.random.default_rng(0).random((1, 3, 256, 320), dtype=np.float32)
with torch.no_grad():
    model(torch.from_numpy(x))
sess = ort.InferenceSession(f"{REPO}/runs/dets/stage6_float.onnx", providers=["CPUExecutionProvider"])
outs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"images": x}), strict=True))
for i, s in enumerate((8, 16, 32)):
    print(s, np.abs(seen[i][:, :1] - outs[f"logits_{s}"]).max(), np.abs(seen[i][:, 1:] - outs[f"logits_{s}"]).max())
for h in hooks:
    h.remove()
model.names = {0: "flat", 1: "leaning"}
model.yaml["nc"] = 2
torch.save({"model": model, "train_args": {}, "epoch": -1, "date": "rule 81d0657"}, OUT / "init.pt")

# dataset: the detector's training frames, leaning dice as class 1
frames = real_frames(hold_validation=True)
for folder in ("synth", "synth_lean", "synth_v2", "synth_lean2"):
    frames += synthetic_frames(Path(f"{REPO}/data") / folder)
written = build_detector_dataset(
    OUT / "data", frames, names=("flat", "leaning"), label_class=lambda c: int(c == COCKED_CLASS)
)
print(len(frames), "frames", written.counts)
