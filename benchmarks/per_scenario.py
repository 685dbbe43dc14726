"""Build + inject faults + simulate, per scenario: the time from a scenario's
identifier to its first observation — a session on it (working memory,
simulator) is made and reset (configuration, faults, the faulty circuit
solved, what a person sees described).

    .venv/bin/python benchmarks/per_scenario.py [--passes 5] [--all] [--json]

By default the scenarios are those the original prototype can run (1–20,
26–45, 76–95, 101–104: its simulator has neither the asymmetric chains nor
the current sensor nor loose connections), so the median compares with
``benchmarks/original/measure.py``'s part b; ``--all`` takes all 135. The
store is in memory and holds the shipped catalogue; one pass is run first
and not counted (the first session on a system builds its simulator).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import diagkg
from _load import load_average, load_averages
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore

ORIGINAL_CAN_RUN = [*range(1, 21), *range(26, 46), *range(76, 96), *range(101, 105)]


def one_pass(store: KnowledgeStore, numbers: list[int]) -> dict[int, float]:
    out = {}
    for n in numbers:
        t0 = time.perf_counter()
        with diagkg.make(n, store) as session:      # closed: its working memory is reused, as a runner's is
            session.reset(seed=0)
        out[n] = time.perf_counter() - t0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--all", action="store_true", help="all 135 scenarios")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    catalog = ScenarioCatalog(store)
    numbers = catalog.numbers() if args.all else ORIGINAL_CAN_RUN
    one_pass(store, numbers)                       # warm-up, not counted
    samples: dict[int, list[float]] = {n: [] for n in numbers}
    for _ in range(args.passes):
        for n, t in one_pass(store, numbers).items():
            samples[n].append(t)
    every = [t for ts in samples.values() for t in ts]
    by_system: dict[str, list[float]] = {}
    for n, ts in samples.items():
        by_system.setdefault(catalog.resolve(n).key, []).extend(ts)
    result = {"scenarios": len(numbers), "passes": args.passes,
              "median_ms": round(statistics.median(every) * 1e3, 3),
              "max_ms": round(max(every) * 1e3, 3),
              "by_system_ms": {k: round(statistics.median(v) * 1e3, 3) for k, v in by_system.items()}}
    if args.json:
        print(json.dumps({**result, "load": load_averages()}))
        return
    print(f"{len(numbers)} scenarios x {args.passes} passes: median {result['median_ms']:.2f} ms per scenario "
          f"(worst {result['max_ms']:.1f} ms)  ({load_average()})")
    for key, value in result["by_system_ms"].items():
        print(f"  {key:22s} {value:7.2f} ms")


if __name__ == "__main__":
    main()
