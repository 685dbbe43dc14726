#!/usr/bin/env bash
# Set up a fresh machine (system packages, .venv) and run the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh --dev
exec .venv/bin/python -m pytest "$@"
