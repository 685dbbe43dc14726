"""The SPARQL endpoint of ``diagkg serve`` beside ``oxigraph serve`` on the same store (issue 31, item 2).

A store gets the shipped catalogue (``load --shipped``); a copy of its folder is served by
``oxigraph serve``, the folder itself by ``diagkg serve`` with its protections as shipped (host
check, body limits, one worker per client address, time and size limits); both take the union
of the named graphs as the default graph. Then, in rounds that
alternate between the servers, ``--clients`` client processes each send their share of
``--queries`` GET requests on kept-alive connections, and the throughput and the latencies are
printed with the load average beside each figure:

* ``ask``: a tiny ``ASK { ?s ?p ?o }``: the per-request cost of each server;
* ``lookup``: one pattern with a bound subject and a LIMIT (also one that cannot be slow);
* ``summary``: the shipped ``system-summary`` query (runs in a worker of diagkg serve).

With ``--before REV`` a third server, ``diagkg serve`` of that git revision (its ``platform/``
extracted with ``git archive``, first on ``PYTHONPATH``), is measured on another copy; with
``--before-without MODULE…`` that server runs as if those installed modules were not (an import
of one fails), to measure what a dependency brings (``--before HEAD --before-without uvloop``: the
same code on asyncio's own event loop).

    .venv/bin/python benchmarks/serve_vs_oxigraph.py [--queries 2000] [--clients 8] [--rounds 2] [--before REV]
        [--before-without MODULE…]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import multiprocessing.synchronize
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from revisions import checkout

ROOT = Path(__file__).resolve().parents[1]
QUERIES = {
    "ask": "ASK { ?s ?p ?o }",
    "lookup": "SELECT ?label WHERE { <https://w3id.org/diagkg/system/three_cubes/main_bulb> "
              "<http://www.w3.org/2000/01/rdf-schema#label> ?label } LIMIT 10",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"the server stopped (exit {proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def client(base: str, query: str, n: int, go: "mp.synchronize.Barrier",
           out: "mp.Queue[tuple[float, float, list[float]]]") -> None:
    latencies = []
    url = base if base.endswith("/query") else base + "/sparql"
    # the default graph is the union of the named graphs on both servers (diagkg's default)
    params = {"query": query, **({"union-default-graph": ""} if base.endswith("/query") else {})}
    with httpx.Client(timeout=120) as c:
        c.get(url, params={"query": "ASK {}"})            # connected before the clock starts
        go.wait()
        start = time.monotonic()
        for _ in range(n):
            t0 = time.monotonic()
            r = c.get(url, params=params, headers={"accept": "application/sparql-results+json"})
            latencies.append(time.monotonic() - t0)
            if r.status_code != 200:
                raise SystemExit(f"{base}: {r.status_code} {r.text[:200]}")
    out.put((start, time.monotonic(), latencies))


def measure(base: str, query: str, total: int, clients: int) -> tuple[float, float, float]:
    """Throughput (from the first request sent to the last answer) and latencies (p50, p95, ms)."""
    ctx = mp.get_context("spawn")
    out: mp.Queue[tuple[float, float, list[float]]] = ctx.Queue()
    go = ctx.Barrier(clients + 1)
    procs = [ctx.Process(target=client, args=(base, query, total // clients, go, out)) for _ in range(clients)]
    for p in procs:
        p.start()
    go.wait()            # every client connected: start
    got = [out.get() for _ in procs]
    for p in procs:
        p.join()
    wall = max(e for _, e, _ in got) - min(s for s, _, _ in got)
    latencies = sorted(x for _, _, lat in got for x in lat)
    return len(latencies) / wall, 1000 * statistics.median(latencies), 1000 * latencies[int(0.95 * (len(latencies) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", metavar="REV")
    parser.add_argument("--before-without", nargs="*", default=[], metavar="MODULE",
                        help="modules the --before server cannot import (e.g. uvloop)")
    args = parser.parse_args()
    exe = shutil.which("oxigraph", path=str(Path(sys.executable).parent)) or shutil.which("oxigraph")
    if exe is None:
        raise SystemExit("oxigraph serve is not installed (pip install oxigraph, or scripts/setup.sh --dev)")
    from diagkg.kg.queries import library

    queries = {**QUERIES, "summary": library().get("system-summary").text}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = dict(os.environ, XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")))
        store = base / "store"
        subprocess.run([sys.executable, "-m", "diagkg.cli", "--store", str(store), "load", "--shipped"],
                       check=True, capture_output=True, env=env)
        servers: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}
        shutil.copytree(store, base / "oxigraph")
        port = free_port()
        proc = subprocess.Popen([exe, "serve", "--location", str(base / "oxigraph"), "--bind", f"127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        servers["oxigraph serve"] = (f"http://127.0.0.1:{port}/query", proc)
        wait_for(port, proc)
        checkouts = {"diagkg serve": env}
        if args.before:
            hidden = base / "hidden"
            hidden.mkdir()
            for module in args.before_without:
                (hidden / f"{module}.py").write_text(f"raise ImportError('{module} hidden by the benchmark')\n")
            path = os.pathsep.join([str(checkout(args.before, base / "before"))] + ([str(hidden)] if args.before_without else []))
            label = args.before + (f" without {', '.join(args.before_without)}" if args.before_without else "")
            checkouts[f"diagkg serve ({label})"] = dict(env, PYTHONPATH=path)
            shutil.copytree(store, base / "store-before")
        try:
            for name, server_env in checkouts.items():
                port = free_port()
                where = store if name == "diagkg serve" else base / "store-before"
                proc = subprocess.Popen([sys.executable, "-m", "diagkg.cli", "--store", str(where), "serve",
                                         "--port", str(port)], env=server_env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                servers[name] = (f"http://127.0.0.1:{port}", proc)
                wait_for(port, proc)
            for url, _ in servers.values():       # warm up: workers started, pages cached
                measure(url, queries["ask"], 2 * args.clients, args.clients)
            results: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
            for r in range(args.rounds):
                for what, text in queries.items():
                    for name, (url, _) in servers.items():
                        qps, p50, p95 = measure(url, text, args.queries if what != "summary" else args.queries // 10,
                                                args.clients)
                        results.setdefault((what, name), []).append((qps, p50, p95, os.getloadavg()[0]))
                        print(f"round {r + 1} {what:<8} {name:<30} {qps:7.0f} q/s  p50 {p50:7.1f} ms  "
                              f"p95 {p95:7.1f} ms  (load {os.getloadavg()[0]:.1f})", flush=True)
            print(f"\nmedians over {args.rounds} round(s), {args.clients} clients")
            for what in queries:
                ox_qps = statistics.median(x[0] for x in results[(what, "oxigraph serve")])
                for name in servers:
                    rows = results[(what, name)]
                    qps = statistics.median(x[0] for x in rows)
                    p50 = statistics.median(x[1] for x in rows)
                    loads = ", ".join(f"{x[3]:.1f}" for x in rows)
                    print(f"  {what:<8} {name:<30} {qps:7.0f} q/s  p50 {p50:7.1f} ms  "
                          f"oxigraph/this {ox_qps / qps:4.2f}x  (load {loads})")
        finally:
            for _, proc in servers.values():
                proc.terminate()
                proc.wait(30)


if __name__ == "__main__":
    main()
