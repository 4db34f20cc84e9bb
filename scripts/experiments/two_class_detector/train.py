"""Experiment record (rule 81d0657): fine-tune the two-class detector 5 epochs (resumes where it stopped)."""

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

sys.path.insert(0, str(REPO))
from farklecam.models.training.detector import DetectorConfig, train_detector

OUT = Path(f"{REPO}/runs/twoclass")
config = DetectorConfig(epochs=5, threads=2, warmup_epochs=1.0, mosaic_off=1)
t = time.time()
best = train_detector(OUT / "data" / "data.yaml", OUT / "run", config, init=OUT / "init.pt")
print("best", best, "seconds", round(time.time() - t))
