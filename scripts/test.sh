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
# mypy and mkdocs take one core each for half a minute: they run beside pytest, whose two workers
# leave a core idle now and then, and say what they found once pytest is done
checks="$(mktemp -d)"
trap 'rm -rf "$checks"' EXIT
echo "test: mypy (strict on the package) and the documentation site (mkdocs build --strict: warnings are errors), beside pytest"
( .venv/bin/mypy >"$checks/mypy.log" 2>&1; echo $? >"$checks/mypy.rc" ) &
( NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir site >"$checks/mkdocs.log" 2>&1
  echo $? >"$checks/mkdocs.rc" ) &
# pytest keeps the test modules it rewrites (assertions) as bytecode unless PYTHONDONTWRITEBYTECODE is set,
# as it is on some machines: every worker then rewrites all of them at every run (about 10 s of a core each)
unset PYTHONDONTWRITEBYTECODE
echo "test: pytest (2 workers; slow end-to-end tests included)"
status=0
.venv/bin/python -m pytest -n 2 --dist worksteal "$@" || status=$?
wait
for check in mypy mkdocs; do
  rc="$(cat "$checks/$check.rc")"
  echo "test: $check (exit $rc)"
  if [ "$rc" != 0 ]; then cat "$checks/$check.log"; status=1; else tail -n 1 "$checks/$check.log"; fi
done
exit "$status"
