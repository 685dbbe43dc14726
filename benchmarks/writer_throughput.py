"""How many trajectories a second the campaign's writer stores (issue 31, item 1: at least 1,000).

Makes ``--trajectories`` outcomes as a worker sends them (synthetic sessions of three assistants
over the shipped scenarios, one to three rounds each, as in ``benchmarks/metrics_queries.py``),
then hands them to the campaign's writer as fast as it takes them (``execution.store_outcome`` and
``CampaignWriter.commit_if_due``, then ``commit``) on a fresh on-disk store holding the shipped
catalogue and a campaign: trajectories a second, commits, the longest time a commit held the lock,
the load average. Each measurement runs in a fresh process; with ``--before REV`` the same is
measured for that git revision (its ``platform/`` first on ``PYTHONPATH``), interleaved.

    .venv/bin/python benchmarks/writer_throughput.py [--trajectories 3000] [--rounds 2] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from revisions import checkout

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, random, sys, tempfile, time
from datetime import datetime, timezone
sys.path.insert(0, sys.argv[2])
from metrics_queries import ASSISTANTS, synthetic_rounds
import pyoxigraph as ox
from diagkg.env.actions import action_catalogue
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.evaluation import campaign as cp, execution, sessions, tally as tl
from diagkg.evaluation.budget import Spending
from diagkg.evaluation.writer import CampaignWriter
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import trajectory

n = int(sys.argv[1])
store = KnowledgeStore(tempfile.mkdtemp(prefix="diagkg-writer-") + "/store")
load_shipped(store)
catalog = ScenarioCatalog(store)
numbers = catalog.numbers()
scenarios = {k: catalog.resolve(k) for k in numbers}
catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
runs = max(1, -(-n // (len(ASSISTANTS) * len(numbers))))
campaign = cp.create(store, cp.CampaignConfig(assistants=ASSISTANTS, scenarios=tuple(numbers), runs=runs, name="w"))
rng = random.Random(0)
outcomes = []
for i in range(n):
    a, k = ASSISTANTS[i % 3], numbers[(i // 3) % len(numbers)]
    s, seed = scenarios[k], i // (3 * len(numbers))
    target = sorted(s.faulty)[0].rsplit("/", 1)[-1] if s.faulty else "x"
    end, cost, rounds = synthetic_rounds(rng, target)
    task = cp.Task(campaign.iri, a, {}, k, seed, 0)
    rec = trajectory.SessionRecord(trajectory_id=f"w-{a}-{k}-{seed}", scenario_iri=s.iri, scenario_number=k,
                                   system_key=s.key, system_iri=s.system_iri, assistant=a, config={}, seed=seed,
                                   budget=s.budget, end=end, total_cost=cost, rounds=rounds,
                                   started=datetime.now(timezone.utc), wall_time=0.01)
    rec.extra.extend(sessions.summary_triples(rec, s, task))
    quads = trajectory.to_quads(rec, catalogue)
    data = ox.serialize(quads, format=ox.RdfFormat.N_QUADS)
    fields = {}
    if "entry" in sessions.Outcome.__dataclass_fields__:       # the worker reads what the writer keeps
        triples = [q.triple for q in quads]
        fields = dict(scenario_iri=s.iri, entry=tl.entry_of(triples, seed, end))
    outcomes.append(sessions.Outcome(task, rec.graph.value, data, end, cost, **fields))
quads = sum(len(o.nquads.splitlines()) for o in outcomes) / n
done, tallies = {}, tl.from_rows(campaign, [])
spending = Spending.read(store, campaign, None)
writer = CampaignWriter(store, tallies)
hand = getattr(execution, "store_outcome", None) or getattr(execution, "_store")    # before issue 31: private
t0 = time.perf_counter()
for o in outcomes:
    hand(writer, o, done, tallies, spending)
    writer.commit_if_due()
writer.commit()
seconds = time.perf_counter() - t0
print(json.dumps({"rate": n / seconds, "seconds": seconds, "commits": writer.commits, "quads": quads,
                  "hold": writer.longest_hold, "load": os.getloadavg()[0]}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", metavar="REV")
    args = parser.parse_args()
    envs = {"now": dict(os.environ)}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            envs["before"] = dict(os.environ, PYTHONPATH=str(checkout(args.before, Path(tmp) / "before")))
        rates: dict[str, list[float]] = {}
        for r in range(args.rounds):
            for label, env in envs.items():
                out = subprocess.run([sys.executable, "-c", CHILD, str(args.trajectories), str(ROOT / "benchmarks")],
                                     capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    raise SystemExit(f"[{label}] failed:\n{out.stderr[-3000:]}")
                got = json.loads(out.stdout.strip().splitlines()[-1])
                rates.setdefault(label, []).append(got["rate"])
                print(f"round {r + 1} [{label}] {args.trajectories} trajectories ({got['quads']:.0f} quads each) in "
                      f"{got['seconds']:.2f} s = {got['rate']:.0f} a second; {got['commits']} commits, "
                      f"longest hold {got['hold']:.2f} s (load {got['load']:.1f})", flush=True)
        for label, values in rates.items():
            print(f"median [{label}]: {statistics.median(values):.0f} trajectories a second")
        if "before" in rates:
            print(f"now / before: {statistics.median(rates['now']) / statistics.median(rates['before']):.1f}x")


if __name__ == "__main__":
    main()
