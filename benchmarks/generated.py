"""An assistant on generated scenarios: ``diagkg generate SYSTEM`` (single faults, and ``--doubles``
double faults drawn by prior) into an in-memory store beside the shipped catalogue, then one session
per scenario whose faults include ``--mode`` (or all), printing its end, cost and time with the load
average beside each, and the totals.

    .venv/bin/python benchmarks/generated.py --system current_sensor --mode ShortBetweenNodes
    .venv/bin/python benchmarks/generated.py --system three_cubes --assistant neuro-symbolic --first 40
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.generation.generate import GenerationConfig, generate
from diagkg.kg.loading import load_files, load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

SOLVED = ("success", "success_no_hypothesis")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--system", default="current_sensor")
    parser.add_argument("--assistant", default="model-based")
    parser.add_argument("--mode", default="", help="only scenarios with a fault of this mode (local name)")
    parser.add_argument("--doubles", type=int, default=0, help="double faults to generate too (default 0)")
    parser.add_argument("--first", type=int, default=None, help="only the first N scenarios that qualify")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="{}", help="configuration of the assistant (JSON), e.g. "
                        "'{\"round_minutes\": 30}'")
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    folder = Path(tempfile.mkdtemp(prefix="diagkg-generated-"))
    generate(store, GenerationConfig(args.system)).write(folder / "single")
    if args.doubles:
        generate(store, GenerationConfig(args.system, faults=2, limit=args.doubles, seed=0)).write(folder / "double")
    load_files(store, [folder])
    catalog = ScenarioCatalog(store)
    scenarios = [catalog.resolve(n) for n in catalog.numbers()]
    scenarios = [s for s in scenarios if s.id.startswith("GEN-") and s.key == args.system
                 and (not args.mode or any(f.mode == args.mode for f in s.faults))][: args.first]
    spent, solved, cost, worst = 0.0, 0, 0.0, 0.0
    for s in scenarios:
        t0 = time.perf_counter()
        r = run_session(s, args.assistant, seed=args.seed, store=store, record=False, keep_ledger=False,
                        config=json.loads(args.config))
        took = time.perf_counter() - t0
        spent, solved, cost, worst = spent + took, solved + (r.end in SOLVED), cost + r.cost, max(worst, took)
        faults = "; ".join(f"{f.mode} {f.target.rsplit('/', 1)[-1]}" + (f"+{f.other.rsplit('/', 1)[-1]}" if f.other else "")
                           for f in s.faults)
        print(f"{s.id:28s} {r.end:22s} {r.cost:6.0f} min {took:6.1f} s  load {os.getloadavg()[0]:.2f}  {faults}",
              flush=True)
    n = len(scenarios) or 1
    print(f"{args.assistant} on {len(scenarios)} generated {args.system} scenarios: {solved} solved, "
          f"mean cost {cost / n:.1f} min, {spent:.1f} s in all, the longest session {worst:.1f} s "
          f"(load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
