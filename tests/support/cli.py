"""Running the ``diagkg`` command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys

DIAGKG = [sys.executable, "-m", "diagkg.cli"]


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    return subprocess.run([*DIAGKG, *args], capture_output=True, text=True, env=full_env, timeout=120)


SUBCOMMANDS = ["validate", "load", "dump", "query", "update", "remove", "graphs", "queries", "build-systems", "reason", "check",
               "simulate", "run", "transcript", "demo", "import-scenarios", "evaluate", "qualitative", "report", "export",
               "import", "serve", "mcp", "optimum",
               "llm"]
