"""Do the assistants still end every scenario the same way?  Runs each assistant
(oracle, random-search, fixed-random, unhelpful, neuro-symbolic) once on every
shipped scenario and writes ``{assistant: {scenario: [end, cost, rounds]}}`` as
JSON; with ``--compare FILE`` prints every difference from an earlier run
(for instance one written before a refactoring). ``--assistants`` picks others
(``--assistants model-based``); ``--scenarios 1-67`` runs a part of them (to run
the rest in a second process), ``--merge`` joins such parts' files.

    .venv/bin/python benchmarks/outcomes.py --out after.json [--compare before.json]
    .venv/bin/python benchmarks/outcomes.py --assistants model-based --scenarios 68-135 --out part2.json
    .venv/bin/python benchmarks/outcomes.py --merge part1.json part2.json --out all.json [--compare before.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _load import load_average
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
    parser.add_argument("--assistants", default=",".join(ASSISTANTS),
                        help=f"comma-separated assistants (default: {','.join(ASSISTANTS)})")
    parser.add_argument("--scenarios", default="1-135", help="a range of scenario numbers, FIRST-LAST (default: 1-135)")
    parser.add_argument("--merge", type=Path, nargs="+", help="join these runs' files instead of running")
    args = parser.parse_args()
    results: dict[str, dict[str, list]] = {}
    if args.merge:
        for part in args.merge:
            for name, outcomes in json.loads(part.read_text()).items():
                results.setdefault(name, {}).update(outcomes)
        for outcomes in results.values():
            outcomes_sorted = sorted(outcomes.items(), key=lambda kv: int(kv[0]))
            outcomes.clear()
            outcomes.update(outcomes_sorted)
    else:
        first, _, last = args.scenarios.partition("-")
        numbers = range(int(first), int(last or first) + 1)
        store = KnowledgeStore.memory()
        load_shipped(store)
        for name in [a.strip() for a in args.assistants.split(",") if a.strip()]:
            t0 = time.perf_counter()
            results[name] = {}
            for n in numbers:
                r = run_session(n, name, seed=args.seed, store=store, record=False)
                results[name][str(n)] = [r.end, r.cost, r.rounds]
            ok = sum(v[0] in SUCCESS for v in results[name].values())
            print(f"{name:15s} {ok:3d}/{len(numbers)} successes ({time.perf_counter() - t0:.1f} s)  ({load_average()})", flush=True)
    args.out.write_text(json.dumps(results, indent=1))
    if args.compare:
        before = json.loads(args.compare.read_text())
        for name in results:
            old, new = before.get(name, {}), results[name]
            diff = [n for n in new if old.get(n) != new[n]]
            won = [n for n in diff if new[n][0] in SUCCESS and (old.get(n) or [""])[0] not in SUCCESS]
            lost = [n for n in diff if new[n][0] not in SUCCESS and (old.get(n) or [""])[0] in SUCCESS]
            same = sum(old.get(n) == new[n] for n in new)
            print(f"{name:15s} {same:3d} of {len(new)} scenarios identical, {len(diff):3d} differ (end, cost or rounds); "
                  f"now solved: {', '.join(won) or '-'}; no longer solved: {', '.join(lost) or '-'}")


if __name__ == "__main__":
    main()
