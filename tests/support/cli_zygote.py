"""A warm starter for the ``diagkg`` commands the tests run (:func:`tests.support.cli.run_cli`).

Half a second of every command a test starts went to starting Python and importing diagkg and its libraries
(rdflib, pyoxigraph, pySHACL, jinja2, rich: a third of the 500 commands' CPU in a run of the suite, measured
with py-spy). This process imports them once (:data:`PRELOAD`) and forks a fresh process for each command:
the command is still a process of its own, with its own arguments, environment, working folder, standard
streams, memory cap and exit status, and runs ``diagkg.cli`` as ``python -m`` would; only the imports are
done before it starts. Started by the first :func:`~tests.support.cli.run_cli` of a test process (one per
pytest worker), it ends with that process (its end of the socket closes).

Each command is asked for on a socket of its own, whose one end comes here over the starter's channel
(``SCM_RIGHTS``); the request (arguments, environment, folder, memory cap) comes on it with the command's three
streams. A first fork serves it: it forks the command, writes its pid, waits for it and writes its wait status,
so that commands started at once from several threads each get their own.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import json
import os
import resource
import runpy
import signal
import socket
import sys
import threading

# imported before any command: what nearly every command imports (nothing here starts a thread)
PRELOAD = ("diagkg.cli.main", "diagkg.kg.store", "diagkg.kg.loading", "diagkg.kg.validation", "diagkg.kg.reasoning",
           "diagkg.kg.shacl", "diagkg.env.service", "diagkg.env.checks", "diagkg.runs.runner", "rdflib", "jinja2",
           "rich.progress")


def _command(request: dict, fds: list[int]) -> None:
    """In the command's process: its streams, folder, environment and cap, then ``diagkg.cli`` as ``__main__``;
    never returns."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    from diagkg.runs import heap

    heap.FREEZE = os.environ.get("DIAGKG_SETTLE", "1") != "0"     # the one setting read as a module is imported
    faulthandler.enable(all_threads=True)
    cap = request["cap"]
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.argv = ["diagkg", *request["args"]]
    try:
        runpy.run_module("diagkg.cli", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        code = _exit_code(exit_)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    # as the interpreter ends: its threads waited for, its exit functions run, its streams flushed; then out,
    # without taking apart every module the starter imported (a tenth of a second)
    threading._shutdown()      # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _exit_code(exit_: SystemExit) -> int:
    """The status ``SystemExit(code)`` ends Python with (a message is printed, and is status 1)."""
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code & 0xFF
    print(exit_.code, file=sys.stderr)
    return 1


def _serve(conn: socket.socket) -> None:
    """In the first fork: start the command, say its pid, wait for it, say how it ended; never returns (this
    process and the command's each end with ``os._exit``)."""
    try:
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = json.loads(message)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
    except BaseException:
        os._exit(1)
    if pid == 0:
        conn.close()
        _command(request, fds)
    try:
        for fd in fds:
            os.close(fd)
        conn.send(str(pid).encode())
        _, status = os.waitpid(pid, 0)
        conn.send(str(status).encode())
    finally:
        os._exit(0)


def main(channel_fd: int) -> None:
    for name in PRELOAD:
        __import__(name)
    channel = socket.socket(fileno=channel_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)      # the first forks are not waited for
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 16, 1)
        except OSError:
            return
        if not message:
            return      # the test process ended
        if os.fork() == 0:
            channel.close()
            _serve(socket.socket(fileno=fds[0]))
        os.close(fds[0])
