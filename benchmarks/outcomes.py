"""Do the assistants still end every scenario the same way?  Runs each assistant
(oracle, random-search, fixed-random, unhelpful, neuro-symbolic) once on every
shipped scenario and writes ``{assistant: {scenario: [end, cost, rounds]}}`` as
JSON; with ``--compare FILE`` prints every difference from an earlier run
(for instance one written before a refactoring).

    .venv/bin/python benchmarks/outcomes.py --out after.json [--compare before.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

ASSISTANTS = ["oracle", "random-search", "fixed-random", "unhelpful", "neuro-symbolic"]
SUCCESS = ("success", "success_no_hypothesis")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    results: dict[str, dict[str, list]] = {}
    for name in ASSISTANTS:
        t0 = time.perf_counter()
        results[name] = {}
        for n in range(1, 136):
            r = run_session(n, name, seed=args.seed, store=store, record=False)
            results[name][str(n)] = [r.end, r.cost, r.rounds]
        ok = sum(v[0] in SUCCESS for v in results[name].values())
        print(f"{name:15s} {ok:3d}/135 successes ({time.perf_counter() - t0:.1f} s)")
    args.out.write_text(json.dumps(results, indent=1))
    if args.compare:
        before = json.loads(args.compare.read_text())
        for name in ASSISTANTS:
            old, new = before.get(name, {}), results[name]
            diff = [n for n in new if old.get(n) != new[n]]
            won = [n for n in diff if new[n][0] in SUCCESS and (old.get(n) or [""])[0] not in SUCCESS]
            lost = [n for n in diff if new[n][0] not in SUCCESS and (old.get(n) or [""])[0] in SUCCESS]
            print(f"{name:15s} {len(diff):3d} scenarios differ (end, cost or rounds); "
                  f"now solved: {', '.join(won) or '-'}; no longer solved: {', '.join(lost) or '-'}")


if __name__ == "__main__":
    main()
