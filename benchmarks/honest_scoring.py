"""Honest scoring over the shipped catalogue: how every assistant ends every scenario, the
adversaries that try to game the score, and the one cost rule's promise (no assistant's
successful run costs less than the oracle's on the same scenario and seed).

    .venv/bin/python benchmarks/honest_scoring.py --seeds 0 1 2 --out after.json
    .venv/bin/python benchmarks/honest_scoring.py --assistants oracle neuro-symbolic --compare before.json

Run it against another checkout (e.g. the code before a change) with ``PYTHONPATH=OTHER/platform``
(that checkout's ``platform/diagkg/data/*`` must reach its own declarative folders); the
adversaries (``tests/support/adversaries.py``) use only the public API. Prints, per assistant:
successes with a diagnosis and without, mean cost, false removals, and then every successful run
that cost less than the oracle's; with ``--compare FILE``, the runs that ended differently.
Progress goes to stderr; the load average is printed beside each timing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # the repository: tests.support

from tests.support.adversaries import ADVERSARIES  # noqa: E402

from _load import load_average  # noqa: E402
from diagkg.kg.loading import load_shipped  # noqa: E402
from diagkg.kg.store import KnowledgeStore  # noqa: E402
from diagkg.runs.runner import run_session  # noqa: E402

SHIPPED = ["oracle", "model-based", "neuro-symbolic", "random-search", "fixed-random"]


def run_all(store: KnowledgeStore, names: list[str], scenarios: list[int], seeds: list[int],
            budget: int | None) -> dict[str, dict[str, Any]]:
    adversaries = {cls.name: cls for cls in ADVERSARIES}
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        t0 = time.perf_counter()
        out[name] = {}
        for seed in seeds:
            for n in scenarios:
                agent: Any = adversaries[name]() if name in adversaries else name
                r = run_session(n, agent, seed=seed, store=store, record=False, budget=budget)
                diagnosis = getattr(r, "diagnosis", None)
                out[name][f"{n}/{seed}"] = {"end": r.end, "cost": r.cost, "rounds": r.rounds,
                                            "false_removals": diagnosis.false_removals if diagnosis else None}
            print(f"  {name} seed {seed} done ({time.perf_counter() - t0:.0f} s, {load_average()})", file=sys.stderr)
    return out


def summarise(results: dict[str, dict[str, Any]]) -> None:
    oracle = results.get("oracle", {})
    print(f"{'assistant':18s} {'success':>8s} {'no-diag':>8s} {'runs':>5s} {'mean cost':>10s} {'false rem.':>10s}")
    for name, runs in results.items():
        success = sum(r["end"] == "success" for r in runs.values())
        no_diag = sum(r["end"] == "success_no_hypothesis" for r in runs.values())
        costs = [r["cost"] for r in runs.values()]
        removals = [r["false_removals"] for r in runs.values() if r["false_removals"] is not None]
        print(f"{name:18s} {success:8d} {no_diag:8d} {len(runs):5d} {sum(costs) / max(len(costs), 1):10.1f} "
              f"{(sum(removals) / len(removals)) if removals else float('nan'):10.2f}")
    below = []
    for name, runs in results.items():
        if name == "oracle":
            continue
        for key, r in runs.items():
            ref = oracle.get(key)
            if ref and r["end"].startswith("success") and ref["end"].startswith("success") and r["cost"] < ref["cost"]:
                below.append((name, key, r["cost"], ref["cost"], r["end"], ref["end"]))
    print(f"successful runs cheaper than the oracle's on the same scenario and seed: {len(below)}")
    for name, key, cost, ref, end, ref_end in below:
        print(f"  {name} {key}: {cost:.0f} ({end}) < oracle {ref:.0f} ({ref_end})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assistants", nargs="+", default=SHIPPED + [cls.name for cls in ADVERSARIES])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--scenarios", nargs="+", type=int, default=list(range(1, 136)))
    parser.add_argument("--budget", type=int, help="rounds for every session (default: each scenario's own)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    t0 = time.perf_counter()
    results = run_all(store, args.assistants, args.scenarios, args.seeds, args.budget)
    print(f"{len(args.assistants)} assistants x {len(args.scenarios)} scenarios x {len(args.seeds)} seeds in "
          f"{time.perf_counter() - t0:.0f} s ({load_average()})")
    summarise(results)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    if args.compare:
        before = json.loads(args.compare.read_text())
        for name, runs in results.items():
            old = before.get(name, {})
            changed = [k for k, r in runs.items() if k in old and old[k]["end"] != r["end"]]
            print(f"{name:18s} {len(changed):3d} runs ended differently: "
                  + ", ".join(f"{k} {old[k]['end']}->{runs[k]['end']}" for k in changed[:12])
                  + (" …" if len(changed) > 12 else ""))


if __name__ == "__main__":
    main()
