"""Campaign throughput: the same campaign run in this process, with 2 local
worker processes, and on a 2-worker Dask LocalCluster; prints trajectories
per second for each (each in a fresh on-disk store, trajectories stored as in
``diagkg evaluate``).

    .venv/bin/python benchmarks/evaluate.py [--assistant neuro-symbolic] [--scenarios all] [--runs 2]
                                            [--modes inline,local2,dask2]
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    results = {}
    for mode in args.modes.split(","):
        workers, executor = MODES[mode]
        store = KnowledgeStore(tempfile.mkdtemp(prefix=f"diagkg-eval-{mode}-"))
        load_shipped(store)
        numbers = cp.select_scenarios(store, [args.scenarios])
        campaign = cp.create(store, cp.CampaignConfig(assistants=(args.assistant,), scenarios=tuple(numbers),
                                                      runs=args.runs, name=mode))
        t0 = time.perf_counter()
        summary = execution.run(store, campaign, workers=workers, executor=executor)
        seconds = time.perf_counter() - t0
        n = summary.progress.stored
        results[mode] = n / seconds
        print(f"{mode:7s} {n} trajectories in {seconds:6.1f} s = {n / seconds:6.1f} per second "
              f"(successes {summary.progress.successes}; start-up of workers included)  ({load_average()})", flush=True)
    if "inline" in results:
        for mode, rate in results.items():
            if mode != "inline":
                print(f"{mode}: {rate / results['inline']:.2f}× the single process")


if __name__ == "__main__":
    main()
