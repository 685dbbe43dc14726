"""Writers taking turns on one on-disk store: while a real ``diagkg evaluate`` runs, a
``diagkg run`` and a ``diagkg load --wait 5`` are started; prints how long each took, its exit
code, and whether its work reached the store, then the campaign's own time and count.

    .venv/bin/python benchmarks/writer_turns.py [--runs 40] [--store DIR] [--workers 1] [--wait 60]

The store holds the shipped catalogue; the campaign runs two assistants over the first ten
scenarios (``--runs`` seeds each). ``--wait`` is the ``run``'s own ``--wait`` (how long it waits
for the write lock before giving up). The load average is printed beside each figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

from _load import load_average
from diagkg.errors import StoreError
from diagkg.kg.turns import open_read_only

DIAGKG = [sys.executable, "-m", "diagkg.cli"]
ASSISTANTS = "oracle,random-search"


def trajectory_graphs(store: Path) -> int:
    try:      # a snapshot may lose a file to the writer's compaction while it is read: then 0 this time
        raw = open_read_only(store)
        return sum(1 for g in raw.named_graphs() if "/graph/trajectory/" in g.value)
    except (OSError, RuntimeError, StoreError):
        return 0


def has_graph(store: Path, iri: str) -> bool:
    raw = open_read_only(store)
    return raw.contains_named_graph(ox.NamedNode(iri))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--wait", type=float, default=60.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="diagkg-turns-"))
    store = args.store or folder / "store"
    subprocess.run([*DIAGKG, "--store", str(store), "load", "--shipped"], check=True, capture_output=True)
    extra = folder / "note.ttl"
    extra.write_text('<urn:diagkg-bench:note> <http://www.w3.org/2000/01/rdf-schema#label> "written meanwhile" .\n')
    before = trajectory_graphs(store)
    t0 = time.perf_counter()
    campaign = subprocess.Popen([*DIAGKG, "--store", str(store), "evaluate", "--assistant", ASSISTANTS,
                                 "--scenarios", "1-10", "--runs", str(args.runs), "--workers", str(args.workers),
                                 "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while campaign.poll() is None and trajectory_graphs(store) < before + 5:
        time.sleep(0.05)
    if campaign.poll() is not None:
        raise SystemExit("the campaign ended before the other writers started: give more --runs")
    started = time.perf_counter() - t0
    r0 = time.perf_counter()
    run = subprocess.run([*DIAGKG, "--store", str(store), "--wait", str(args.wait), "run", "--scenario", "1",
                          "--assistant", "oracle", "--format", "json"], capture_output=True, text=True)
    run_s = time.perf_counter() - r0
    stored = False
    if run.returncode == 0:
        stored = has_graph(store, json.loads(run.stdout)["trajectory"].replace(
            "/trajectory/", "/graph/trajectory/"))
    print(f"run during evaluate (started {started:.1f} s in): {run_s:.2f} s, exit {run.returncode}, "
          f"trajectory stored: {'yes' if stored else 'NO'}   [{load_average()}]")
    if run.returncode != 0:
        print("  " + run.stderr.strip().splitlines()[-1])
    l0 = time.perf_counter()
    loaded = subprocess.run([*DIAGKG, "--store", str(store), "--wait", "5", "load", str(extra)],
                            capture_output=True, text=True)
    load_s = time.perf_counter() - l0
    print(f"load --wait 5 during evaluate: {load_s:.2f} s, exit {loaded.returncode}, "
          f"campaign still running: {'yes' if campaign.poll() is None else 'no'}   [{load_average()}]")
    if loaded.returncode != 0:
        print("  " + loaded.stderr.strip().splitlines()[-1])
    out, err = campaign.communicate()
    total = time.perf_counter() - t0
    if campaign.returncode != 0:
        print(f"evaluate failed ({campaign.returncode}): {err.strip()[-400:]}")
        return
    summary = json.loads(out.strip().splitlines()[-1])
    commits = (f", {summary['commits']} commits: the longest {summary['longest_commit']:.2f} s with the wait for "
               f"the lock, the lock held {summary['longest_hold']:.2f} s at most" if "longest_hold" in summary else "")
    print(f"evaluate: {summary['trajectories']} trajectories in {total:.1f} s "
          f"({summary['seconds']:.1f} s running sessions{commits})   [{load_average()}]")


if __name__ == "__main__":
    main()
