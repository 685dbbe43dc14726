"""What one prediction of the model-based assistant costs: the assistant runs on a fixed set
of shipped scenarios (seed 0), each ``Worlds.predict`` call (rollback + step on the shadow
session) is timed by the kind of its step, and the mean per kind, the total and the
median decision time are printed.

    .venv/bin/python benchmarks/prediction_speed.py [--scenarios 10CC.M.2 DCAC.M.1 ...] [--profile N]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table

from _load import load_average
from diagkg.agents.worlds import Worlds
from diagkg.env.actions import Hypothesis
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

SCENARIOS = ["10CC.M.2", "DCAC.M.1", "3CC-AS.M.3", "3CC.D.2", "3CC-CS.L.3", "3CC.S.2", "10CC.L.3", "DCAC.D.2"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", nargs="+", default=SCENARIOS)
    parser.add_argument("--profile", type=int, default=0,
                        help="also print the N most costly functions inside predictions (cProfile)")
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    times: dict[str, list[float]] = defaultdict(list)
    original = Worlds.predict

    profiler = cProfile.Profile() if args.profile else None

    def timed(self: Worlds, point: Any, step: Any) -> Any:
        if profiler is not None and measuring:
            profiler.enable()
        t0 = time.process_time()     # CPU time: steadier than the wall clock on a shared machine
        try:
            return original(self, point, step)
        finally:
            if profiler is not None and measuring:
                profiler.disable()
            kind = "hypothesis" if isinstance(step, Hypothesis) else step.action
            times[kind].append(time.process_time() - t0)

    measuring = False
    Worlds.predict = timed  # type: ignore[method-assign]
    run_session(SCENARIOS[0], "model-based", seed=0, store=store, record=False)   # warm-up (simulators, caches)
    times.clear()
    decisions: list[float] = []
    ends: list[str] = []
    measuring = True
    t0 = time.perf_counter()
    for name in args.scenarios:
        result = run_session(name, "model-based", seed=0, store=store, record=False)
        decisions.extend(result.decision_times)
        ends.append(f"{name}:{result.end}/{result.cost:g}")
    wall = time.perf_counter() - t0
    Worlds.predict = original  # type: ignore[method-assign]
    table = Table(title="Predictions (rollback + step) by kind of step, CPU time")
    for col in ("kind", "calls", "mean ms", "total s"):
        table.add_column(col, justify="right" if col != "kind" else "left")
    for kind, ts in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        table.add_row(kind, str(len(ts)), f"{1000 * statistics.fmean(ts):.3f}", f"{sum(ts):.2f}")
    total = sum(sum(ts) for ts in times.values())
    table.add_row("all", str(sum(len(ts) for ts in times.values())), "", f"{total:.2f}")
    console = Console()
    console.print(table)
    console.print(f"median decision {1000 * statistics.median(decisions):.1f} ms over {len(decisions)} decisions; "
                  f"wall {wall:.1f} s; predictions {100 * total / wall:.0f} % of it  ({load_average()})", soft_wrap=True)
    console.print("ends: " + " ".join(ends))
    if profiler:
        stats = pstats.Stats(profiler).sort_stats("tottime")
        stats.print_stats(args.profile)


if __name__ == "__main__":
    main()
