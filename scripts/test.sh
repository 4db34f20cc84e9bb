#!/usr/bin/env bash
# The product's checks from a fresh clone, CPU only (README command 2; .ci/run runs it first):
#   1. .venv with farklecam and its dev extra (about 1.2 GB; no torch);
#   2. Debian's chromium and Xvfb for the page and live-window tests, with apt-get when run as
#      root and they are missing (about 400 MB on the system; otherwise those tests skip, saying why);
#   3. a throwaway PostgreSQL cluster in .pg/ (scripts/postgres.sh, which installs Debian's postgresql
#      with apt-get when run as root and it is missing) for the storage tests' PostgreSQL half, its URL in
#      FARKLECAM_TEST_POSTGRES unless that is set already (without a server those tests skip, saying why);
#   4. ruff, mypy and pytest (the tests marked `train` left out);
#   5. the training tooling's tests: scripts/test-training.sh adds the train extra (torch, ultralytics:
#      about 6 GB) and runs the tests marked `train`. FARKLECAM_SKIP_TRAINING=1 leaves this step out.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# editable_mode=strict installs a tree of links to the source files, which mypy can follow
# (the default editable mode is an import hook, which it cannot).
.venv/bin/python -m pip install -q -e ".[dev]" --config-settings editable_mode=strict

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: installing ${missing[*]} with apt-get for the page and live-window tests" >&2
    (apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }) \
        || echo "scripts/test.sh: could not install ${missing[*]}; the tests that need them will be skipped" >&2
fi

if [ -z "${FARKLECAM_TEST_POSTGRES:-}" ]; then
    if FARKLECAM_TEST_POSTGRES=$(bash scripts/postgres.sh); then
        export FARKLECAM_TEST_POSTGRES
        trap 'bash scripts/postgres.sh stop' EXIT
    else
        unset FARKLECAM_TEST_POSTGRES
        echo "scripts/test.sh: no PostgreSQL server; the storage tests' PostgreSQL half will be skipped" >&2
    fi
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy from outside the checkout, so it reads the installed link tree rather than ./farklecam alone.
root="$PWD"
(cd "$(mktemp -d)" && "$root/.venv/bin/mypy" --config-file "$root/pyproject.toml")
.venv/bin/python -m pytest -m "not train" "$@"
if [ "${FARKLECAM_SKIP_TRAINING:-}" != 1 ]; then
    bash scripts/test-training.sh
fi
