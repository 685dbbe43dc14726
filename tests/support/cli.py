"""Running the ``diagkg`` command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys

# Every command the tests start (through DIAGKG; the opt-in local-model test alone starts its server
# without it) runs with at most MEMORY_CAP bytes of address space (children such as the reasoner's Java
# or campaign workers inherit it): a command whose memory runs away fails with a
# MemoryError and its traceback on stderr, where the test shows it, instead of growing until the kernel
# kills it (or another process) without a word: once, a `diagkg load` run beside a campaign grew to
# 21 GB and was killed so (docs/results/2026-12.md). A failed allocation in the store's Rust code aborts
# the process without a Python traceback: faulthandler then prints the Python stack of every thread,
# which says which call ran away.
MEMORY_CAP = 12 * 2**30
_LAUNCH = ("import faulthandler, resource, runpy, sys; faulthandler.enable(all_threads=True); "
           "resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap})); "
           "sys.argv[0] = 'diagkg'; runpy.run_module('diagkg.cli', run_name='__main__', alter_sys=True)")
DIAGKG = [sys.executable, "-c", _LAUNCH.format(cap=MEMORY_CAP)]


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    return subprocess.run([*DIAGKG, *args], capture_output=True, text=True, env=full_env, timeout=120)


SUBCOMMANDS = ["validate", "load", "dump", "query", "update", "remove", "graphs", "queries", "build-systems", "reason", "check",
               "simulate", "run", "transcript", "demo", "import-scenarios", "evaluate", "qualitative", "report", "export",
               "import", "serve", "mcp", "optimum",
               "llm"]
