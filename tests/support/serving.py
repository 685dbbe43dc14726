"""A real ``diagkg serve`` on a store of the torch written in the tests."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from diagkg.kg.loading import LOADED_FROM, load_files
from diagkg.kg.store import KnowledgeStore

from .cli import DIAGKG
from .torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

TOKEN = "s3cret-token"
LOCAL = "http://localhost"        # a TestClient's base URL: a host name the server serves (421 otherwise)


TORCH_NS = "https://example.org/torch/"


# what torch_store loaded first in this process: (the folder it was loaded from, the store's quads), by content
_LOADED: dict[tuple[str, str], tuple[str, list[ox.Quad]]] = {}


def _moved(quad: ox.Quad, origin: str, folder: str) -> ox.Quad:
    """``quad``, a ``dk:loadedFrom`` path under ``origin`` made the same path under ``folder``."""
    if quad.predicate == LOADED_FROM and isinstance(quad.object, ox.Literal) and quad.object.value.startswith(origin):
        return ox.Quad(quad.subject, quad.predicate, ox.Literal(folder + quad.object.value[len(origin):]), quad.graph_name)
    return quad


def torch_store(folder: Path) -> Path:
    """An on-disk store holding the torch and one scenario, written in the test (``torch.ttl``, ``t1.ttl``).

    The first call in a test process loads the files (validation, reasoning); later ones write the same quads,
    ``dk:loadedFrom`` naming their own folder's files, into their new store: the same store, without the
    validation and reasoning (about a second each time, in some 170 tests)."""
    (folder / "torch.ttl").write_text(TORCH)
    scenario = scenario_text(**FLAT)
    (folder / "t1.ttl").write_text(scenario)
    path = folder / "store"
    store = KnowledgeStore(path)
    try:
        first = _LOADED.get((TORCH, scenario))
        if first is None:
            load_files(store, [folder / "torch.ttl", folder / "t1.ttl"])
            _LOADED[(TORCH, scenario)] = (str(folder) + os.sep, list(store.raw.quads_for_pattern(None, None, None, None)))
        else:
            origin, quads = first
            store.add_quads([_moved(q, origin, str(folder) + os.sep) for q in quads])
    finally:
        store.close()
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(store: Path, *extra: str, token: str | None = TOKEN) -> tuple[subprocess.Popen[str], str]:
    """A real ``diagkg serve`` process on a free port; returns it and its base URL."""
    port = free_port()
    env = dict(os.environ)
    env.pop("DIAGKG_TOKEN", None)
    if token:
        env["DIAGKG_TOKEN"] = token
    log = open(store.parent / f"serve-{port}.log", "w")   # noqa: SIM115 - closed by stop_server
    proc = subprocess.Popen([*DIAGKG, "--store", str(store), "serve", "--port", str(port), *extra],
                            env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    log.close()
    assert proc.stdout is not None
    line = proc.stdout.readline()       # "listening on http://127.0.0.1:PORT/": connections queue from now on
    if "listening on" not in line:
        stop_server(proc)
        raise AssertionError(f"diagkg serve did not start: {line}{(store.parent / f'serve-{port}.log').read_text()}")
    return proc, f"http://127.0.0.1:{port}"


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()


def broken_scenario() -> str:
    """The loose-lead scenario with a misspelt property (the budget is then missing too)."""
    return scenario_text(**LOOSE_LEAD).replace("dk:actionBudget 10", "dk:actionBudgett 10")


def wait_session(client: Any, sid: str, done: bool = False, timeout: float = 60) -> dict[str, Any]:
    """A live session's state (``GET /api/sessions/{sid}`` through the HTTP client ``client``) once it waits for a
    person (its ``pending`` question) or has ended; with ``done``, once it has ended."""
    deadline = time.monotonic() + timeout
    while True:
        s: dict[str, Any] = client.get(f"/api/sessions/{sid}").json()
        if s["status"] in ("done", "failed") or (not done and s["pending"]):
            return s
        if time.monotonic() > deadline:
            raise AssertionError(f"session {sid} neither {'ended' if done else 'waited nor ended'} in {timeout:g} s: {s}")
        time.sleep(0.05)
