"""`diagkg check` says why an ideal repair that replaces a blown fuse does not work (an outsider's tail lamp and
its scenarios, written here): a shorted lamp blows the 5 A fuse; a plan that replaces the fuse alone leaves the
short, which blows the new fuse. The check said "the faults damage fuse (blown at 24 A), which stays damaged until
it is replaced too", where the plan does replace it: it now says that the plan replaces the fuse and that a fault
it leaves in place damages it again. A plan that also replaces the lamp passes."""

from __future__ import annotations

import pytest

from diagkg.env.checks import check_scenario
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

SYSTEM = """\
@prefix :        <https://example.org/tl/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:tl a dk:System ; dk:systemKey "tl" ; dcterms:identifier "tl" ; rdfs:label "Tail lamp" ;
    dk:groundReference :bat.neg ; dcterms:description "A battery lights a tail lamp through a 5 A fuse." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :tl .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Measurable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Fuse" ; dk:partOf :body ; dk:ratedCurrent 5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" .
:fuse.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Tail lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/tl-scenarios/> .
@prefix sys:     <https://example.org/tl/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:ID a dk:Scenario ; dk:scenarioNumber NUMBER ; dcterms:identifier "ID" ; rdfs:label "Shorted lamp" ;
    dcterms:description "The lamp is shorted; the short blew the fuse." ; dk:onSystem sys:tl ;
    dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lamp is dark." ; dk:idealDiagnosis "The short blew the fuse." ;
    dk:statedSymptom [ dk:about sys:lamp ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:lamp, sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ; STEPS ] ;
    dk:actionBudget 10 .
"""

STEP = "[ a dk:DiagnosticAction ; dk:position {} ; dk:actionType dk:ReplaceComponent ; dk:target sys:{} ]"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tl")
    (folder / "tl.ttl").write_text(SYSTEM)
    plans = {"TL.FUSE": ["fuse"], "TL.BOTH": ["lamp", "fuse"]}
    for number, (sid, parts) in enumerate(plans.items(), 9801):
        steps = "dk:step " + " , ".join(STEP.format(k, part) for k, part in enumerate(parts, 1))
        (folder / f"{sid}.ttl").write_text(SCENARIO.replace("ID", sid).replace("NUMBER", str(number))
                                           .replace("STEPS", steps))
    out = KnowledgeStore.memory()
    load_files(out, sorted(folder.glob("*.ttl")))
    return out


def test_replacing_the_fuse_alone_is_said_to_leave_what_blows_it_again(store):
    report = check_scenario(store, ScenarioCatalog(store).resolve("TL.FUSE"), seeds=1)
    (repair,) = [f for f in report.findings if f.check == "repair"]
    assert not repair.passed
    assert "the plan replaces fuse, but a fault it leaves in place damages it again" in repair.message
    assert "until it is replaced too" not in repair.message


def test_replacing_the_lamp_and_the_fuse_passes(store):
    report = check_scenario(store, ScenarioCatalog(store).resolve("TL.BOTH"), seeds=1)
    assert report.passed, [str(f) for f in report.findings]
