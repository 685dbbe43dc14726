"""Campaign throughput: the same campaign run in one process, with 2 local worker processes, and on a
2-worker Dask LocalCluster; prints trajectories per second for each (each in a fresh on-disk store,
trajectories stored as in ``diagkg evaluate``), the CPU seconds of the campaign's process and of its
workers, and the load average.

Each run is a process of its own (the store loaded with the shipped catalogue first, not timed). With
``--rounds`` the modes are run that many times, interleaved, and the ratios are of the median times.
With ``--before REV`` (a git revision, e.g. ``HEAD~3``) every mode is also run on that revision's
diagkg (its ``platform/`` and declarative folders extracted with ``git archive``, put first on
``PYTHONPATH``), interleaved with this checkout's.

    .venv/bin/python benchmarks/evaluate.py [--assistant neuro-symbolic] [--scenarios all] [--runs 2]
                                            [--modes inline,local2,dask2] [--rounds 1] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _load import load_average

MODES = {"inline": (1, "local"), "local1": (1, "local"), "local2": (2, "local"), "dask2": (2, "dask")}


def one(mode: str, assistant: str, scenarios: str, runs: int) -> None:
    """Run the campaign once in this process and print its figures as one JSON line."""
    import resource

    from diagkg.evaluation import campaign as cp
    from diagkg.evaluation import execution
    from diagkg.kg.loading import load_shipped
    from diagkg.kg.store import KnowledgeStore

    workers, executor = MODES[mode]
    with tempfile.TemporaryDirectory(prefix=f"diagkg-eval-{mode}-") as folder:
        store = KnowledgeStore(folder)
        load_shipped(store)
        numbers = cp.select_scenarios(store, [scenarios])
        campaign = cp.create(store, cp.CampaignConfig(assistants=(assistant,), scenarios=tuple(numbers), runs=runs,
                                                      name=mode))
        cpu0, t0 = time.process_time(), time.perf_counter()
        summary = execution.run(store, campaign, workers=workers, executor=executor)
        took, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        store.close()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"seconds": took, "stored": summary.progress.stored, "successes": summary.progress.successes,
                      "cpu": cpu, "workers_cpu": children.ru_utime + children.ru_stime}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assistant", default="neuro-symbolic")
    parser.add_argument("--scenarios", default="all")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--modes", default="inline,local2,dask2", help=f"comma-separated: {', '.join(MODES)}")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the modes this many times, interleaved; ratios are of the median times")
    parser.add_argument("--before", metavar="REV", help="also run every mode on this git revision's diagkg")
    parser.add_argument("--one", choices=sorted(MODES), help=argparse.SUPPRESS)     # (a run in a process of its own)
    args = parser.parse_args()
    if args.one:
        one(args.one, args.assistant, args.scenarios, args.runs)
        return
    versions = {"now": dict(os.environ)}
    with tempfile.TemporaryDirectory(prefix="diagkg-eval-revisions-") as base:
        if args.before:
            from revisions import checkout

            versions["before"] = dict(os.environ, PYTHONPATH=str(checkout(args.before, Path(base) / "before")))
        seconds: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for version, env in versions.items():
                for mode in args.modes.split(","):
                    out = subprocess.run([sys.executable, __file__, "--one", mode, "--assistant", args.assistant,
                                          "--scenarios", args.scenarios, "--runs", str(args.runs)],
                                         env=env, check=True, capture_output=True, text=True).stdout
                    fig = json.loads(out.strip().splitlines()[-1])
                    seconds.setdefault((version, mode), []).append(fig["seconds"])
                    n, took = fig["stored"], fig["seconds"]
                    print(f"round {r + 1} {version:6s} {mode:7s} {n} trajectories in {took:6.1f} s = {n / took:6.1f} per "
                          f"second (successes {fig['successes']}; CPU: campaign {fig['cpu']:.1f} s, workers "
                          f"{fig['workers_cpu']:.1f} s)  ({load_average()})", flush=True)
    for version in versions:
        if (version, "inline") not in seconds:
            continue
        single = statistics.median(seconds[(version, "inline")])
        for (v, mode), times in seconds.items():
            if v == version and mode != "inline":
                print(f"{version}: {mode} {single / statistics.median(times):.2f}× the single process (median of "
                      f"{len(times)}: {statistics.median(times):.1f} s against {single:.1f} s)")


if __name__ == "__main__":
    main()
