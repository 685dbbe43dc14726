"""An assistant's decisions in two versions of the code, side by side: each round runs the chosen
scenarios once in a process of the other version (a checkout's ``platform`` folder, e.g. a ``git
worktree`` of an older commit) and once in this one, interleaved; printed per scenario: each
version's end, cost and worst decision (the least over rounds) and the whole session's time, with
the load average beside each round.

    git worktree add -f /tmp/base HEAD~1
    .venv/bin/python benchmarks/decision_ab.py --base /tmp/base/platform --rounds 2 \\
        --scenarios 10CC.M.1 DCAC.M.2 3CC-AS.M.2 [--assistant model-based] [--seed 0]

Both versions run with this virtual environment; bytecode is written (``PYTHONDONTWRITEBYTECODE``
unset) and every process imports the package once before it is timed, so that neither version
compiles its modules while timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(scenarios: list[str], assistant: str, seed: int) -> None:
    os.environ.setdefault("DIAGKG_CHECK_TRAJECTORIES", "never")
    from diagkg.kg.loading import load_shipped
    from diagkg.kg.store import KnowledgeStore
    from diagkg.runs.runner import run_session

    store = KnowledgeStore.memory()
    load_shipped(store)
    for ident in scenarios:
        t0 = time.perf_counter()
        r = run_session(ident, assistant, seed=seed, store=store, record=False, keep_ledger=False)
        print(json.dumps({"scenario": ident, "end": r.end, "cost": r.cost, "seconds": time.perf_counter() - t0,
                          "worst": max(r.decision_times, default=0.0)}), flush=True)


def run(platform: str, args: argparse.Namespace) -> dict[str, dict]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = platform
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--assistant", args.assistant,
               "--seed", str(args.seed), "--scenarios", *args.scenarios]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return {row["scenario"]: row for row in map(json.loads, out.splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="the other version's platform folder")
    parser.add_argument("--scenarios", nargs="+", required=True)
    parser.add_argument("--assistant", default="model-based")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.scenarios, args.assistant, args.seed)
        return
    versions = {"base": args.base, "this": str(HERE.parent / "platform")}
    for platform in versions.values():      # bytecode written before anything is timed
        subprocess.run([sys.executable, "-c", "import diagkg.cli, diagkg.agents.registry, diagkg.runs.runner"],
                       env={**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                            "PYTHONPATH": platform}, check=True)
    results: dict[str, list[dict[str, dict]]] = {name: [] for name in versions}
    for n in range(args.rounds):
        for name, platform in versions.items():
            t0 = time.perf_counter()
            results[name].append(run(platform, args))
            print(f"round {n + 1}, {name}: {time.perf_counter() - t0:.1f} s (load {os.getloadavg()[0]:.2f})", flush=True)
    print()
    print("| scenario | base: end, cost | base worst (s) | base session (s) "
          "| this: end, cost | this worst (s) | this session (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for ident in args.scenarios:
        cells = []
        for name in versions:
            rows = [r[ident] for r in results[name]]
            cells += [f"{rows[0]['end']}, {rows[0]['cost']:.0f}", f"{min(r['worst'] for r in rows):.2f}",
                      f"{min(r['seconds'] for r in rows):.2f}"]
        print(f"| {ident} | " + " | ".join(cells) + " |")
    for name in versions:
        print(f"{name}: worst decisions summed {sum(min(r[i]['worst'] for r in results[name]) for i in args.scenarios):.1f} s, "
              f"sessions summed {sum(min(r[i]['seconds'] for r in results[name]) for i in args.scenarios):.1f} s")


if __name__ == "__main__":
    main()
