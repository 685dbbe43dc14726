"""A campaign in one process: every shipped scenario × N runs of one
assistant (neuro-symbolic by default), each trajectory stored, as a campaign
does. Prints the total time, the per-run time in each tenth of the campaign
(it must not grow as the store fills), the peak resident memory at each
tenth, and the outcomes.

    .venv/bin/python benchmarks/campaign.py [--runs 10] [--assistant neuro-symbolic]
                                            [--store DIR | memory] [--check first|always|never]
                                            [--no-ledger]

Trajectories are checked against the shapes as in normal use (the first of
each assistant × system, then one in 50: ``--check`` changes it). Each holds
the hypothesis ledger unless ``--no-ledger`` (to measure what it costs). With
``--store DIR`` the trajectories go to an on-disk store (created and loaded
with the shipped catalogue first), one write per trajectory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time

from _load import load_average
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per scenario (seeds 0…N-1)")
    parser.add_argument("--assistant", default="neuro-symbolic")
    parser.add_argument("--store", default="memory", help="'memory' (default) or a folder for an on-disk store")
    parser.add_argument("--check", choices=("first", "always", "never"), default="first")
    parser.add_argument("--no-ledger", action="store_true", help="store trajectories without the hypothesis ledger")
    args = parser.parse_args()
    os.environ["DIAGKG_CHECK_TRAJECTORIES"] = args.check
    if args.store == "memory":
        store = KnowledgeStore.memory()
    else:
        store = KnowledgeStore(args.store if args.store != "tmp" else tempfile.mkdtemp(prefix="diagkg-campaign-"))
    t0 = time.perf_counter()
    load_shipped(store)
    numbers = ScenarioCatalog(store).numbers()
    print(f"store ready in {time.perf_counter() - t0:.1f} s ({len(numbers)} scenarios); "
          f"{len(numbers) * args.runs} runs of {args.assistant}  ({load_average()})")
    plan = [(n, seed) for seed in range(args.runs) for n in numbers]
    tenth = max(1, len(plan) // 10)
    times: list[float] = []
    ends: dict[str, int] = {}
    t0 = time.perf_counter()
    with store.holding():           # one writer for the whole campaign (on disk: no reopen per trajectory)
        run_all(store, plan, args.assistant, times, ends, tenth, t0, not args.no_ledger)
    total = time.perf_counter() - t0
    wins = ends.get("success", 0) + ends.get("success_no_hypothesis", 0)
    print(f"{len(plan)} runs in {total:.1f} s ({total / len(plan) * 1e3:.1f} ms per run); "
          f"{wins} successes; ends: {', '.join(f'{k} {v}' for k, v in sorted(ends.items()))}; "
          f"peak RSS {peak_rss_mib():.0f} MiB  ({load_average()})")


def run_all(store: KnowledgeStore, plan: list[tuple[int, int]], assistant: str, times: list[float],
            ends: dict[str, int], tenth: int, t0: float, keep_ledger: bool = True) -> None:
    for i, (n, seed) in enumerate(plan, 1):
        r0 = time.perf_counter()
        result = run_session(n, assistant, seed=seed, store=store, keep_ledger=keep_ledger)
        times.append(time.perf_counter() - r0)
        ends[result.end] = ends.get(result.end, 0) + 1
        if i % 100 == 0:
            store.renew_writer()      # on disk: a fresh writer keeps its memory flat
        if i % tenth == 0 or i == len(plan):
            chunk = times[-tenth:]
            print(f"  {i:5d} runs  {time.perf_counter() - t0:6.1f} s   median {statistics.median(chunk) * 1e3:6.1f} ms"
                  f"  p90 {sorted(chunk)[int(len(chunk) * 0.9)] * 1e3:6.1f} ms   peak RSS {peak_rss_mib():6.0f} MiB"
                  f"  ({load_average()})",
                  flush=True)


if __name__ == "__main__":
    main()
