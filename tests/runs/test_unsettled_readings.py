"""Readings that keep changing are marked in the trajectory RDF.

On the systems written in tests/support/chains.py: on the trip (a
relay switched by its own current; with a shorted lamp the circuit never
settles) a scripted session measures a current and voltages, which carry
``dk:settled false``, and a SPARQL query finds them; on the garland (a chain
of links, one off) the same readings settle and carry nothing, so the query
over every trajectory finds the trip's only. Trajectories conform to the
shapes, and a mark written where it means nothing is refused.
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from diagkg.env.actions import Action, Hypothesis, action_catalogue
from diagkg.errors import ValidationError
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs import trajectory
from diagkg.runs.runner import run_session

from ..support.chains import chain_store
from ..support.scripted import Scripted


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    return chain_store(tmp_path_factory.mktemp("user"))


TRIP_NS, GARLAND_NS = "https://example.org/trip/", "https://example.org/garland/"
TRIP_PLAN: list[Action | Hypothesis] = [
    Action("measure_current", ("lamp",)),        # 1: the relay trips and closes again: keeps changing
    Action("measure_voltage", ("lead",)),        # 2: both ends keep changing
    Hypothesis({"lamp"}),
]
GARLAND_PLAN: list[Action | Hypothesis] = [
    Action("measure_current", ("lamp",)),        # 1: no current (link 7 is off): settled
    Action("measure_voltage", ("link7",)),       # 2: settled
    Hypothesis({"link7"}),
]


@pytest.fixture(scope="module")
def session(store):  # noqa: F811
    return run_session("TRIP.1", Scripted(list(TRIP_PLAN)), store=store, seed=0)


@pytest.fixture(scope="module")
def settled(store):  # noqa: F811
    return run_session("GARLAND.1", Scripted(list(GARLAND_PLAN)), store=store, seed=0)


def test_unsettled_readings_are_found_with_sparql(store, session, settled):  # noqa: F811
    assert session.record.rounds[0]["data"]["lamp"]["settled"] is False      # what the typed outcome said
    assert "settled" not in settled.record.rounds[0]["data"]["lamp"]
    rows = store.select("trajectory-unsettled", {"trajectory": ox.NamedNode(session.trajectory)})
    found = {(r["round"], r["feature"], r["property"]) for r in rows}
    assert found == {(1, TRIP_NS + "lamp", str(DK.ElectricCurrent)),
                     (2, TRIP_NS + "lead.p", str(DK.ElectricPotential)),
                     (2, TRIP_NS + "lead.n", str(DK.ElectricPotential))}, rows
    assert all(isinstance(r["value"], float) and r["unit"].endswith("/A" if r["round"] == 1 else "/V")
               for r in rows), rows
    # over every trajectory: the trip's readings only, none of the garland's
    everywhere = store.select("trajectory-unsettled")
    assert {r["trajectory"] for r in everywhere} == {session.trajectory}
    assert len(everywhere) == len(rows)


def test_a_settled_reading_is_not_marked(store, settled):  # noqa: F811
    graph = settled.record.graph
    readings: dict[str, list[str]] = {}
    for prop in (DK.ElectricCurrent, DK.ElectricPotential):
        for q in store.raw.quads_for_pattern(None, ox.NamedNode("http://www.w3.org/ns/sosa/observedProperty"),
                                             prop.node, graph):
            marks = store.raw.quads_for_pattern(q.subject, DK.settled.node, None, graph)
            readings[q.subject.value.rsplit("#", 1)[1]] = [m.object.value for m in marks]
    # the lamp's current and link 7's voltage (its end that is off floats: an observation without a reading, marked
    # dk:floating) were read, none marked unsettled
    assert sorted(readings) == ["round-1-observation-1", "round-2-observation-1", "round-2-observation-2"], readings
    assert [f.subject.value.rsplit("#", 1)[1] for f in store.raw.quads_for_pattern(None, DK.floating.node, None, graph)] \
        == ["round-2-observation-1"]
    assert all(v == [] for v in readings.values()), readings


def test_the_mark_is_held_to_its_shape(store, session):  # noqa: F811
    catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
    quads = trajectory.to_quads(session.record, catalogue)
    trajectory.validate(quads, "unsettled")        # as written: conforms
    g = session.record.graph
    current = ox.NamedNode(session.record.iri + "#round-1-observation-1")
    wrong = [ox.Quad(q.subject, q.predicate, ox.Literal(True), g) if q.predicate == DK.settled.node
             and q.subject == current else q for q in quads]        # "settled true" is never written
    assert wrong != quads
    with pytest.raises(ValidationError) as marked:
        trajectory.validate(wrong, "marked true")
    assert any("dk:settled is written once, as false" in v.message for v in marked.value.violations), \
        [v.message for v in marked.value.violations]
    visual = [q.subject for q in quads if q.predicate.value.endswith("observedProperty")
              and q.object == DK.ElectricCurrent.node][0]
    retyped = [ox.Quad(q.subject, q.predicate, DK.LightEmission.node, g) if q.subject == visual
               and q.predicate.value.endswith("observedProperty") else q for q in quads]
    with pytest.raises(ValidationError) as light:
        trajectory.validate(retyped, "a light marked")
    assert [v.message for v in light.value.violations if "unsettled" in v.message] == [
        "only a voltage or current reading can be unsettled (dk:settled on a dk:LightEmission observation)"], \
        [v.message for v in light.value.violations]
