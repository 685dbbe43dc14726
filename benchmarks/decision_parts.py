"""Where the model-based assistant's decisions go: every decision of every session timed (its
suggestion and the digesting of what it showed, as ``run_session`` counts a decision), and within
it the time spent widening to pairs, admitting pairs, screening shorts, restarting after a rebase,
following the candidates through the step, and predicting reports for the options. Printed: the
decisions' median, 95th percentile and worst, and for the decisions over ``--slow`` seconds the
seconds in each part (nested parts are also counted in the part that holds them), with the load
average; then Python's garbage collections over the run (how many, their seconds, the longest: in a
long run the full ones fall inside whichever decision they land in). Between two sessions the heap is
settled as a campaign's worker settles it (:func:`diagkg.runs.heap.settle`); ``--gc on`` leaves the
collector as Python sets it, ``--gc off`` runs without it, ``--gc N`` with a first threshold of N
allocations (700 by default), to see its share.

    .venv/bin/python benchmarks/decision_parts.py [--seed 0 [1 …]] [--scenarios 1-135] [--slow 0.15] [--gc settle|on|off|N]

With several seeds, every scenario is run with each seed in turn in the one process (as a campaign's
worker runs them), and each seed's decisions are also summed up on a line of their own: what the
sessions of a process share (:data:`~diagkg.agents.worlds.PREDICTED`, :data:`~diagkg.agents.worlds.REFUTED`)
shows in the seeds after the first.

Compare two versions of the code by running it under each (``PYTHONPATH=<worktree>/platform``),
one after the other on a quiet machine.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from _load import load_average
from diagkg.agents import candidates, likeness, modelbased, worlds
from diagkg.evaluation import campaign
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import heap
from diagkg.runs.runner import run_session

PARTS: list[tuple[Any, str, str]] = [
    (candidates.CandidateSpace, "widen", "widen"),
    (candidates.CandidateSpace, "widen_early", "widen early"),
    (candidates.CandidateSpace, "admit_combos", "admit pairs"),
    (candidates.CandidateSpace, "short_candidates", "shorts"),
    (candidates.CandidateSpace, "restart", "restart"),
    (candidates.CandidateSpace, "more_singles", "more singles"),
    (worlds.Worlds, "run_through", "run through"),
    (worlds.Worlds, "follow", "follow"),
    (worlds.Worlds, "predicted", "predictions"),
    (likeness.Likeness, "refuted", "refuted"),
]


def instrument(spent: collections.Counter[str]) -> None:
    """Time each part of :data:`PARTS` into ``spent`` (a part inside itself counted once)."""
    inside: list[str] = []

    def timed(f: Callable[..., Any], label: str) -> Callable[..., Any]:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            inside.append(label)
            try:
                return f(*args, **kwargs)
            finally:
                inside.pop()
                if label not in inside:
                    spent[label] += time.perf_counter() - t0
        return run

    for cls, name, label in PARTS:
        if hasattr(cls, name):          # (an older version of the code may not have the part)
            setattr(cls, name, timed(getattr(cls, name), label))


def summary(what: str, took: list[float], seconds: float) -> None:
    """Print the median, 95th percentile and worst of the decisions ``took`` (seconds each)."""
    times = sorted(took)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"{what}, {len(times)} decisions in {seconds:.0f} s: median {statistics.median(times) * 1e3:.0f} ms, "
          f"p95 {p95 * 1e3:.0f} ms, worst {times[-1] * 1e3:.0f} ms ({load_average()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, nargs="+", default=[0], help="one seed or more, in turn")
    parser.add_argument("--scenarios", nargs="*", default=["all"])
    parser.add_argument("--slow", type=float, default=0.15, help="seconds above which a decision is broken down")
    parser.add_argument("--top", type=int, default=0, help="print the N slowest decisions: scenario, decision, parts")
    parser.add_argument("--gc", default="settle",
                        help="settle (as a campaign's worker: diagkg.runs.heap.settle between sessions), on (as "
                             "Python sets it), off, or the first threshold N")
    args = parser.parse_args()
    os.environ.setdefault("DIAGKG_CHECK_TRAJECTORIES", "never")
    spent: collections.Counter[str] = collections.Counter()
    instrument(spent)
    decisions: list[tuple[float, dict[str, float]]] = []
    where: list[tuple[int, int, int]] = []          # (seed, scenario, decision of the session) of each decision
    now = [0, 0]                                    # the seed and scenario running
    made: collections.Counter[tuple[int, int]] = collections.Counter()     # decisions so far per (seed, scenario)

    class Timed(modelbased.ModelBasedAssistant):
        def suggest(self) -> Any:
            spent.clear()
            t0 = time.perf_counter()
            step = super().suggest()
            self.started = (time.perf_counter() - t0, dict(spent))
            return step

        def record(self, outcome: Any) -> None:
            spent.clear()
            t0 = time.perf_counter()
            super().record(outcome)
            took, parts = self.started
            merged = collections.Counter(parts)
            merged.update(spent)
            decisions.append((took + time.perf_counter() - t0, dict(merged)))
            made[now[0], now[1]] += 1
            where.append((now[0], now[1], made[now[0], now[1]]))

    store = KnowledgeStore.memory()
    load_shipped(store)
    numbers = campaign.select_scenarios(store, args.scenarios)
    collections_: dict[int, list[float]] = collections.defaultdict(list)     # generation -> seconds of each
    started = [0.0]

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            collections_[info["generation"]].append(time.perf_counter() - started[0])

    gc.callbacks.append(collected)
    heap.FREEZE = args.gc == "settle"
    if args.gc == "off":
        gc.disable()
    elif args.gc not in ("on", "settle"):
        gc.set_threshold(int(args.gc), *gc.get_threshold()[1:])
    t0 = time.perf_counter()
    for seed in args.seed:
        first, t1 = len(decisions), time.perf_counter()
        for n in numbers:
            now[:] = [seed, n]
            heap.settle()         # as a campaign's worker does before each session (nothing with --gc other than settle)
            run_session(n, Timed(), seed=seed, store=store, record=False, keep_ledger=False)
        if len(args.seed) > 1:
            summary(f"seed {seed}: {len(numbers)} sessions", [t for t, _ in decisions[first:]], time.perf_counter() - t1)
    summary(f"{len(numbers) * len(args.seed)} sessions", [t for t, _ in decisions], time.perf_counter() - t0)
    full = collections_.get(2, [])
    print(f"garbage collections (gc {args.gc}): {sum(map(len, collections_.values()))} in "
          f"{sum(map(sum, collections_.values())):.1f} s; full ones {len(full)} in {sum(full):.1f} s, the longest "
          f"{max(full, default=0.0) * 1e3:.0f} ms")
    slow = [(t, parts) for t, parts in decisions if t > args.slow]
    total: collections.Counter[str] = collections.Counter()
    for _, parts in slow:
        total.update(parts)
    print(f"{len(slow)} decisions over {args.slow * 1e3:.0f} ms, {sum(t for t, _ in slow):.1f} s in all:")
    for label, seconds in total.most_common():
        print(f"  {label:<14} {seconds:7.1f} s")
    # which slow decisions widened (pairs, shorts, a restart), and which only predicted
    kinds: dict[str, list[float]] = collections.defaultdict(list)
    for t, parts in slow:
        kind = "widened" if parts.get("widen") else "restarted" if parts.get("restart") or parts.get("more singles") \
            else "predicted only"
        kinds[kind].append(t)
    for kind, times in sorted(kinds.items()):
        print(f"  {kind}: {len(times)} decisions, {sum(times):.1f} s, median {statistics.median(times) * 1e3:.0f} ms")
    if args.top:
        print(f"the {args.top} slowest decisions (seed, scenario, decision of its session: ms, parts in ms):")
        ranked = sorted(range(len(decisions)), key=lambda i: -decisions[i][0])[:args.top]
        for i in ranked:
            t, parts = decisions[i]
            seed, n, k = where[i]
            shown = ", ".join(f"{label} {s * 1e3:.0f}" for label, s in sorted(parts.items(), key=lambda kv: -kv[1]) if s > 0.005)
            print(f"  seed {seed} scenario {n} decision {k}: {t * 1e3:.0f} ({shown})")


if __name__ == "__main__":
    main()
