"""A bounded loopback load test of ``diagkg serve`` (a real server process on 127.0.0.1).

On a fresh on-disk store holding the shipped catalogue (loaded first), it:

1. sends ``--queries`` SPARQL queries (shipped query files, by GET and POST, from
   ``--clients`` concurrent clients) and reports throughput, latency and errors;
2. starts ``--sessions`` diagnostic sessions at once (``--assistant`` on scenarios
   of the catalogue, round robin), follows each one's server-sent event stream
   concurrently until its end, then checks that every trajectory is in the store
   (``/api/trajectories`` and a SPARQL count): none may be lost.

    .venv/bin/python benchmarks/serve_load.py [--queries 2000] [--clients 8] [--sessions 50]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from _load import load_average

DIAGKG = [sys.executable, "-m", "diagkg.cli"]
TOKEN = "load-test-token"
QUERIES = ["system-summary", "scenario-index", "trajectory-list", "action-catalogue", "graph-summary"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def query_phase(base: str, n: int, clients: int) -> dict[str, float]:
    from diagkg.kg.queries import library

    texts = [library().get(q).text for q in QUERIES]
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(i: int, client: httpx.Client) -> None:
        text = texts[i % len(texts)]
        t0 = time.perf_counter()
        if i % 2:
            r = client.get(base + "/sparql", params={"query": text}, headers={"accept": "application/sparql-results+json"})
        else:
            r = client.post(base + "/sparql", data={"query": text}, headers={"accept": "text/csv"})
        dt = time.perf_counter() - t0
        with lock:
            latencies.append(dt)
            if r.status_code != 200:
                errors.append(f"{r.status_code} {r.text[:80]}")

    def worker(k: int) -> None:
        with httpx.Client(timeout=120) as client:
            for i in range(k, n, clients):
                one(i, client)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(worker, range(clients)))
    wall = time.perf_counter() - t0
    if errors:
        print(f"{len(errors)} query error(s), e.g. {errors[0]}", file=sys.stderr)
    return {"queries": n, "clients": clients, "wall s": wall, "queries/s": n / wall,
            "p50 ms": 1000 * statistics.median(latencies), "p95 ms": 1000 * percentile(latencies, 95),
            "max ms": 1000 * max(latencies), "errors": len(errors)}


def session_phase(base: str, n: int, assistant: str) -> dict[str, float]:
    auth = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(timeout=120) as c:
        scenarios = [s["id"] for s in c.get(base + "/api/scenarios").json()]
        before = {t["trajectory"] for t in c.get(base + "/api/trajectories").json()}
        t0 = time.perf_counter()
        ids = []
        for i in range(n):
            r = c.post(base + "/api/sessions", headers=auth,
                       json={"scenario": scenarios[i % len(scenarios)], "assistant": assistant, "seed": i})
            if r.status_code != 200:
                raise SystemExit(f"starting session {i}: {r.status_code} {r.text}")
            ids.append(r.json()["id"])
    ends: dict[str, dict[str, object]] = {}
    counts: dict[str, int] = {}
    failures: list[str] = []
    lock = threading.Lock()

    def follow(sid: str) -> None:
        rounds = 0
        with httpx.Client(timeout=600) as c, c.stream("GET", f"{base}/api/sessions/{sid}/events") as r:
            for line in r.iter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if event["type"] == "round":
                    rounds += 1
                elif event["type"] == "end":
                    with lock:
                        ends[sid], counts[sid] = event["result"], rounds
                elif event["type"] == "error":
                    with lock:
                        failures.append(event["message"])

    with ThreadPoolExecutor(n) as pool:
        list(pool.map(follow, ids))
    wall = time.perf_counter() - t0
    with httpx.Client(timeout=120) as c:
        after = {t["trajectory"] for t in c.get(base + "/api/trajectories").json()}
        count = c.get(base + "/sparql", params={"query": "PREFIX dk: <https://w3id.org/diagkg/ontology#> "
                                                          "SELECT (COUNT(?t) AS ?n) WHERE { ?t a dk:Trajectory }"}
                      ).json()["results"]["bindings"][0]["n"]["value"]
    made = {str(e["trajectory"]) for e in ends.values()}
    lost = made - after
    if failures:
        print(f"{len(failures)} session error(s), e.g. {failures[0]}", file=sys.stderr)
    streamed_ok = sum(1 for sid in ends if counts[sid] == ends[sid]["rounds"])
    return {"sessions": n, "ended": len(ends), "streams complete": streamed_ok, "errors": len(failures),
            "wall s": wall, "sessions/s": len(ends) / wall, "new trajectories": len(after - before),
            "lost trajectories": len(lost), "trajectories (SPARQL)": int(count)}


def show(title: str, figures: dict[str, float], load: str) -> None:
    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    for k, v in figures.items():
        table.add_row(k, f"{v:,.1f}" if isinstance(v, float) else str(v))
    Console().print(table)
    Console().print(f"({load} as the figures above were measured)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--assistant", default="oracle")
    parser.add_argument("--workers", type=int, default=2, help="SPARQL worker processes of the server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        env = dict(os.environ, DIAGKG_TOKEN=TOKEN)
        subprocess.run([*DIAGKG, "--store", str(store), "load", "--shipped"], check=True, capture_output=True, env=env)
        port = free_port()
        log = Path(tmp) / "serve.log"
        with open(log, "w") as err:
            proc = subprocess.Popen([*DIAGKG, "--store", str(store), "serve", "--port", str(port),
                                     "--workers", str(args.workers)], env=env, stdout=subprocess.PIPE, stderr=err,
                                    text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if "listening on" not in line:
                raise SystemExit(f"diagkg serve did not start: {line}")
            base = f"http://127.0.0.1:{port}"
            queried = query_phase(base, args.queries, args.clients)
            show(f"SPARQL: {args.queries} queries from {args.clients} clients", queried, load_average())
            ran = session_phase(base, args.sessions, args.assistant)
            show(f"Sessions: {args.sessions} concurrent {args.assistant} sessions, each followed over SSE", ran,
                 load_average())
        except Exception:
            print("the server said:\n" + log.read_text()[-3000:], file=sys.stderr)
            raise
        finally:
            proc.terminate()
            proc.wait(30)
            if proc.stdout is not None:
                proc.stdout.close()


if __name__ == "__main__":
    main()
