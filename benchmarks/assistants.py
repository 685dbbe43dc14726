"""Run assistants on every shipped scenario (one run each) and print success
rate and mean cost per system, the median decision time, and the total time.

    .venv/bin/python benchmarks/assistants.py [--assistants neuro-symbolic oracle] [--seed 0]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _load import load_average
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session


def catalog_store() -> KnowledgeStore:
    """An in-memory store holding the shipped catalogue (loaded as `diagkg load --shipped` does)."""
    store = KnowledgeStore.memory()
    load_shipped(store)
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assistants", nargs="+", default=["neuro-symbolic", "oracle"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", nargs="*", type=int, help="only these scenario numbers")
    args = parser.parse_args()
    catalog = ScenarioCatalog(catalog_store())
    numbers = args.scenarios or catalog.numbers()
    for name in args.assistants:
        store = catalog_store()
        by_system: dict[str, list] = {}
        decisions: list[float] = []
        t0 = time.perf_counter()
        for n in numbers:
            r = run_session(n, name, seed=args.seed, store=store)
            by_system.setdefault(catalog.resolve(n).key, []).append(r)
            decisions += r.decision_times
        total = time.perf_counter() - t0
        runs = [r for rs in by_system.values() for r in rs]
        ok = sum(r.end in ("success", "success_no_hypothesis") for r in runs)
        print(f"{name}: {ok}/{len(runs)} successes, {total:.1f} s for {len(runs)} runs, "
              f"median decision {statistics.median(decisions) * 1000:.2f} ms  ({load_average()})")
        for key, rs in by_system.items():
            wins = sum(r.end in ("success", "success_no_hypothesis") for r in rs)
            print(f"  {key:22s} success {wins:3d}/{len(rs):3d} ({wins / len(rs):5.1%})  "
                  f"mean cost {statistics.mean(r.cost for r in rs):7.1f} min  "
                  f"mean rounds {statistics.mean(r.rounds for r in rs):4.1f}")
        ends: dict[str, int] = {}
        for r in runs:
            ends[r.end] = ends.get(r.end, 0) + 1
        print("  ends: " + ", ".join(f"{k} {v}" for k, v in sorted(ends.items())))


if __name__ == "__main__":
    main()
