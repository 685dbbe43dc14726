"""An action's value is a finite number: NaN, infinity (``1e999`` as Python's JSON reads it) were taken,
played and recorded in the trajectory as the action's parameter ("nan", "inf"), from Python and from an
``exec:`` assistant, on a system written here (a dynamo lamp)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from diagkg.env.actions import Action
from diagkg.env.contract import ProtocolError, ProtocolFault, read_reply
from diagkg.errors import ActionError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

LAMP = """\
@prefix :        <https://example.org/dynlamp2/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:dynlamp2 a dk:System ; dk:systemKey "dynlamp2" ; dcterms:identifier "dynlamp2" ; rdfs:label "Dynamo lamp" ;
    dk:groundReference :gen.neg ; dcterms:description "A dynamo feeds a lamp through a cable." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :dynlamp2 .
:gen a dk:VoltageSource ; dcterms:identifier "gen" ; rdfs:label "Dynamo" ; dk:partOf :frame ; dk:voltage 6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :gen.pos, :gen.neg .
:gen.pos a dk:Port ; dk:portName "pos" . :gen.neg a dk:Port ; dk:portName "neg" .
:wire a dk:Cable ; dcterms:identifier "wire" ; rdfs:label "Lamp wire" ; dk:partOf :frame ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :wire.p, :wire.n .
:wire.p a dk:Port ; dk:portName "p" . :wire.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :frame ; dk:resistance 15 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:gen.pos dk:connectedTo :wire.p .
:wire.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :gen.neg .
"""

WIRE_OFF = """\
@prefix sys:     <https://example.org/dynlamp2/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://example.org/dynlamp2-scenarios/DYN2.1> a dk:Scenario ; dk:scenarioNumber 9721 ;
    dcterms:identifier "DYN2.1" ; rdfs:label "Lamp wire off" ; dk:onSystem sys:dynlamp2 ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:wire.n ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:wire ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReconnectCable ; dk:target sys:wire ] ] ;
    dk:actionBudget 6 .
"""

AGENT = """\
import sys
for line in sys.stdin:
    if '"end"' in line:
        break
    print('{"kind": "act", "action": "measure_voltage", "targets": ["lamp"], "value": %s}', flush=True)
"""


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "nan", "1e999"])
def test_a_value_that_is_no_finite_number_is_refused_when_made(value):
    with pytest.raises(ActionError):
        Action("adjust_potentiometer", ("pot",), value)
    assert Action("adjust_potentiometer", ("pot",), "0.25").value == 0.25


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999"])
def test_an_exec_assistant_sending_one_is_stopped_and_nothing_is_played(tmp_path: Path, value: str):
    with pytest.raises(ProtocolError) as caught:
        read_reply('{"kind": "act", "action": "measure_voltage", "targets": ["lamp"], "value": %s}' % value,
                   ["lamp"], ["measure_voltage"])
    assert caught.value.fault is ProtocolFault.SCHEMA
    (tmp_path / "lamp.ttl").write_text(LAMP)
    (tmp_path / "s.ttl").write_text(WIRE_OFF)
    (tmp_path / "agent.py").write_text(AGENT % value)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "lamp.ttl", tmp_path / "s.ttl"])
    result = run_session("DYN2.1", f"exec:{sys.executable} {tmp_path / 'agent.py'}", store=store, seed=0)
    assert result.cost == 0.0 and result.fault is ProtocolFault.SCHEMA, result
    # nothing of the value reached the trajectory (it was stored as the action's parameter, "nan" or "inf")
    stored = list(store.raw.quads_for_pattern(None, NamedNode("https://w3id.org/diagkg/ontology#actionParameterValue"), None))
    assert stored == [] and len(list(store.raw.quads_for_pattern(NamedNode(result.trajectory + "#session"), None, None))) > 0
