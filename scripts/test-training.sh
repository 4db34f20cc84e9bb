#!/usr/bin/env bash
# The training tooling's tests (pytest -m train): adds the train extra to .venv (torch with its
# CUDA libraries, ultralytics, onnx, mitsuba: about 6 GB) and runs the tests that need it.
# scripts/test.sh (README command 2, and .ci/run) runs it last.
set -euo pipefail
cd "$(dirname "$0")/.."

.venv/bin/python -m pip install -q -e ".[dev,train]" --config-settings editable_mode=strict
.venv/bin/python -m pytest -m train "$@"
