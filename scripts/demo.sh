#!/usr/bin/env bash
# Set up a fresh machine (system packages, .venv) and run diagkg's main job on
# the embedded on-disk store ($DIAGKG_STORE, default ~/.local/share/diagkg/store).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/diagkg demo "$@"
