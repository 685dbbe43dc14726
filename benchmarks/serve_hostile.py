"""The requests of issue 26 against a real ``diagkg serve``, timed (the load average beside each figure).

Starts ``python -m diagkg.cli serve`` on a store (``--store``, by default a fresh one
that gets the shipped catalogue), with ``DIAGKG_TOKEN`` set, then:

- the ``SERVICE`` bypass (an escaped ``#`` in a prefixed name) without the token: the
  status, and whether a local web server started here was fetched;
- crafted bodies of escaped quotes (20 and 40 KB, and 1 MB of other hostile shapes):
  the time to the answer, and the slowest ``GET /`` sent meanwhile;
- a body that declares 50 MB and sends 1 KB: the status line and how long it took;
- ``Host: evil.example``; a non-UTF-8 body; two slow queries from one address while
  another address asks a quick one (the quick one's time).

To compare two checkouts, run it with each one's ``PYTHONPATH`` (``PYTHONPATH=/other/platform``),
one after the other, on the same store.

    .venv/bin/python benchmarks/serve_hostile.py [--store PATH] [--skip-slow]
"""

from __future__ import annotations

import argparse
import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from _load import load_average

TOKEN = "hostile-benchmark-token"
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Remote(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


def timed_while_page(base: str, send) -> tuple[float, int, float]:  # type: ignore[no-untyped-def]
    """Run ``send`` in a thread; poll ``GET /`` meanwhile. (seconds, status, slowest page seconds)."""
    out: dict[str, object] = {}

    def run() -> None:
        t = time.perf_counter()
        out["status"] = send()
        out["t"] = time.perf_counter() - t

    thread = threading.Thread(target=run)
    thread.start()
    worst = 0.0
    time.sleep(0.02)
    while thread.is_alive():
        t = time.perf_counter()
        httpx.get(base + "/", timeout=600)
        worst = max(worst, time.perf_counter() - t)
        time.sleep(0.05)
    thread.join()
    return float(out["t"]), int(out["status"]), worst  # type: ignore[arg-type, call-overload]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path)
    ap.add_argument("--skip-slow", action="store_true", help="leave out the two slow queries (30 s)")
    args = ap.parse_args()
    store = args.store or Path(tempfile.mkdtemp(prefix="diagkg-hostile-")) / "store"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "diagkg.cli", "--store", str(store), "serve", "--port", str(port)],
                            env=dict(os.environ, DIAGKG_TOKEN=TOKEN), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        print(proc.stdout.readline().strip(), flush=True)
        httpx.get(base + "/api/systems", timeout=600)           # the shipped catalogue is in
        remote = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Remote)
        threading.Thread(target=remote.serve_forever, daemon=True).start()
        bypass = ("PREFIX ex: <urn:ex:> SELECT * WHERE { OPTIONAL { ?x ex:a\\# ?y } SERVICE "
                  f"<http://127.0.0.1:{remote.server_port}/anything> {{ ?s ?p ?o }} }} LIMIT 1")
        r = httpx.get(base + "/sparql", params={"query": bypass}, timeout=60)
        print(f"SERVICE bypass without the token: {r.status_code}, fetched: {bool(_Remote.hits)}  ({load_average()})")
        bodies = {
            "escaped quotes 20 KB": 'SELECT * WHERE { ?s ?p "' + '\\"' * 10_000,
            "escaped quotes 40 KB": 'SELECT * WHERE { ?s ?p "' + '\\"' * 20_000,
            "escaped quotes 40 KB + SERVICE": 'SELECT * WHERE { ?s ?p "' + '\\"' * 20_000 + " SERVICE",
            "1 MB of (1) after SERVICE": "SELECT * WHERE { SERVICE <urn:x> {} FILTER" + "(1)" * 330_000 + " }",
            "1 MB of words": "SELECT * WHERE { " + "SERVICE " * 124_000 + "}",
        }
        for name, body in bodies.items():
            t, status, worst = timed_while_page(base, lambda body=body: httpx.post(
                base + "/sparql", content=body, headers={"content-type": "application/sparql-query"},
                timeout=600).status_code)
            print(f"{name:32s}: {status} in {t:.3f} s; slowest GET / meanwhile {worst:.3f} s  ({load_average()})")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            t = time.perf_counter()
            s.sendall(f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/sparql-query\r\n"
                      "Content-Length: 50000000\r\n\r\n".encode() + b"x" * 1000)
            s.settimeout(10)
            try:
                head = s.recv(200).decode("latin-1").splitlines()[0]
            except TimeoutError:
                head = "no answer within 10 s (waiting for the body)"
            print(f"50 MB declared, 1 KB sent: {head!r} after {time.perf_counter() - t:.3f} s  ({load_average()})")
        r = httpx.get(base + "/api/systems", headers={"host": "evil.example"})
        print(f"Host: evil.example: {r.status_code}")
        r = httpx.post(base + "/sparql", content=b"ASK { \xff }", headers={"content-type": "application/sparql-query"})
        print(f"a non-UTF-8 body: {r.status_code}")
        if not args.skip_slow:
            threads = [threading.Thread(target=lambda: httpx.get(base + "/sparql", params={"query": SLOW}, timeout=600))
                       for _ in range(2)]
            for th in threads:
                th.start()
            time.sleep(0.5)
            other = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=600)
            t = time.perf_counter()
            r = other.get(base + "/sparql", params={"query": "ASK { ?s ?p ?o }"})
            print(f"a quick query from 127.0.0.2 while 127.0.0.1 runs two slow ones: {r.status_code} in "
                  f"{time.perf_counter() - t:.3f} s  ({load_average()})")
            other.close()
            for th in threads:
                th.join()
    finally:
        proc.terminate()
        proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
