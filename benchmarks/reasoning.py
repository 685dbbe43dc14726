"""HermiT over each shipped system, with and without diagkg's Java options (:data:`diagkg.kg.reasoning.JVM_OPTIONS`).

    .venv/bin/python benchmarks/reasoning.py [--rounds 3] [--systems KEY,…]

Each round reasons over every system twice, interleaved: once as diagkg runs HermiT, once with
``JDK_JAVA_OPTIONS`` set to nothing (the Java launcher's defaults). Printed: each system's seconds
per way, the median over the rounds, the load average beside each figure, and whether both ways
entail the same triples (they must).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import rdflib

from diagkg.kg.reasoning import JVM_OPTIONS, reason
from diagkg.kg.resources import system_files
from diagkg.kg.validation import default_ontology


def timed(data: rdflib.Graph, ontology: rdflib.Graph, options: str | None) -> tuple[float, set[tuple[str, ...]]]:
    if options is None:
        os.environ.pop("JDK_JAVA_OPTIONS", None)
    else:
        os.environ["JDK_JAVA_OPTIONS"] = options
    try:
        t0 = time.perf_counter()
        out = reason(data, engine="hermit", ontology=ontology)
        return time.perf_counter() - t0, {tuple(str(x) for x in t) for t in out}
    finally:
        os.environ.pop("JDK_JAVA_OPTIONS", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default=None, help="system keys (default: every shipped system)")
    args = parser.parse_args()
    ontology = default_ontology()
    files = {f.name.removesuffix(".ttl"): f for f in system_files()}
    if args.systems:
        files = {k: f for k, f in files.items() if k in args.systems.split(",")}
    print(f"diagkg's options: {JVM_OPTIONS}")
    for key, f in sorted(files.items()):
        data = rdflib.Graph()
        data.parse(data=f.read_text(encoding="utf-8"), format="turtle")
        ours, plain, same = [], [], True
        for r in range(args.rounds):
            ways = [("diagkg", None), ("defaults", "")] if r % 2 == 0 else [("defaults", ""), ("diagkg", None)]
            got = {}
            for name, options in ways:
                seconds, triples = timed(data, ontology, options)
                got[name] = triples
                (ours if name == "diagkg" else plain).append(seconds)
                print(f"  {key} round {r + 1} {name}: {seconds:.2f} s (load {os.getloadavg()[0]:.2f})", flush=True)
            same = same and got["diagkg"] == got["defaults"]
        a, b = statistics.median(ours), statistics.median(plain)
        print(f"{key}: diagkg {a:.2f} s, Java's defaults {b:.2f} s ({b / a:.2f}x); "
              f"the same entailments: {'yes' if same else 'NO'} (load {os.getloadavg()[0]:.2f})", flush=True)


if __name__ == "__main__":
    main()
