"""HermiT over each shipped system (and the torch the tests write): as diagkg runs it, with the whole
ontology instead of the part that can entail something about the system
(:func:`diagkg.kg.ontology_module.relevant`), and with Java's defaults instead of diagkg's Java options
(:data:`diagkg.kg.reasoning.JVM_OPTIONS`).

    .venv/bin/python benchmarks/reasoning.py [--rounds 3] [--systems KEY,…]

Each round reasons over every system once each way, interleaved (the order turns round each round).
Printed: each system's seconds per way, the median over the rounds, the load average beside each
figure, and whether every way entails the same triples (they must).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import rdflib

from diagkg.kg import reasoning
from diagkg.kg.resources import system_files
from diagkg.kg.validation import default_ontology

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.torch import TORCH  # noqa: E402

WAYS = ("diagkg", "whole ontology", "Java defaults")


@contextlib.contextmanager
def way(name: str) -> Iterator[None]:
    relevant = reasoning.relevant
    if name == "whole ontology":
        reasoning.relevant = lambda data, ontology: ontology    # type: ignore[assignment]
    if name == "Java defaults":
        os.environ["JDK_JAVA_OPTIONS"] = ""
    try:
        yield
    finally:
        reasoning.relevant = relevant     # type: ignore[assignment]
        os.environ.pop("JDK_JAVA_OPTIONS", None)


def timed(data: rdflib.Graph, ontology: rdflib.Graph, name: str) -> tuple[float, set[tuple[str, ...]]]:
    with way(name):
        t0 = time.perf_counter()
        out = reasoning.reason(data, engine="hermit", ontology=ontology)
        return time.perf_counter() - t0, {tuple(str(x) for x in t) for t in out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default=None, help="system keys (default: every shipped system and the torch)")
    args = parser.parse_args()
    ontology = default_ontology()
    texts = {f.name.removesuffix(".ttl"): f.read_text(encoding="utf-8") for f in system_files()}
    texts["torch (tests)"] = TORCH
    if args.systems:
        texts = {k: t for k, t in texts.items() if k in args.systems.split(",")}
    print(f"diagkg's Java options: {reasoning.JVM_OPTIONS}")
    for key, text in sorted(texts.items()):
        data = rdflib.Graph().parse(data=text, format="turtle")
        module = len(reasoning.relevant(data, ontology))
        seconds: dict[str, list[float]] = {name: [] for name in WAYS}
        same = True
        for r in range(args.rounds):
            got = {}
            for name in (WAYS if r % 2 == 0 else WAYS[::-1]):
                s, got[name] = timed(data, ontology, name)
                seconds[name].append(s)
                print(f"  {key} round {r + 1} {name}: {s:.2f} s (load {os.getloadavg()[0]:.2f})", flush=True)
            same = same and all(got[name] == got["diagkg"] for name in WAYS)
        median = {name: statistics.median(v) for name, v in seconds.items()}
        print(f"{key}: diagkg {median['diagkg']:.2f} s (ontology part of {module} of {len(ontology)} triples), "
              f"whole ontology {median['whole ontology']:.2f} s ({median['whole ontology'] / median['diagkg']:.2f}x), "
              f"Java's defaults {median['Java defaults']:.2f} s ({median['Java defaults'] / median['diagkg']:.2f}x); "
              f"the same entailments: {'yes' if same else 'NO'} (load {os.getloadavg()[0]:.2f})", flush=True)


if __name__ == "__main__":
    main()
