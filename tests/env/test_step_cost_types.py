"""Every cost a step returns is a float, on a system written here (a dynamo and a lamp on a frame): naming
the frame (a module, not a part) cost the int 120, where every other step returns a float."""

from __future__ import annotations

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.kg.loading import load_documents
from diagkg.kg.rdfio import parse_text
from diagkg.kg.store import KnowledgeStore

LAMP = """\
@prefix :        <https://example.org/dynamo/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:dynamo a dk:System ; dk:systemKey "dynamo" ; dcterms:identifier "dynamo" ; rdfs:label "Dynamo lamp" ;
    dk:groundReference :dyn.neg ; dcterms:description "A dynamo feeds a lamp through a cable." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :dynamo .
:dyn a dk:VoltageSource ; dcterms:identifier "dyn" ; rdfs:label "Dynamo" ; dk:partOf :frame ; dk:voltage 6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :dyn.pos, :dyn.neg .
:dyn.pos a dk:Port ; dk:portName "pos" . :dyn.neg a dk:Port ; dk:portName "neg" .
:cable a dk:Cable ; dcterms:identifier "cable" ; rdfs:label "Lamp cable" ; dk:partOf :frame ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cable.p, :cable.n .
:cable.p a dk:Port ; dk:portName "p" . :cable.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :frame ; dk:resistance 12 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:dyn.pos dk:connectedTo :cable.p . :cable.n dk:connectedTo :lamp.p . :lamp.n dk:connectedTo :dyn.neg .
"""

OFF = """\
@prefix :        <https://example.org/dynamo-scenarios/> .
@prefix sys:     <https://example.org/dynamo/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:DYN.1 a dk:Scenario ; dk:scenarioNumber 9811 ; dcterms:identifier "DYN.1" ; rdfs:label "Lamp cable off" ;
    dk:onSystem sys:dynamo ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:cable.n ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:cable ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReconnectCable ; dk:target sys:cable ] ] ;
    dk:actionBudget 6 .
"""


def test_every_cost_a_step_returns_is_a_float():
    store = KnowledgeStore.memory()
    load_documents(store, [(parse_text(LAMP, "dynamo.ttl"), "test:dynamo.ttl"), (parse_text(OFF, "dyn1.ttl"), "test:dyn1.ttl")])
    with diagkg.make("DYN.1", store=store) as session:
        session.reset(seed=0)
        moves = [Hypothesis(["frame"]), Hypothesis(["nope"]), Hypothesis(["lamp"]), Action("observe_component", ("nope",)),
                 Action("measure_voltage", ("lamp",)), Hypothesis(["cable"])]
        for move in moves:
            outcome, cost, _, _, info = session.step(move)
            assert type(cost) is float and type(outcome.cost) is float, (move, cost)
            assert all(type(c) is float for _, _, c in outcome.executed), (move, outcome.executed)
            assert type(info["total_cost"]) is float
        assert outcome.verdict == "correct" and info["total_cost"] == 120.0 + 0.0 + 120.0 + 0.0 + 20.0 + 10.0


def test_a_scenario_named_by_what_names_none_is_refused_clearly():
    # make(None) and make(3.5) raised AttributeError ('float' object has no attribute 'lower'); make(True) ran scenario 1
    import numpy as np
    import pytest

    from diagkg.errors import InputError

    store = KnowledgeStore.memory()
    load_documents(store, [(parse_text(LAMP, "dynamo.ttl"), "test:dynamo.ttl"), (parse_text(OFF, "dyn1.ttl"), "test:dyn1.ttl")])
    for ref in (None, 3.5, True, b"DYN.1"):
        with pytest.raises(InputError, match="named by its number"):
            diagkg.make(ref, store=store)       # type: ignore[arg-type]
    with diagkg.make(np.int64(9811), store=store) as session:
        assert session.scenario.id == "DYN.1"


def test_a_closed_sessions_state_is_refused_not_read_from_the_next_session():
    # a closed session's memory goes to the pool: its state() read whatever the next session left there
    import pytest

    from diagkg.errors import SessionError

    store = KnowledgeStore.memory()
    load_documents(store, [(parse_text(LAMP, "dynamo.ttl"), "test:dynamo.ttl"), (parse_text(OFF, "dyn1.ttl"), "test:dyn1.ttl")])
    first = diagkg.make("DYN.1", store=store)
    first.reset(seed=0)
    assert first.state() != first.nominal_state           # the cable off
    first.close()
    with diagkg.make("DYN.1", store=store) as second:
        second.reset(seed=0)
        second.step(Action("reconnect_cable", ("cable",)))
        with pytest.raises(SessionError):
            first.state()
        with pytest.raises(SessionError):
            first.works_again()


def test_the_tools_at_hand_are_names_of_tools_the_catalogue_knows():
    # Session(tools="multimeter") read the string letter by letter: no multimeter at hand, every measurement refused;
    # a misspelt tool was as silent
    import pytest

    from diagkg.env.outcomes import Refusal
    from diagkg.env.service import Session
    from diagkg.env.workspace import resolve_scenario
    from diagkg.errors import SessionError

    store = KnowledgeStore.memory()
    load_documents(store, [(parse_text(LAMP, "dynamo.ttl"), "test:dynamo.ttl"), (parse_text(OFF, "dyn1.ttl"), "test:dyn1.ttl")])
    scenario = resolve_scenario(store, "DYN.1")
    for tools, refusal in (("multimeter", None), ("Multimeter", None), ((), Refusal.MISSING_TOOL)):
        with Session(scenario, store, tools=tools) as session:
            session.reset(seed=0)
            assert session.step(Action("measure_voltage", ("lamp",)))[0].refusal is refusal, tools
    with pytest.raises(SessionError, match="multimetre"):
        Session(scenario, store, tools=("multimetre",))
