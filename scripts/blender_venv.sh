#!/usr/bin/env bash
# Make the Blender venv that runs `python -m farklecam.datasets.blender` (the third scene generator).
#
# bpy (Blender 4.5 as a Python module) needs Python 3.11 exactly and numpy<2, while farklecam
# pins numpy 2, so it gets its own interpreter instead of an extra. The repo itself is not
# installed there: run from the repo root, which puts `datasets` on the path.
#
#   scripts/blender_venv.sh [PATH]      # default: .venv-blender in the repo root (git-ignored)
#   .venv-blender/bin/python -m farklecam.datasets.blender --out DIR --count N --seed S
#
# The bpy wheel is about 1 GB unpacked: where the disk is short, pass a PATH on a larger one
# (and point TMPDIR there too while pip unpacks), e.g. scripts/blender_venv.sh /dev/shm/bw_venv
# and `ln -s /dev/shm/bw_venv .venv-blender`. The render test finds the venv at
# .venv-blender/bin/python or $FARKLECAM_BLENDER_PYTHON.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${1:-.venv-blender}"
python="${PYTHON311:-python3.11}"
if ! command -v "$python" >/dev/null 2>&1; then
    echo "scripts/blender_venv.sh: needs Python 3.11 ($python not found; set PYTHON311=/path/to/python3.11)" >&2
    exit 2
fi
if [ "$("$python" -c 'import sys; print(sys.version_info[:2] == (3, 11))')" != True ]; then
    echo "scripts/blender_venv.sh: $python is not Python 3.11 (bpy 4.5 supports no other)" >&2
    exit 2
fi

"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q --no-cache-dir -r datasets/blender/requirements.txt
"$venv/bin/python" -c "import bpy; print('bpy', bpy.app.version_string, 'in', '$venv')"
