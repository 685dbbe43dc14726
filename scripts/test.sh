#!/usr/bin/env bash
# Set up a fresh machine (system packages, .venv) and run the whole test suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh --dev
echo "test: ruff"
.venv/bin/ruff check platform tests benchmarks
echo "test: mypy (strict on the package)"
.venv/bin/mypy
echo "test: pytest (2 workers; slow end-to-end tests included)"
exec .venv/bin/python -m pytest -n 2 "$@"
