"""Campaign throughput: the same campaign run in this process, with 2 local
worker processes, and on a 2-worker Dask LocalCluster; prints trajectories
per second for each (each in a fresh on-disk store, trajectories stored as in
``diagkg evaluate``).

    .venv/bin/python benchmarks/evaluate.py [--assistant neuro-symbolic] [--scenarios all] [--runs 2]
                                            [--modes inline,local2,dask2] [--rounds 1]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from _load import load_average
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore

MODES = {"inline": (1, "local"), "local1": (1, "local"), "local2": (2, "local"), "dask2": (2, "dask")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assistant", default="neuro-symbolic")
    parser.add_argument("--scenarios", default="all")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--modes", default="inline,local2,dask2", help=f"comma-separated: {', '.join(MODES)}")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the modes this many times, interleaved; ratios are of the median times")
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {}
    for r in range(args.rounds):
        for mode in args.modes.split(","):
            workers, executor = MODES[mode]
            with tempfile.TemporaryDirectory(prefix=f"diagkg-eval-{mode}-") as folder:
                store = KnowledgeStore(folder)
                load_shipped(store)
                numbers = cp.select_scenarios(store, [args.scenarios])
                campaign = cp.create(store, cp.CampaignConfig(assistants=(args.assistant,), scenarios=tuple(numbers),
                                                              runs=args.runs, name=mode))
                t0 = time.perf_counter()
                summary = execution.run(store, campaign, workers=workers, executor=executor)
                took = time.perf_counter() - t0
                store.close()
            n = summary.progress.stored
            seconds.setdefault(mode, []).append(took)
            print(f"round {r + 1} {mode:7s} {n} trajectories in {took:6.1f} s = {n / took:6.1f} per second "
                  f"(successes {summary.progress.successes}; start-up of workers included)  ({load_average()})",
                  flush=True)
    if "inline" in seconds:
        one = statistics.median(seconds["inline"])
        for mode, times in seconds.items():
            if mode != "inline":
                print(f"{mode}: {one / statistics.median(times):.2f}× the single process (median of "
                      f"{len(times)} against {len(seconds['inline'])}: {statistics.median(times):.1f} s, {one:.1f} s)")


if __name__ == "__main__":
    main()
