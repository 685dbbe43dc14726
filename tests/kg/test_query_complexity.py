"""Every shipped query states what it reads as the store grows, and the ones that
claim not to read every trajectory do not.

The header's ``complexity:`` line names a scope from ``diagkg.kg.queries.SCOPES``.
A query whose scope is narrower than every trajectory must declare the input
that narrows it, and must answer the same, in about the same time, on a store
holding many times more trajectories (of another campaign): a query that scans
every trajectory grows with them (16 times more here), one that follows an
index from its input does not. Times are the best of a few runs and the margin
is wide (four times, plus 25 ms), so a loaded machine does not make it fail;
the rows must be identical.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timezone
from typing import Any

import pyoxigraph as ox
import pytest

from diagkg.env.actions import action_catalogue
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import sessions, tally
from diagkg.kg.queries import SCOPES, QueryFile, complexity_scope, library, query_form
from diagkg.runs import trajectory

from ..support.stores import catalog_store

DK = "https://w3id.org/diagkg/ontology#"
XSD = "http://www.w3.org/2001/XMLSchema#"
GRAPH = "https://w3id.org/diagkg/graph/"
ASSISTANTS = ("neuro-symbolic", "random-search")
SCENARIOS = 4            # scenarios each campaign covers (of the shipped ones)
SMALL, GROWTH = 6, 16    # runs per slot of the measured campaign; how many times more the other campaign holds

# the inputs that narrow each scope (one of them must be declared)
NARROWING = {
    "one system": {"system", "systemGraph", "key"},
    "one scenario": {"scenario"},
    "one part": {"part", "subject", "object"},
    "one resource": {"node", "term"},
    "one graph": {"state", "graph", "ontology"},
    "one trajectory": {"trajectory"},
    "one slot": {"campaign"},
    "one campaign": {"campaign"},
}


def test_every_query_states_its_complexity():
    unstated = [q.name for q in library().files() if complexity_scope(q.complexity) is None]
    assert unstated == [], f"no complexity (or a scope outside {sorted(SCOPES)}) in: {unstated}"


def test_a_narrow_scope_declares_the_input_that_narrows_it():
    wrong = []
    for q in library().files():
        scope = complexity_scope(q.complexity)
        needed = NARROWING.get(scope or "")
        if needed and not needed & {p.name for p in q.inputs}:
            wrong.append(f"{q.name} ({scope}) declares none of {sorted(needed)}")
    assert wrong == []


def test_the_parser_reads_the_statement():
    q = library().get("trajectory-rounds")
    assert q.complexity == "one trajectory: O(its rounds)"
    assert complexity_scope(q.complexity) == "one trajectory"
    assert "complexity" not in q.summary
    assert complexity_scope("everything: O(1)") is None


def _write(store, campaign: cp.Campaign, scenarios: list, catalogue: dict[str, str], runs: int, prefix: str,
           rng: random.Random) -> None:
    quads: list[ox.Quad] = []
    for a in ASSISTANTS:
        for s in scenarios:
            target = sorted(s.faulty)[0].rsplit("/", 1)[-1] if s.faulty else "x"
            for seed in range(runs):
                rounds: list[dict[str, Any]] = []
                for n in range(1, rng.randint(1, 3) + 1):
                    if rng.random() < 0.5:
                        rounds.append({"round": n, "kind": "action", "intention": f"measure_voltage {target}",
                                       "message": "3.1 V", "cost": 10.0, "success": False,
                                       "executed": [{"action": "measure_voltage", "targets": [target], "cost": 10.0}],
                                       "action": {"action": "measure_voltage", "targets": [target], "value": None}})
                    else:
                        verdict = rng.choice(("correct", "wrong"))
                        rounds.append({"round": n, "kind": "hypothesis", "intention": f"hypothesis {{{target}}}",
                                       "message": verdict, "cost": 120.0, "success": verdict == "correct",
                                       "executed": [], "verdict": verdict, "suspects": [target]})
                rec = trajectory.SessionRecord(
                    trajectory_id=f"{prefix}-{a}-{s.number}-{seed}", scenario_iri=s.iri, scenario_number=s.number,
                    system_key=s.key, system_iri=s.system_iri, assistant=a, config={}, seed=seed, budget=s.budget,
                    end=rng.choice(("success", "timeout")), total_cost=sum(r["cost"] for r in rounds), rounds=rounds,
                    started=datetime.now(timezone.utc), wall_time=0.01)
                rec.extra.extend(sessions.summary_triples(rec, s, cp.Task(campaign.iri, a, {}, s.number, seed, 0)))
                quads.extend(trajectory.to_quads(rec, catalogue))
    store.add_quads(quads)


@pytest.fixture(scope="module")
def grown():
    """A store with a campaign of a few trajectories, and a callable that adds another campaign
    with GROWTH times as many."""
    store = catalog_store()
    catalog = ScenarioCatalog(store)
    scenarios = [catalog.resolve(n) for n in catalog.numbers()[:SCENARIOS]]
    catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
    rng = random.Random(1)
    numbers = tuple(s.number for s in scenarios)
    measured = cp.create(store, cp.CampaignConfig(assistants=ASSISTANTS, scenarios=numbers, runs=SMALL, name="m"))
    _write(store, measured, scenarios, catalogue, SMALL, "m", rng)
    tally.rebuild(store, measured)

    def grow() -> None:
        other = cp.create(store, cp.CampaignConfig(assistants=ASSISTANTS, scenarios=numbers, runs=SMALL * GROWTH,
                                                   name="o"))
        _write(store, other, scenarios, catalogue, SMALL * GROWTH, "o", rng)
        tally.rebuild(store, other)

    s = scenarios[0]
    part = next(r["part"] for r in store.select("system-parts", {"system": ox.NamedNode(s.system_iri)})
                if r["class"] != f"{DK}Port")
    values: dict[str, Any] = {
        "campaign": measured.node, "trajectory": ox.NamedNode(f"{trajectory.BASE}m-{ASSISTANTS[0]}-{s.number}-0"),
        "scenario": ox.NamedNode(s.iri), "system": ox.NamedNode(s.system_iri), "key": ox.Literal(s.key),
        "number": ox.Literal(s.number), "id": ox.Literal(s.id),
        "assistant": ox.Literal(ASSISTANTS[0]), "a": ox.Literal(ASSISTANTS[0]), "b": ox.Literal(ASSISTANTS[1]),
        "part": ox.NamedNode(part), "subject": ox.NamedNode(part), "object": ox.NamedNode(s.system_iri),
        "node": ox.NamedNode(s.iri), "class": ox.NamedNode(f"{DK}Scenario"), "term": ox.NamedNode(part),
        "affordance": ox.NamedNode(f"{DK}Observable"), "ontology": ox.NamedNode(f"{GRAPH}ontology"),
        "systemGraph": ox.NamedNode(f"{GRAPH}system/{s.key}"), "stateGraph": ox.NamedNode(f"{GRAPH}system/{s.key}"),
        "state": ox.NamedNode(f"{GRAPH}system/{s.key}"),
        "graph": ox.NamedNode(f"{GRAPH}trajectory/m-{ASSISTANTS[0]}-{s.number}-0"),
        "hash": ox.Literal("0" * 64), "k": ox.Literal(3), "name": ox.Literal("none"),
        "format": ox.Literal(str(trajectory.FORMAT_VERSION), datatype=ox.NamedNode(f"{XSD}positiveInteger")),
    }
    yield store, values, grow
    store.close()


def _narrow_queries() -> list[QueryFile]:
    out = []
    for q in library().files():
        scope = complexity_scope(q.complexity)
        if q.is_update or scope is None or SCOPES[scope]:
            continue
        out.append(q)
    return out


def _template_values(q: QueryFile, values: dict[str, Any]) -> dict[str, Any]:
    if q.name == "components-of-types":
        return {"system": values["system"].value, "types": []}
    if q.name == "precondition-affords":
        return {"part": values["part"].value, "affordance": f"{DK}Reachable", "system": values["systemGraph"].value,
                "state": values["stateGraph"].value}
    raise AssertionError(f"{q.name}: a template this test does not know; give it values here")


def _clock_masked(q: QueryFile, value: Any) -> str:
    """A row's value as text; the store's clock (a query reading NOW(): campaign-lease) as its type only."""
    if "NOW()" in q.text and isinstance(value, ox.Literal) and value.datatype.value == f"{XSD}dateTime":
        return value.datatype.value
    return str(value)


def _measure(store, q: QueryFile, values: dict[str, Any]) -> tuple[float, list]:
    if q.is_template:
        bindings, tv = None, _template_values(q, values)
    else:
        bindings, tv = {p.name: values[p.name] for p in q.inputs} or None, {}
    best, rows = float("inf"), []
    for _ in range(3):
        t0 = time.perf_counter()
        result = store.query(q, bindings, **tv)
        got = [bool(result)] if isinstance(result, ox.QueryBoolean) else sorted(
            tuple(_clock_masked(q, v) for v in r) for r in result)
        best = min(best, time.perf_counter() - t0)
        rows = got
    return best, rows


def test_narrow_queries_do_not_grow_with_the_trajectories(grown):
    store, values, grow = grown
    queries = [q for q in _narrow_queries()
               if q.is_template or query_form(q.text) in ("select", "ask")]
    assert len(queries) > 50
    before = {q.name: _measure(store, q, values) for q in queries}
    grow()
    grew = []
    for q in queries:
        t_small, rows_small = before[q.name]
        t_big, rows_big = _measure(store, q, values)
        if rows_big != rows_small:
            grew.append(f"{q.name}: its rows changed with another campaign's trajectories")
        elif t_big > 4 * t_small + 0.025:
            grew.append(f"{q.name} ({q.complexity}): {t_small * 1000:.1f} ms -> {t_big * 1000:.1f} ms "
                        f"with {GROWTH + 1} times the trajectories")
    assert grew == []
