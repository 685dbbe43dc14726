#!/usr/bin/env bash
# Set up the ORIGINAL research simulator for the baseline measurement, outside
# this repository: two checkouts and a venv of their own.
#
#   benchmarks/original/setup.sh [SIM_DIR] [DEMO_DIR]
#
# SIM_DIR   checkout of kataph/diagnosable-systems-simulation (default /work/original/sim)
# DEMO_DIR  checkout of kataph/Diagnostic-Assistant-Demo      (default /work/original/demo)
# Env: VENV (default /work/original/venv), PYTHON (default python3.11),
#      SIM_SOURCE / DEMO_SOURCE (where to clone from when a directory does not
#      exist yet: a URL or a local git dir; defaults are the GitHub URLs).
#
# A directory that is already a checkout is used as it is (a warning is printed
# if its HEAD is not the commit the README's figures were measured at, or if it
# has local changes).  A fresh clone is put on that commit.
set -euo pipefail

SIM_DIR=${1:-/work/original/sim}
DEMO_DIR=${2:-/work/original/demo}
VENV=${VENV:-/work/original/venv}
PYTHON=${PYTHON:-python3.11}
SIM_SOURCE=${SIM_SOURCE:-https://github.com/kataph/diagnosable-systems-simulation.git}
DEMO_SOURCE=${DEMO_SOURCE:-https://github.com/kataph/Diagnostic-Assistant-Demo.git}
SIM_COMMIT=f5d7cfdc15b558e551b4a7d64327111db6da659d
DEMO_COMMIT=3d23593e6bd68a9a9654bdebe988376c4faf15dd
HERE=$(cd "$(dirname "$0")" && pwd)

checkout() {  # dir source commit
    local dir=$1 source=$2 commit=$3
    if ! git -C "$dir" rev-parse --git-dir >/dev/null 2>&1; then
        echo "cloning $source -> $dir"
        git clone -q "$source" "$dir"
        git -C "$dir" -c advice.detachedHead=false checkout -q "$commit"
    fi
    local head
    head=$(git -C "$dir" rev-parse HEAD)
    if [ "$head" != "$commit" ]; then
        echo "WARNING: $dir is at $head, the README's figures are for $commit" >&2
    fi
    if [ -n "$(git -C "$dir" status --porcelain --untracked-files=no)" ]; then
        echo "WARNING: $dir has local changes to tracked files" >&2
    fi
    echo "$dir @ $head"
}

checkout "$SIM_DIR" "$SIM_SOURCE" "$SIM_COMMIT"
checkout "$DEMO_DIR" "$DEMO_SOURCE" "$DEMO_COMMIT"

if ! ldconfig -p 2>/dev/null | grep -q 'libngspice\.so'; then
    echo "ERROR: the ngspice shared library is missing (Debian/Ubuntu: apt-get install libngspice0)" >&2
    exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
# The simulator's pyproject needs numpy; its [spice] extra needs PySpice>=1.5.
"$VENV/bin/pip" install -q -r "$HERE/requirements.txt"

# Byte-compile the original's sources, as an installed package would be, so the
# whole-process figure does not include recompiling them on every run.
"$VENV/bin/python" -m compileall -q "$SIM_DIR/diagnosable_systems_simulation" >/dev/null

echo "smoke test:"
ORIGINAL_SIM="$SIM_DIR" "$VENV/bin/python" "$HERE/original_simulate.py" 2>/dev/null
