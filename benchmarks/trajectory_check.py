"""How long does checking one trajectory against the shapes take (``diagkg.runs.trajectory.validate``)?

    .venv/bin/python benchmarks/trajectory_check.py [--rounds 3] [--scenarios 3CC.S.3,DCAC.M.1,…] [--before REV]

Each scenario is played once by neuro-symbolic and once by the oracle (their trajectories as the
writer makes them, ranked candidates and hypothesis ledger included); every trajectory is then
checked ``--rounds`` times in a fresh process, after one check that warms the shapes up. Printed:
the median milliseconds per trajectory and the load average. With ``--before REV`` (a git
revision) the same is measured for that revision of diagkg, interleaved round by round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from revisions import checkout

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import os, sys, time
os.environ["DIAGKG_CHECK_TRAJECTORIES"] = "never"
from diagkg.env.actions import action_catalogue
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import trajectory
from diagkg.runs.runner import run_session
store = KnowledgeStore.memory()
load_shipped(store)
catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
records = [run_session(s, a, seed=0, store=store, record=False).record
           for s in sys.argv[1].split(",") for a in ("neuro-symbolic", "oracle")]
quads = [trajectory.to_quads(r, catalogue) for r in records]
trajectory.validate(quads[0], "warm-up")
t = time.perf_counter()
for q in quads:
    trajectory.validate(q, "t")
print((time.perf_counter() - t) / len(quads) * 1000)
"""


def measure(env: dict[str, str], scenarios: str) -> float:
    out = subprocess.run([sys.executable, "-c", CHECK, scenarios], check=True, capture_output=True, text=True,
                         env=env, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scenarios", default="3CC.S.3,3CC.M.3,10CC.M.2,DCAC.M.1,3CC-AS.D.5,3CC-CS.M.8")
    parser.add_argument("--before", metavar="REV", help="also measure this git revision's diagkg")
    args = parser.parse_args()
    ways = {"now": dict(os.environ)}
    if args.before:
        old = checkout(args.before, Path(tempfile.mkdtemp(prefix="diagkg-before-")))
        ways[args.before] = dict(os.environ, PYTHONPATH=str(old))
    got: dict[str, list[float]] = {name: [] for name in ways}
    for r in range(args.rounds):
        for name, env in (ways.items() if r % 2 == 0 else reversed(list(ways.items()))):
            ms = measure(env, args.scenarios)
            got[name].append(ms)
            print(f"  round {r + 1} {name}: {ms:.1f} ms a trajectory (load {os.getloadavg()[0]:.2f})", flush=True)
    for name, values in got.items():
        print(f"{name}: median {statistics.median(values):.1f} ms a trajectory over {len(values)} rounds "
              f"(load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
