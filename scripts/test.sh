#!/usr/bin/env bash
# Every check CI runs, from a fresh machine: make the virtual environment, install
# farklecam with its dev and train extras, make sure Debian's chromium is there for
# the browser and live-window tests, then lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,train]"

# Debian's chromium (page test) and Xvfb (live window test); both tests skip, saying why, if these are missing.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }) \
        || echo "scripts/test.sh: could not install ${missing[*]}; the tests that need them will be skipped" >&2
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
