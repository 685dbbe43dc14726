"""A violation is reported in the file that describes its focus node (an outsider's tail lamp and a scenario on it,
written here): validated together, a system file whose fuse is rated -5 A and a scenario that names the fuse (its
fault's target, its faulty component) reported the fuse's violation twice, once in the system file and once at the
scenario's line, where the scenario says nothing wrong: the scenario is validated with the system as its context,
and a focus node was owned by any document that merely named it. A node the context describes now belongs to a
document only where that document describes it too."""

from __future__ import annotations

from diagkg.kg.validation import Validator

SYSTEM = """\
@prefix :        <https://example.org/lamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:lamp_sys a dk:System ; dk:systemKey "lamp_sys" ; dcterms:identifier "lamp_sys" ; rdfs:label "Tail lamp" ;
    dk:groundReference :bat.neg ; dcterms:description "A battery lights a lamp through a fuse." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :lamp_sys .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Fuse" ; dk:partOf :body ;
    dk:ratedCurrent RATING ; dk:affords dk:Replaceable, dk:Reachable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" .
:fuse.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1 ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/lamp-scenarios/> .
@prefix sys:     <https://example.org/lamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:LAMP.1 a dk:Scenario ; dk:scenarioNumber 9701 ; dcterms:identifier "LAMP.1" ; rdfs:label "Blown fuse" ;
    dcterms:description "The fuse has blown." ; dk:onSystem sys:lamp_sys ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:BlownFuse ; dk:faultTarget sys:fuse ] ;
    dk:initialObservations "The lamp is dark." ; dk:idealDiagnosis "Replace the fuse." ;
    dk:faultyComponent sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    EXTRA
    dk:actionBudget 10 .
"""


def write(tmp_path, rating: str, extra: str = ""):
    system, scenario = tmp_path / "lamp.ttl", tmp_path / "lamp-1.ttl"
    system.write_text(SYSTEM.replace("RATING", rating))
    scenario.write_text(SCENARIO.replace("EXTRA", extra))
    return system, scenario


def test_a_systems_violation_is_reported_in_the_system_file_alone(tmp_path):
    system, scenario = write(tmp_path, "-5")
    reports = {r.file: r for r in Validator().validate_paths([system, scenario])}
    (violation,) = reports[str(system)].violations
    assert "ratedCurrent" in violation.path and violation.line == SYSTEM.splitlines().index(
        next(line for line in SYSTEM.splitlines() if "RATING" in line)) + 1
    assert reports[str(scenario)].violations == []


def test_the_valid_pair_conforms(tmp_path):
    system, scenario = write(tmp_path, "5")
    assert all(r.conforms for r in Validator().validate_paths([system, scenario]))


def test_a_scenario_that_writes_about_a_systems_part_is_told_so(tmp_path):
    # the scenario itself rates the fuse again: the fuse's violation is the scenario's
    system, scenario = write(tmp_path, "5")
    scenario.write_text(scenario.read_text() + "sys:fuse dk:ratedCurrent -1 .\n")
    reports = {r.file: r for r in Validator().validate_paths([system, scenario])}
    assert reports[str(system)].violations == []
    lines = {v.line for v in reports[str(scenario)].violations if "ratedCurrent" in v.path}
    assert lines == {len(scenario.read_text().splitlines())}          # the line that rates it again
