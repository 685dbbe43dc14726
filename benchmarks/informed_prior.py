"""How much of model-based's cost over the optimum is what the optimum knows (issue 30): the optimal
policy's prior is the list of the system's stored scenarios, which no assistant is given. Here the
model-based assistant is run twice on every scenario, interleaved: as shipped, and *informed*, its
candidates cut down to the faults that some stored scenario of the system injects (each single fault
of the list, any two of them as a pair, the shorts of the list), each weighed by the number of scenarios
that inject it (the optimum's prior is uniform over the scenarios) — a prior as privileged as the
optimum's, though weaker (it knows which faults occur and how often, not which occur together). Printed per system:
the optimum's and the oracle's mean cost, each variant's mean cost and solved count, and cost / optimum.

    .venv/bin/python benchmarks/informed_prior.py --store /tmp/opt-store [--seeds 0] [--systems KEY …]

The store keeps the optima (``diagkg optimum``'s work, computed here when the store holds none; see
``benchmarks/optimum.py``). The informed variant exists only in this script: the shipped assistant never
sees the scenario list. The load average is printed beside each system's line.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from _load import load_average
from diagkg.agents import candidates
from diagkg.agents.combinations import Candidate
from diagkg.env.scenarios import Fault, ScenarioCatalog
from diagkg.evaluation import optimum
from diagkg.kg.loading import ensure_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import heap
from diagkg.runs.runner import run_session

SOLVED = ("success", "success_no_hypothesis")


def ident(f: Fault) -> tuple[str, frozenset[str]]:
    """A fault as the list and the candidates both name it: its mode and the ports or parts it is on."""
    return f.mode, frozenset(t for t in (f.target, f.other) if t is not None)


class Informed:
    """While :attr:`listed` is set, the candidates of a session are only the faults it holds, each
    weighed by the number of scenarios that inject it."""

    listed: dict[tuple[str, frozenset[str]], int] | None = None

    @classmethod
    def keep(cls, found: Iterable[Candidate]) -> list[Candidate]:
        listed = cls.listed
        if listed is None:
            return list(found)
        return [dataclasses.replace(c, prior=float(math.prod(listed[ident(f)] for f in c.faults)))
                for c in found if all(ident(f) in listed for f in c.faults)]

    @classmethod
    def install(cls) -> None:
        singles, shorts = candidates.CandidateSpace.single_candidates, candidates.CandidateSpace.short_candidates

        def single_candidates(self: Any) -> list[Candidate]:
            return cls.keep(singles(self))

        def short_candidates(self: Any) -> list[Candidate]:
            return cls.keep(shorts(self))

        candidates.CandidateSpace.single_candidates = single_candidates    # type: ignore[method-assign]
        candidates.CandidateSpace.short_candidates = short_candidates      # type: ignore[method-assign]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, help="an on-disk store (kept: it holds the optima)")
    ap.add_argument("--systems", nargs="+", help="system keys (default: every system with stored scenarios)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per optimum not yet stored")
    ap.add_argument("--detail", action="store_true", help="also print each session whose cost the variants differ on")
    args = ap.parse_args()
    Informed.install()
    with KnowledgeStore(Path(args.store)) as store:
        ensure_shipped(store, notify=lambda m: print(m, file=sys.stderr))
        catalog = ScenarioCatalog(store)
        by_system: dict[str, list[int]] = defaultdict(list)
        for n in catalog.numbers():
            by_system[catalog.resolve(n).key].append(n)
        print("| system | scenarios | optimum | oracle | variant | solved | mean cost | cost / optimum | seconds | load |")
        print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
        for key in args.systems or sorted(by_system):
            numbers = by_system[key]
            iri = catalog.resolve(numbers[0]).system_iri
            held = optimum.stored_optimum(store, iri)
            if held is None:
                optimum.store_optimum(store, optimum.solve(store, key, time_limit=args.time_limit))
                held = optimum.stored_optimum(store, iri)
                assert held is not None
            best = float(held["expectedCost"]) if held["exact"] else float(held["upper"])
            listed: dict[tuple[str, frozenset[str]], int] = defaultdict(int)
            for n in numbers:
                for fault in {ident(f) for f in catalog.resolve(n).faults}:
                    listed[fault] += 1
            cost: dict[str, float] = defaultdict(float)
            solved: dict[str, int] = defaultdict(int)
            spent: dict[str, float] = defaultdict(float)
            for n in numbers:                       # the two variants interleaved, scenario by scenario
                for seed in args.seeds:
                    ends: dict[str, tuple[str, float]] = {}
                    for variant in ("shipped", "informed"):
                        Informed.listed = dict(listed) if variant == "informed" else None
                        t0 = time.perf_counter()
                        heap.settle()      # between two sessions, as a campaign's worker
                        r = run_session(n, "model-based", seed=seed, store=store, record=False)
                        spent[variant] += time.perf_counter() - t0
                        cost[variant] += r.cost
                        solved[variant] += r.end in SOLVED
                        ends[variant] = (str(r.end), r.cost)
                    if args.detail and ends["shipped"] != ends["informed"]:
                        print(f"  {catalog.entry(n).id} seed {seed}: shipped {ends['shipped']}, informed {ends['informed']}",
                              file=sys.stderr)
            Informed.listed = None
            runs = len(numbers) * len(args.seeds)
            for variant in ("shipped", "informed"):
                mean = cost[variant] / runs
                print(f"| {key} | {len(numbers)} | {best:.1f}{'' if held['exact'] else ' (upper)'} | "
                      f"{float(held['oracle']):.1f} | {variant} | {solved[variant]}/{runs} | {mean:.1f} | "
                      f"{mean / best:.2f} | {spent[variant]:.0f} | {load_average()} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
