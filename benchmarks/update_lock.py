"""How long other writers wait while a SPARQL update runs: the one write path
(``diagkg.kg.updates.apply_update``: worked out on a snapshot in a worker process, the write
lock held only to apply the change) against running the update under the lock
(``KnowledgeStore.update``, what ``diagkg update`` and the server's ``/sparql`` did before).

    .venv/bin/python benchmarks/update_lock.py [--rounds 2] [--pairs 1]

The store holds the shipped three-cubes system and a scenario; the update counts the pairs of
triples of the ontology graph (``--pairs 2``: triples of them, far slower) and writes one
triple, so it evaluates for a few seconds. Meanwhile a second process writes one triple every 50 ms (each
write opens the store for writing and waits for the lock) and reports the longest of its
writes. A system update (three_cubes' main bulb, validated with its scenario and reasoned over)
is timed last. The two ways are interleaved; the load average is printed beside each figure.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _load import load_average
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.updates import apply_update

ROOT = Path(__file__).resolve().parents[1]
THREE_CUBES = ROOT / "scenarios" / "systems" / "three_cubes.ttl"
SCENARIO = ROOT / "scenarios" / "catalog" / "001-3CC.S.1.ttl"

WRITER = """
import sys, time
import pyoxigraph as ox
from diagkg.kg.store import KnowledgeStore
path, stop = sys.argv[1], sys.argv[2]
store = KnowledgeStore(path, wait=600)
worst, n = 0.0, 0
import os
while not os.path.exists(stop):
    t = time.perf_counter()
    store.add_quads([ox.Quad(ox.NamedNode("urn:bench:w"), ox.NamedNode("urn:bench:n"), ox.Literal(str(n)),
                             ox.NamedNode("urn:bench:writer"))])
    worst = max(worst, time.perf_counter() - t)
    n += 1
    time.sleep(0.05)
print(f"{worst:.3f} {n}")
"""


def counting(pairs: int) -> str:
    ontology = graphs.ONTOLOGY.value
    patterns = " ".join(f"GRAPH <{ontology}> {{ ?s{i} ?p{i} ?o{i} }}" for i in range(pairs + 1))
    return ("INSERT { GRAPH <urn:bench:count> { <urn:bench:pairs> <urn:bench:count> ?n } } "
            f"WHERE {{ SELECT (COUNT(*) AS ?n) WHERE {{ {patterns} }} }}")


def measure(path: Path, label: str, run: object) -> None:
    stop = path.parent / "stop"
    stop.unlink(missing_ok=True)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)                      # the writer is writing
        t0 = time.perf_counter()
        run()  # type: ignore[operator]
        took = time.perf_counter() - t0
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=600)
    worst, writes = out.split()
    print(f"{label:40s} update {took:6.2f} s; concurrent writer: {writes:>4s} writes, longest {float(worst):6.3f} s"
          f"   [{load_average()}]", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=1)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="diagkg-update-lock-"))
    path = folder / "store"
    load_files(KnowledgeStore(path), [THREE_CUBES, SCENARIO])
    text = counting(args.pairs)
    print(f"store: {len(KnowledgeStore.open_for_reading(path))} quads; update: {text}", flush=True)
    for i in range(args.rounds):
        measure(path, f"round {i + 1}: under the lock (old)", lambda: KnowledgeStore(path).update(text))
        measure(path, f"round {i + 1}: one write path (new)", lambda: apply_update(KnowledgeStore(path), text))
    bulb = "https://w3id.org/diagkg/system/three_cubes/main_bulb"
    g = graphs.system("three_cubes").value
    system_update = ("PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
                     f"DELETE {{ GRAPH <{g}> {{ <{bulb}> dk:resistance ?r }} }}\n"
                     f"INSERT {{ GRAPH <{g}> {{ <{bulb}> dk:resistance 1e9 }} }}\n"
                     f"WHERE {{ GRAPH <{g}> {{ <{bulb}> dk:resistance ?r }} }}")
    measure(path, "system update (new: validated, reasoned)", lambda: apply_update(KnowledgeStore(path), system_update))


if __name__ == "__main__":
    main()
