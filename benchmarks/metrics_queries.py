"""The metric queries over many synthetic trajectories in an on-disk store.

Writes ``--trajectories`` (default 100,000) synthetic trajectories of three
assistants over the shipped scenarios into a campaign of a fresh on-disk
store (each a real trajectory graph as ``diagkg evaluate`` writes it, with its
summary and campaign entry; one to three rounds each), writes the campaign's
slot tallies from them (``diagkg report --rebuild``'s path, timed), then times
each metric query ``diagkg report`` runs over the tallies
(``queries/tally-*.rq``; target: each under 2 s), the per-trajectory queries
of ``queries/metrics-*.rq`` for comparison, and the Python metrics and paired
comparison on top.

    .venv/bin/python benchmarks/metrics_queries.py [--trajectories 100000] [--store DIR]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import datetime, timezone

import pyoxigraph as ox

from _load import load_average
from diagkg.env.actions import action_catalogue
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import metrics, sessions, tally
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import trajectory

ASSISTANTS = ("neuro-symbolic", "random-search", "oracle")
ENDS = ("success", "success_no_hypothesis", "timeout", "surrender", "llm_truncation", "crashed")


_DECIDING = random.Random(1)      # decision times from a stream of their own: the other draws stay as they were


def synthetic_rounds(rng: random.Random, target: str) -> tuple[str, float, list[dict]]:
    rounds: list[dict] = []
    cost = 0.0
    for n in range(1, rng.randint(1, 3) + 1):
        if rng.random() < 0.5:
            c = float(rng.choice((10, 20, 45)))
            rounds.append({"round": n, "kind": "action", "intention": f"measure_voltage {target}", "message": "3.1 V",
                           "cost": c, "success": False,
                           "executed": [{"action": "measure_voltage", "targets": [target], "cost": c}],
                           "action": {"action": "measure_voltage", "targets": [target], "value": None}})
        else:
            verdict = rng.choice(("correct", "wrong", "partial"))
            c = float(rng.choice((10, 120, 130)))
            rounds.append({"round": n, "kind": "hypothesis", "intention": f"hypothesis {{{target}}}", "message": verdict,
                           "cost": c, "success": verdict == "correct", "executed": [], "verdict": verdict,
                           "suspects": [target]})
        rounds[-1]["decision_seconds"] = round(_DECIDING.lognormvariate(-4.0, 1.2), 6)   # a real round has one
        cost += rounds[-1]["cost"]
    return rng.choice(ENDS), cost, rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=100_000)
    parser.add_argument("--store", default=None, help="folder for the on-disk store (default: a temporary one)")
    args = parser.parse_args()
    path = args.store or tempfile.mkdtemp(prefix="diagkg-metrics-")
    store = KnowledgeStore(path)
    done = [r for r in cp.campaigns(store) if r["name"] == "synthetic"]
    if done:               # a store written by an earlier run: time the queries again
        campaign = cp.open_campaign(store, done[-1]["campaign"])
        print(f"reusing campaign {campaign.id} of {path} ({len(store)} quads)")
        time_queries(store, campaign)
        return
    campaign = build_synthetic(store, args.trajectories, path)
    store.refresh()
    time_queries(store, campaign)


def build_synthetic(store: KnowledgeStore, count: int, where: str, progress_every: int = 0) -> cp.Campaign:
    """Load the shipped catalogue into ``store`` and write about ``count`` synthetic trajectories of
    :data:`ASSISTANTS` over every shipped scenario into a campaign named ``synthetic`` (progress every
    ``progress_every`` trajectories when given); returns the campaign."""
    t0 = time.perf_counter()
    load_shipped(store)
    catalog = ScenarioCatalog(store)
    numbers = catalog.numbers()
    scenarios = {n: catalog.resolve(n) for n in numbers}
    catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
    runs = max(1, count // (len(ASSISTANTS) * len(numbers)))
    campaign = cp.create(store, cp.CampaignConfig(assistants=ASSISTANTS, scenarios=tuple(numbers), runs=runs,
                                                  name="synthetic"))
    total = runs * len(ASSISTANTS) * len(numbers)
    print(f"store ready in {time.perf_counter() - t0:.1f} s at {where}; writing {total} synthetic trajectories…  "
          f"({load_average()})",
          flush=True)
    rng = random.Random(0)
    t0 = time.perf_counter()
    written = 0
    with store.holding():
        chunk: list[ox.Quad] = []
        for a in ASSISTANTS:
            for n in numbers:
                s = scenarios[n]
                target = sorted(s.faulty)[0].rsplit("/", 1)[-1] if s.faulty else "x"
                for seed in range(runs):
                    end, cost, rounds = synthetic_rounds(rng, target)
                    rec = trajectory.SessionRecord(
                        trajectory_id=f"syn-{a}-{n}-{seed}", scenario_iri=s.iri, scenario_number=n, system_key=s.key,
                        system_iri=s.system_iri, assistant=a, config={}, seed=seed, budget=s.budget, end=end,
                        total_cost=cost, rounds=rounds, started=datetime.now(timezone.utc), wall_time=0.01)
                    rec.extra.extend(sessions.summary_triples(rec, s, cp.Task(campaign.iri, a, {}, n, seed, 0)))
                    chunk.extend(trajectory.to_quads(rec, catalogue))
                    written += 1
                    if len(chunk) > 200_000:
                        store.add_quads(chunk)
                        chunk = []
                        store.renew_writer()
                    if progress_every and (written % progress_every == 0 or written == total):
                        spent = time.perf_counter() - t0
                        print(f"  {written:>7}/{total} trajectories  {spent:6.0f} s  "
                              f"(about {spent / written * (total - written):.0f} s left)  ({load_average()})", flush=True)
        store.add_quads(chunk)
    print(f"{written} trajectories written in {time.perf_counter() - t0:.1f} s ({len(store)} quads in the store)  "
          f"({load_average()})",
          flush=True)
    return campaign


def time_queries(store: KnowledgeStore, campaign: cp.Campaign) -> None:
    node = campaign.node
    if not tally.tally_graphs(store, campaign):
        t1 = time.perf_counter()
        slots = tally.rebuild(store, campaign)
        store.refresh()
        print(f"  slot tallies rebuilt from the trajectories  {time.perf_counter() - t1:6.2f} s  ({slots} slots)  "
              f"({load_average()})",
              flush=True)
    print("the metric queries of `diagkg report` (over the slot tallies):")
    for name in ("tally-sessions", "metrics-scenarios"):
        t1 = time.perf_counter()
        rows = store.select(name, {"campaign": node})
        print(f"  {name:30s} {time.perf_counter() - t1:6.2f} s  ({len(rows)} rows)  ({load_average()})", flush=True)
    report_queries(store, campaign)
    print("the per-trajectory queries (campaigns without tallies; resume and export):")
    for name, bindings in (("metrics-by-scenario", {"campaign": node}), ("metrics-sessions", {"campaign": node}),
                           ("metrics-scenarios", {"campaign": node}),
                           ("metrics-healthy-replacements", {"campaign": node}),
                           ("metrics-paired", {"campaign": node, "a": ox.Literal(ASSISTANTS[0]),
                                               "b": ox.Literal(ASSISTANTS[1])}),
                           ("campaign-trajectories", {"campaign": node})):
        t1 = time.perf_counter()
        rows = store.select(name, bindings)
        print(f"  {name:30s} {time.perf_counter() - t1:6.2f} s  ({len(rows)} rows)  ({load_average()})", flush=True)
    t1 = time.perf_counter()
    rows = store.select("tally-source", {"campaign": node})
    print(f"  {'tally-source':30s} {time.perf_counter() - t1:6.2f} s  ({len(rows)} rows)  ({load_average()})", flush=True)
    report_queries(store, campaign, per_trajectory=True)


def report_queries(store: KnowledgeStore, campaign: cp.Campaign, per_trajectory: bool = False) -> None:
    t1 = time.perf_counter()
    data = metrics.load(store, [campaign.id], per_trajectory=per_trajectory)
    tables = [metrics.overall(data), metrics.by_system(data), metrics.by_category(data), metrics.by_scenario(data)]
    print(f"  metrics.load + four tables       {time.perf_counter() - t1:6.2f} s  "
          f"({sum(len(t) for t in tables)} rows)  ({load_average()})")
    t1 = time.perf_counter()
    paired = metrics.paired(store, data, ASSISTANTS[0], ASSISTANTS[1])
    print(f"  paired comparison                {time.perf_counter() - t1:6.2f} s  ({paired[0].pairs} pairs)  "
          f"({load_average()})")


if __name__ == "__main__":
    main()
