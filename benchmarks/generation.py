"""Scenario generation on every shipped system: how many single faults the catalogue allows,
how many a person notices, how many scenarios are written (each passing every check of
``diagkg check``), whether every hand-written single-fault scenario is reproduced (same fault,
same stated symptoms), how long it takes; optionally the diagnosability report's figures.

    .venv/bin/python benchmarks/generation.py [--systems KEY,…] [--faults 1] [--diagnosability] [--depth 3]

The load average is printed beside each figure.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from _load import load_average
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.generation.coverage import reproduced
from diagkg.generation.diagnosability import diagnose
from diagkg.generation.generate import GenerationConfig, generate
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", help="system keys (default: every system the shipped scenarios are on)")
    parser.add_argument("--faults", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--diagnosability", action="store_true", help="also the diagnosability report's figures")
    parser.add_argument("--depth", type=int, default=3)
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    catalog = ScenarioCatalog(store)
    keys = args.systems.split(",") if args.systems else sorted({catalog.resolve(n).key for n in catalog.numbers()})
    head = "| system | placements | noticed | written | left out | hand-written single faults | reproduced | seconds |"
    print(head + (" groups | isolated to 1/2/3 | diag. seconds |" if args.diagnosability else ""))
    print("| --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- | --- |" if args.diagnosability else ""))
    for key in keys:
        t0 = time.perf_counter()
        gen = generate(store, GenerationConfig(key, faults=args.faults, limit=args.limit))
        seconds = time.perf_counter() - t0
        where = load_average()
        matches = reproduced(store, key, gen) if args.faults == 1 else []
        left = ", ".join(f"{n} {r}" for r, n in sorted(Counter(i.reason.value for i in gen.left).items()))
        row = (f"| {key} | {gen.tried} | {gen.singles_noticed} | {len(gen.written)} | {left} | {len(matches)} | "
               f"{sum(1 for m in matches if m.generated)} | {seconds:.1f} ({where}) |")
        for m in matches:
            if m.generated is None:
                print(f"  not reproduced: {m.scenario}: {m.why}")
        if args.diagnosability:
            t0 = time.perf_counter()
            report = diagnose(store, key, depth=args.depth)
            seconds = time.perf_counter() - t0
            groups = sum(1 for g in report.groups if len(g.members) > 1)
            one, two, three = report.resolution()
            row += (f" {groups} | {one:.0%} / {two:.0%} / {three:.0%} | {seconds:.1f} ({load_average()}"
                    f"{', budget ran out' if report.exhausted else ''}) |")
        print(row, flush=True)


if __name__ == "__main__":
    main()
