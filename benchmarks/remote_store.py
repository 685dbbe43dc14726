"""The embedded store against a remote one (``oxigraph serve`` on 127.0.0.1), through the same
store interface, in one process.

Prints, for an on-disk embedded store and for a fresh ``oxigraph serve --location DIR``:

* loading the shipped catalogue (5 systems with their inferences, 135 scenarios);
* one session (``3CC.S.3``, neuro-symbolic, no LLM), median of N;
* one query (``trajectory-list``) and one query with a bound value (``scenario-details``), median of N.

Each backend runs in a process of its own, after one load that warms the inference cache.

    .venv/bin/python benchmarks/remote_store.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import pyoxigraph as ox

from _load import load_average, load_averages
from diagkg.kg.loading import load_shipped
from diagkg.kg.remote import connect
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session


def start_server(location: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = shutil.which("oxigraph", path=str(Path(sys.executable).parent)) or shutil.which("oxigraph")
    if exe is None:
        sys.exit("oxigraph serve is not installed (pip install oxigraph, or scripts/setup.sh --dev)")
    proc = subprocess.Popen([exe, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("oxigraph serve did not start")


def median_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(store: KnowledgeStore, runs: int) -> dict[str, float]:
    t0 = time.perf_counter()
    load_shipped(store)
    load = time.perf_counter() - t0
    session = median_of(runs, lambda: run_session("3CC.S.3", "neuro-symbolic", seed=0, store=store))
    listing = median_of(runs, lambda: store.select("trajectory-list"))
    scenario = store.select("scenario-index", {"id": "3CC.S.3"})[0]["scenario"]
    bound = median_of(runs, lambda: store.select("scenario-details", {"scenario": ox.NamedNode(scenario)}))
    return {"load --shipped": load, "one session": session, "trajectory-list": listing, "scenario-details (bound)": bound}


def one_backend(backend: str, base: Path, runs: int) -> dict[str, float]:
    if backend == "embedded":
        with KnowledgeStore(base / "embedded") as embedded:
            return measure(embedded, runs)
    proc, url = start_server(base / "served")
    try:
        with connect(url) as remote:
            return measure(remote, runs)
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", choices=("embedded", "remote"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.backend:          # one backend, in a process of its own (no cache carried over)
            print(json.dumps({**one_backend(args.backend, base, args.runs), "load": load_averages()}))
            return
        # warm the inference cache once, so that neither backend pays for the reasoner
        load_shipped(KnowledgeStore.memory())
        figures = {}
        loads = {}
        for backend in ("embedded", "remote"):
            out = subprocess.run([sys.executable, __file__, "--backend", backend, "--runs", str(args.runs)],
                                 check=True, capture_output=True, text=True).stdout
            figures[backend] = json.loads(out.strip().splitlines()[-1])
            loads[backend] = load_average(figures[backend].pop("load"))
    local, served = figures["embedded"], figures["remote"]
    print(f"{'':28} {'embedded':>10} {'oxigraph serve':>15} {'ratio':>7}")
    for name, value in local.items():
        print(f"{name:28} {value:9.3f}s {served[name]:14.3f}s {served[name] / value:6.1f}×")
    print(f"(embedded: {loads['embedded']}; oxigraph serve: {loads['remote']}; each as its process ended)")


if __name__ == "__main__":
    main()
