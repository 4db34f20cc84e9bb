#!/usr/bin/env bash
# The training tooling's tests (pytest -m train): adds the train extra to .venv (torch with its
# CUDA libraries, ultralytics, onnx, mitsuba: about 6 GB) and runs the tests that need it.
# Run scripts/test.sh first; .ci/run runs both.
set -euo pipefail
cd "$(dirname "$0")/.."

.venv/bin/python -m pip install -q -e ".[dev,train]" --config-settings editable_mode=strict
.venv/bin/python -m pytest -m train "$@"
