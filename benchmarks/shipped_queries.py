"""Every shipped SELECT/ASK query, alone, over a store of many trajectories.

Builds an on-disk store with the shipped catalogue and ``--trajectories``
(default 100,000) synthetic trajectories in one campaign (the generator of
``benchmarks/metrics_queries.py``: real trajectory graphs with their summaries,
one to three rounds each, then the campaign's slot tallies; compacted, as a campaign that grew the
store by a fifth leaves it), or reuses the
store of an earlier run (``--store DIR``; a store written by
``metrics_queries.py`` will do). Then runs each shipped query several times
with plausible inputs taken from the store (a trajectory, the campaign, a
system, a scenario, a part…) and prints its p50 and p95, the load average
beside them, the complexity its header states, and a flag on every p50 over
``--target`` (50 ms). A query with optional inputs is timed with them bound and
again without (``(all)``).

    .venv/bin/python benchmarks/shipped_queries.py [--trajectories 100000] [--store DIR] [--only NAME…]
        [--scope all|narrow|scans] [--runs 5] [--budget 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

import pyoxigraph as ox

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import tally
from diagkg.kg import compaction
from diagkg.kg.queries import SCOPES, QueryFile, complexity_scope, library, query_form
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import trajectory
from metrics_queries import build_synthetic

CAMPAIGN_NAME = "synthetic"          # the name metrics_queries.py gives its campaign too


def build(path: str, count: int) -> cp.Campaign:
    """A fresh store at ``path`` with the shipped graphs and ``count`` synthetic trajectories."""
    store = KnowledgeStore(path)
    campaign = build_synthetic(store, count, path, progress_every=5000)
    store.refresh()
    t0 = time.perf_counter()
    slots = tally.rebuild(store, campaign)
    store.refresh()
    print(f"slot tallies written in {time.perf_counter() - t0:.1f} s ({slots} slots)", flush=True)
    # as a campaign that grew the store by a fifth does at its end (diagkg.kg.compaction.compact_if_grown)
    print(f"store compacted in {compaction.optimize(store):.1f} s", flush=True)
    store.close()
    return campaign


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=100_000)
    parser.add_argument("--store", default=None, help="folder for the on-disk store (default: a temporary one); "
                                                      "a store holding a campaign named 'synthetic' is reused")
    parser.add_argument("--runs", type=int, default=5, help="runs of each query (fewer for a slow one)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds spent at most on one query's runs")
    parser.add_argument("--target", type=float, default=50.0, help="p50 in ms above which a query is flagged")
    parser.add_argument("--only", nargs="*", default=None, help="only these queries")
    parser.add_argument("--scope", choices=("all", "narrow", "scans"), default="all",
                        help="narrow: only the queries whose stated complexity does not read every trajectory; "
                             "scans: only those that do")
    parser.add_argument("--build-only", action="store_true", help="build the store and stop")
    args = parser.parse_args()
    path = args.store or tempfile.mkdtemp(prefix="diagkg-shipped-")
    campaign = _campaign_in(path)
    if campaign is None:
        build(path, args.trajectories)
    else:
        store = KnowledgeStore(path)
        if not tally.tally_graphs(store, campaign):       # a build stopped before its tallies
            t0 = time.perf_counter()
            slots = tally.rebuild(store, campaign)
            print(f"slot tallies written in {time.perf_counter() - t0:.1f} s ({slots} slots)", flush=True)
        store.close()
    if args.build_only:
        return
    store = KnowledgeStore.open_for_reading(path)
    campaign = _campaign_in(path, store)
    assert campaign is not None
    time_all(store, campaign, args)


def _campaign_in(path: str, store: KnowledgeStore | None = None) -> cp.Campaign | None:
    if store is None:
        if not os.path.isdir(path) or not os.listdir(path):
            return None
        store = KnowledgeStore.open_for_reading(path)
    done = [r for r in cp.campaigns(store) if r["name"] == CAMPAIGN_NAME]
    return cp.open_campaign(store, done[-1]["campaign"], allow_changed=True) if done else None


DK = "https://w3id.org/diagkg/ontology#"
XSD = "http://www.w3.org/2001/XMLSchema#"
GRAPH = "https://w3id.org/diagkg/graph/"


def inputs_from(store: KnowledgeStore, campaign: cp.Campaign) -> dict[str, Any]:
    """Plausible values for every input a shipped query declares, taken from the store: the first
    scenario of the campaign, its system, a part of it, a trajectory of the campaign on it."""
    scenario = min(store.select("scenario-index"), key=lambda r: r["number"])
    system, key = ox.NamedNode(scenario["system"]), scenario["key"]
    parts = [r["part"] for r in store.select("system-parts", {"system": system}) if r["class"] != f"{DK}Port"]
    part, other = ox.NamedNode(parts[0]), ox.NamedNode(parts[-1])
    assistant = campaign.config.assistants[0]
    traj = ox.NamedNode(f"{trajectory.BASE}syn-{assistant}-{scenario['number']}-0")
    sets = store.select("scenario-sets")
    return {
        "campaign": campaign.node, "trajectory": traj, "scenario": ox.NamedNode(scenario["scenario"]),
        "system": system, "key": ox.Literal(key), "number": ox.Literal(scenario["number"]),
        "id": ox.Literal(scenario["id"]), "assistant": ox.Literal(assistant),
        "a": ox.Literal(campaign.config.assistants[0]), "b": ox.Literal(campaign.config.assistants[1]),
        "part": part, "subject": part, "object": other, "node": ox.NamedNode(scenario["scenario"]),
        "class": ox.NamedNode(f"{DK}Scenario"), "term": part, "affordance": ox.NamedNode(f"{DK}Observable"),
        "ontology": ox.NamedNode(f"{GRAPH}ontology"), "systemGraph": ox.NamedNode(f"{GRAPH}system/{key}"),
        # no circuit-state graph is stored: the scenario's graph (its faults) stands in for one
        "stateGraph": ox.NamedNode(f"{GRAPH}scenario/{scenario['id']}"),
        "state": ox.NamedNode(f"{GRAPH}scenario/{scenario['id']}"),
        "graph": ox.NamedNode(f"{GRAPH}trajectory/syn-{assistant}-{scenario['number']}-0"),
        "hash": ox.Literal("0" * 64), "k": ox.Literal(3), "name": ox.Literal(sets[0]["name"] if sets else "none"),
        "format": ox.Literal(str(trajectory.FORMAT_VERSION), datatype=ox.NamedNode(f"{XSD}positiveInteger")),
    }


def template_cases(name: str, values: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The values a template is timed with (labels and template values)."""
    if name == "components-of-types":
        return [("", {"system": values["system"].value, "types": []})]
    if name == "precondition-affords":
        return [("", {"part": values["part"].value, "affordance": f"{DK}Reachable",
                      "system": values["systemGraph"].value, "state": values["stateGraph"].value})]
    if name == "store-quads":
        none = {"subject": None, "predicate": None, "object": None, "graph": None}
        return [("one graph", {**none, "graph": values["graph"].value, "default": False, "named": True}),
                ("one subject", {**none, "subject": values["trajectory"], "default": True, "named": False}),
                ("(all)", {**none, "default": True, "named": True})]
    raise KeyError(name)


def cases(q: QueryFile, values: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(label, bindings, template values) for each way a query is timed."""
    if q.is_template:
        return [(label, {}, tv) for label, tv in template_cases(q.name, values)]
    bound = {p.name: values[p.name] for p in q.inputs}
    out = [("", bound, {})]
    if any(p.optional for p in q.inputs):
        out.append(("(all)", {p.name: values[p.name] for p in q.inputs if not p.optional}, {}))
    return out


def run_once(store: KnowledgeStore, q: QueryFile, bindings: dict[str, Any], tv: dict[str, Any]) -> tuple[float, int]:
    t0 = time.perf_counter()
    result = store.query(q, bindings or None, **tv)
    n = int(bool(result)) if isinstance(result, ox.QueryBoolean) else sum(1 for _ in result)
    return time.perf_counter() - t0, n


def time_all(store: KnowledgeStore, campaign: cp.Campaign, args: Any) -> None:
    values = inputs_from(store, campaign)
    print(f"{len(store)} quads; campaign {campaign.id}; trajectory {values['trajectory'].value}; "
          f"system {values['system'].value}")
    print(f"{'query':44s} {'p50 ms':>9s} {'p95 ms':>9s} {'runs':>4s} {'rows':>7s} {'load':>9s}  complexity")
    slow = []
    for q in library().files():
        if q.is_update or query_form(q.render(**template_cases(q.name, values)[0][1]) if q.is_template else q.text) \
                not in ("select", "ask"):
            continue
        if args.only and q.name not in args.only:
            continue
        scope = complexity_scope(q.complexity)
        scans = scope is None or SCOPES[scope]
        if (args.scope == "narrow" and scans) or (args.scope == "scans" and not scans):
            continue
        for label, bindings, tv in cases(q, values):
            times: list[float] = []
            loads: list[float] = []
            rows = 0
            while len(times) < args.runs and (not times or sum(times) < args.budget):
                loads.append(os.getloadavg()[0])
                spent, rows = run_once(store, q, bindings, tv)
                times.append(spent)
            p50 = statistics.median(times) * 1000
            p95 = (statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]) * 1000
            name = f"{q.name} {label}".strip()
            flag = "  > target" if p50 > args.target else ""
            print(f"{name:44s} {p50:9.1f} {p95:9.1f} {len(times):4d} {rows:7d} {min(loads):4.1f}–{max(loads):<4.1f}  "
                  f"{q.complexity or '(none stated)'}{flag}", flush=True)
            if flag:
                slow.append(name)
    print(f"{len(slow)} over {args.target:.0f} ms: {', '.join(slow) or 'none'}")


if __name__ == "__main__":
    main()
