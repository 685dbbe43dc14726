"""Diagnostic competence per system: for each assistant, on every shipped
scenario and each seed, the number solved, the mean cost (every run counted,
failures at their final cost), the cost relative to the oracle's, and the
median and worst decision time.

    .venv/bin/python benchmarks/diagnosis.py [--assistants oracle model-based neuro-symbolic random-search]
                                             [--seeds 0 1 2] [--scenarios 1 2 5] [--config JSON]

Trajectories are stored in an in-memory store (checked against the shapes as
in normal use); the table is printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections import defaultdict

from _load import load_average, load_averages
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import heap
from diagkg.runs.runner import run_session

SUCCESS = ("success", "success_no_hypothesis")


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assistants", nargs="+", default=["oracle", "model-based", "neuro-symbolic", "random-search"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--scenarios", nargs="*", type=int)
    parser.add_argument("--config", type=json.loads, default={},
                        help="configuration of the assistants (JSON), e.g. '{\"terminal_prior\": 0}'")
    parser.add_argument("--dump", help="also write one JSON line per session (assistant, scenario, seed, end, cost, "
                                         "rounds, worst decision) here")
    args = parser.parse_args()
    os.environ.setdefault("DIAGKG_CHECK_TRAJECTORIES", "first")
    store = KnowledgeStore.memory()
    load_shipped(store)
    catalog = ScenarioCatalog(store)
    numbers = args.scenarios or catalog.numbers()
    systems = {n: catalog.resolve(n).key for n in numbers}
    runs: dict[str, dict[str, list[tuple[bool, float]]]] = defaultdict(lambda: defaultdict(list))
    decisions: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failures: dict[str, list[str]] = defaultdict(list)
    dump = open(args.dump, "w") if args.dump else None
    for name in args.assistants:
        t0 = time.perf_counter()
        for seed in args.seeds:
            for n in numbers:
                heap.settle()      # between two sessions, as a campaign's worker
                r = run_session(n, name, seed=seed, store=store, config=args.config if name != "oracle" else None)
                ok = r.end in SUCCESS
                runs[name][systems[n]].append((ok, r.cost))
                decisions[name][systems[n]].extend(r.decision_times)
                if not ok:
                    failures[name].append(f"{r.scenario_id}/{seed}:{r.end}")
                if dump is not None:
                    dump.write(json.dumps({"assistant": name, "scenario": r.scenario_id, "seed": seed, "end": r.end,
                                           "cost": r.cost, "rounds": len(r.decision_times),
                                           "worst_ms": round(max(r.decision_times, default=0.0) * 1e3, 1),
                                           "load": load_averages()}) + "\n")
                    dump.flush()
        total = sum(ok for rs in runs[name].values() for ok, _ in rs)
        print(f"{name}: {total}/{len(numbers) * len(args.seeds)} solved in {time.perf_counter() - t0:.0f} s  "
              f"({load_average()})", flush=True)
    print()
    print("| system | assistant | solved | mean cost (min) | cost / oracle | median decision (ms) | p95 (ms) | worst (ms) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in dict.fromkeys(systems.values()):
        oracle = statistics.mean(c for _, c in runs["oracle"][key]) if "oracle" in runs else None
        for name in args.assistants:
            rs = runs[name][key]
            mean = statistics.mean(c for _, c in rs)
            ds = decisions[name][key] or [0.0]
            ratio = f"{mean / oracle:.2f}" if oracle else "–"
            print(f"| {key} | {name} | {sum(ok for ok, _ in rs)}/{len(rs)} | {mean:.0f} | {ratio} | "
                  f"{statistics.median(ds) * 1e3:.1f} | {percentile(ds, 0.95) * 1e3:.0f} | {max(ds) * 1e3:.0f} |")
    print(f"\n({load_average()} after the runs; each assistant's, as its runs ended, on its line above)")
    for name, failed in failures.items():
        print(f"\n{name} did not solve ({len(failed)}): {', '.join(failed[:40])}" + (" …" if len(failed) > 40 else ""))


if __name__ == "__main__":
    main()
