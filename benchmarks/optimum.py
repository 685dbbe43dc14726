"""The optimum of every shipped system, and every shipped assistant measured against it (issue 30, item 4).

    .venv/bin/python benchmarks/optimum.py --time-limit 600 --seeds 3
    .venv/bin/python benchmarks/optimum.py --store /tmp/opt-store --reuse          # the optima already stored

For each system: ``diagkg optimum``'s work (``evaluation.optimum.solve``) within ``--time-limit`` seconds,
stored in the graph ``optimum/KEY`` (``--reuse`` keeps a stored one); then one campaign of the assistants
(``--assistants``; human and the language-model assistants need a person or an endpoint and are left out)
over every scenario of the systems, ``--seeds`` runs each (seeds 0…N-1; ``--workers`` processes), resumed
when the store already holds it; then the table: per system and assistant, the optimum (its bounds when not
exact), the oracle, the mean cost, the regret (minutes per session), cost / optimum, success (pass@1),
pass^3, and the median and largest decision time — read back with the report's own queries
(``evaluation.regret``). The load average is printed beside each timing. The same tables, with the fault
isolation figures: ``diagkg --store PATH report optimum-bench``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.errors import DiagkgError
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, optimum, regret
from diagkg.kg.loading import ensure_shipped
from diagkg.kg.store import KnowledgeStore

ASSISTANTS = ("oracle", "optimal", "model-based", "neuro-symbolic", "random-search", "fixed-random", "unhelpful")
NAME = "optimum-bench"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def fmt(x: float | None, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", help="an on-disk store to use (kept; default: a temporary one)")
    ap.add_argument("--systems", nargs="+", help="system keys (default: every system with stored scenarios)")
    ap.add_argument("--assistants", default=",".join(ASSISTANTS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds per system's optimum (default 600)")
    ap.add_argument("--seeds", type=int, default=3, help="runs per assistant and scenario (default 3)")
    ap.add_argument("--workers", type=int, default=1, help="campaign sessions in N processes (default 1)")
    ap.add_argument("--reuse", action="store_true", help="keep an optimum the store already holds")
    ap.add_argument("--no-campaign", action="store_true", help="only the optima")
    args = ap.parse_args()
    folder = Path(args.store) if args.store else Path(tempfile.mkdtemp(prefix="optimum-bench-"))
    say(f"store {folder}")
    with KnowledgeStore(folder) as store:
        ensure_shipped(store, notify=say)
        catalog = ScenarioCatalog(store)
        by_system: dict[str, list[int]] = {}
        for n in catalog.numbers():
            by_system.setdefault(catalog.resolve(n).key, []).append(n)
        systems = args.systems or sorted(by_system)
        print("| system | scenarios | optimum | lower | upper | exact | perfect information | oracle | seconds | load |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for key in systems:
            iri = catalog.resolve(by_system[key][0]).system_iri
            held = optimum.stored_optimum(store, iri) if args.reuse else None
            if held is None:
                t0 = time.monotonic()
                result = optimum.solve(store, key, time_limit=args.time_limit, notify=lambda m, k=key: say(f"{k}: {m}"))
                optimum.store_optimum(store, result)
                print(f"| {key} | {len(result.scenarios)} | {fmt(result.expected_cost)} | {fmt(result.lower)} | "
                      f"{fmt(result.upper)} | {result.exact} | {fmt(result.perfect_information)} | "
                      f"{fmt(result.oracle)} | {time.monotonic() - t0:.0f} | {load()} |", flush=True)
            else:
                print(f"| {key} | {held['scenarios']} | {fmt(held['expectedCost'])} | {fmt(held['lower'])} | "
                      f"{fmt(held['upper'])} | {held['exact']} | {fmt(held['perfect'])} | {fmt(held['oracle'])} | "
                      f"{float(held['seconds']):.0f} (stored) | {load()} |", flush=True)
        if args.no_campaign:
            return 0
        assistants = tuple(a.strip() for a in args.assistants.split(",") if a.strip())
        scenarios = tuple(n for key in systems for n in by_system[key])
        try:
            campaign = cp.open_campaign(store, NAME)
            say(f"resuming campaign {campaign.id}")
        except DiagkgError:
            campaign = cp.create(store, cp.CampaignConfig(assistants=assistants, scenarios=scenarios, runs=args.seeds,
                                                          name=NAME))
        t0 = time.monotonic()
        summary = execution.run(store, campaign, workers=args.workers, notify=say)
        say(f"campaign {campaign.id}: {summary.progress.stored} trajectories in {time.monotonic() - t0:.0f} s "
            f"(load {load()})")
        rows = regret.load(store, [campaign.id])
        optima = {key: optimum.stored_optimum(store, catalog.resolve(by_system[key][0]).system_iri) for key in systems}
        print()
        print("| system | assistant | optimum | oracle | cost | regret | cost / optimum | success | pass^3 | "
              "median decision ms | max decision s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for (system, assistant), x in sorted(rows.items(), key=lambda kv: (kv[0][0], assistants.index(kv[0][1])
                                                                          if kv[0][1] in assistants else 99)):
            key = system.rstrip("/").rsplit("/", 1)[-1]
            held = optima.get(key)
            best = "–" if held is None else (fmt(held["expectedCost"]) if held["exact"] else
                                             f"{fmt(held['lower'])}–{fmt(held['upper'])}")
            times = sorted(x.decisions)
            print(f"| {key} | {assistant} | {best} | {fmt(x.per(x.oracle, x.oracle_covered))} | {fmt(x.mean_cost)} | "
                  f"{fmt(x.regret)} | {fmt(x.optimum_ratio, 2)} | {fmt(x.pass_at_1(), 3)} | {fmt(x.pass_hat_k(), 3)} | "
                  f"{fmt(times[len(times) // 2] * 1000 if times else None, 1)} | {fmt(times[-1] if times else None, 2)} |")
        print(f"\n(load {load()}; campaign {campaign.id} in {folder})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
