"""Running the ``diagkg`` command line in a subprocess, as a user would."""

from __future__ import annotations

import json
import locale
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

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


TIMEOUT = 120
# DIAGKG_TESTS_COLD_CLI=1: every command starts Python afresh (as DIAGKG does) instead of being forked by the starter
COLD = os.environ.get("DIAGKG_TESTS_COLD_CLI") == "1"
_ROOT = Path(__file__).resolve().parents[2]


class _Starter:
    """This test process's :mod:`tests.support.cli_zygote` (started at its first command)."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.python = _python_settings(os.environ)
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        code = "import sys; from tests.support.cli_zygote import main; main(int(sys.argv[1]))"
        self.process = subprocess.Popen([sys.executable, "-c", code, str(theirs.fileno())], cwd=_ROOT,
                                        pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        theirs.close()
        self.lock = threading.Lock()

    def usable(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None


_starter: _Starter | None = None
_starting = threading.Lock()


def _python_settings(env: Mapping[str, str]) -> dict[str, str]:
    """What Python reads of the environment as it starts (PYTHONPATH, PYTHONHASHSEED, …): a command whose
    differ from the starter's is started afresh."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


def _text(data: bytes) -> str:
    """What ``subprocess.run(..., text=True)`` makes of a stream's bytes."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``diagkg ARGS`` in a process of its own, its output captured as text; forked by this test process's
    starter (:mod:`tests.support.cli_zygote`, the imports done once) unless :data:`COLD` or ``env`` changes what
    Python reads as it starts (then started afresh, as :data:`DIAGKG` does)."""
    global _starter
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    command = [*DIAGKG, *args]

    def afresh() -> subprocess.CompletedProcess:
        return subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=TIMEOUT)

    with _starting:
        if not COLD and (_starter is None or not _starter.usable()):
            _starter = _Starter()
        starter = _starter
    if COLD or starter is None or _python_settings(full_env) != starter.python:
        return afresh()
    request = {"args": list(args), "env": full_env, "cwd": os.getcwd(), "cap": MEMORY_CAP}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, open(os.devnull, "rb") as null:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with mine:
            try:
                with theirs, starter.lock:
                    socket.send_fds(starter.channel, [b"command"], [theirs.fileno()])
                socket.send_fds(mine, [json.dumps(request).encode()], [null.fileno(), out.fileno(), err.fileno()])
                mine.settimeout(TIMEOUT)
                pid = int(mine.recv(64))
            except (OSError, ValueError):
                return afresh()      # the starter went away before the command started (nothing of it ran)
            try:
                answer = mine.recv(64)
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(command, TIMEOUT) from None
            if not answer:
                raise RuntimeError(f"the tests' starter lost the command {args} (pid {pid}) before it ended")
            status = int(answer)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, os.waitstatus_to_exitcode(status), _text(out.read()), _text(err.read()))


SUBCOMMANDS = ["validate", "load", "dump", "query", "update", "remove", "graphs", "queries", "build-systems", "reason", "check",
               "simulate", "run", "transcript", "demo", "import-scenarios", "evaluate", "qualitative", "report", "export",
               "import", "serve", "mcp", "optimum",
               "llm"]
