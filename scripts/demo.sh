#!/usr/bin/env bash
# Set up a fresh machine (system packages, .venv) and run diagkg's main job on
# an on-disk store: --store PATH, else $DIAGKG_STORE, else ~/.local/share/diagkg/store.
# It says which store it writes before it writes. Other options go to `diagkg demo`.
#
#   bash scripts/demo.sh                       # the default store (named on the first line)
#   bash scripts/demo.sh --store /tmp/demo-store --scenario 5
set -euo pipefail
# a relative --store is relative to where the script was started, not to the checkout it moves into
absolute() { case "$1" in /*|*://*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
store=()
rest=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --store) [ "$#" -ge 2 ] || { echo "demo.sh: --store needs a PATH" >&2; exit 2; }
             store=(--store "$(absolute "$2")"); shift 2 ;;
    --store=*) store=(--store "$(absolute "${1#--store=}")"); shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/diagkg "${store[@]}" demo "${rest[@]}"
