"""``diagkg check``'s warning of a repair cheaper than the ideal one prices both as a session charges them, on a lamp
under a lidded hood written here (not shipped): replacing the lamp opens the lid first (10 min more, each round, as a
session does). A stranger's ideal repair "open the lid, replace the lamp" was said to cost 130 min against 120 for
replacing the lamp, where a session charges 140 and 130; and a short from the switch's output to 0 V, repaired by
replacing the lamp (130 min with the lid), got no word that replacing the switch (120 min, no lid) clears it too,
both being 120 min at the catalogue's costs."""

from __future__ import annotations

from pathlib import Path

from ..support.cli import run_cli

HOOD = '''\
@prefix :        <https://example.org/hood/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:hoodlamp a dk:System ; dk:systemKey "hoodlamp" ; dcterms:identifier "hoodlamp" ; rdfs:label "Lamp under a hood" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery and a switch in a box light a lamp under a hood; the lamp is reached through the lid." .
:main a dk:Module ; dcterms:identifier "main" ; rdfs:label "Circuit" ; dk:partOf :hoodlamp .
:box a dk:Enclosure ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :hoodlamp ;
    dk:affords dk:Observable, dk:Reachable, dk:Movable .
:hood a dk:Enclosure ; dcterms:identifier "hood" ; rdfs:label "Hood" ; dk:partOf :hoodlamp ; dk:affords dk:Observable, dk:Movable .
:lid a dk:InspectionPanel ; dcterms:identifier "lid" ; rdfs:label "Hood lid" ; dk:partOf :main ; dk:containedIn :hood ;
    dk:affords dk:Observable, dk:Reachable, dk:Openable .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :main ; dk:containedIn :box ;
    dk:voltage 12 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :main ; dk:containedIn :box ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :main ; dk:containedIn :hood ;
    dk:resistance 28.8 ; dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Measurable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:lamp dk:affordsWhen [ a dk:ConditionalAffordance ; dk:grants dk:Reachable, dk:Replaceable ;
    dk:whenAny [ a dk:StateCondition ; dk:onElement :lid ; dk:inState dk:Open ] ] .

:bat.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
'''

SHORT = '''\
@prefix :        <https://example.org/hood-scenarios/> .
@prefix sys:     <https://example.org/hood/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:HOOD.1 a dk:Scenario ; dk:scenarioNumber 9831 ; dcterms:identifier "HOOD.1" ; rdfs:label "A short from the lamp to the switch" ;
    dk:onSystem sys:hoodlamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:lamp.n ; dk:otherTarget sys:sw.n ] ;
    dk:initialObservations "The lamp is dark." ;
    dk:statedSymptom [ dk:about sys:lamp ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:lamp, sys:sw ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 10 .
'''

OPEN_LAMP = SHORT.replace('dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:lamp.n ; dk:otherTarget sys:sw.n',
                          'dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp').replace(
    "dk:faultyComponent sys:lamp, sys:sw", "dk:faultyComponent sys:lamp").replace(
    "A short from the lamp to the switch", "The lamp's filament is broken")
LID_FIRST = OPEN_LAMP.replace(
    "dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ]",
    "dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:OpenOpening ; dk:target sys:lid ], "
    "[ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ]")


def _check(tmp_path: Path, scenario: str) -> str:
    (tmp_path / "hood.ttl").write_text(HOOD)
    (tmp_path / "scenario.ttl").write_text(scenario)
    r = run_cli("--memory", "check", str(tmp_path / "hood.ttl"), str(tmp_path / "scenario.ttl"))
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_a_cheaper_repair_outside_the_hood_is_found_at_what_a_session_charges(tmp_path):
    out = _check(tmp_path, SHORT)
    assert "ideal: a repair cheaper than the ideal one restores the system: replace_component sw (120 min as a " \
           "session charges it, access included, the ideal repair 130 min)" in out, out


def test_the_lid_is_paid_with_the_lamp_and_an_opening_of_its_own_besides(tmp_path):
    assert OPEN_LAMP != SHORT and LID_FIRST != OPEN_LAMP
    # a hand-written plan "replace the lamp" costs 120 min at the catalogue's prices, where a session charges 130 (the
    # lid): reports measured the oracle at 1.08 times the ideal repair, unsaid (a stranger's fuse under a box lid)
    out = _check(tmp_path, OPEN_LAMP)
    assert "ideal: a session charges 130 min for the ideal repair (taking open_opening lid by itself), where its steps " \
           "cost 120 at the catalogue's prices: cost / ideal is measured against 120; state dk:costMinutes 130 on the " \
           "plan" in out, out
    stated = OPEN_LAMP.replace("dk:idealRepair [ a dk:RepairPlan ;", "dk:idealRepair [ a dk:RepairPlan ; dk:costMinutes 130 ;")
    assert stated != OPEN_LAMP and "ideal:" not in _check(tmp_path, stated)
    out = _check(tmp_path, LID_FIRST)
    assert "replace_component lamp (130 min as a session charges it, access included, the ideal repair 140 min)" in out, out
    # the opening step repairs nothing: said so, not as a part left broken
    assert "without step 1 (open_opening lid): it repairs nothing, and a session takes the access a repair needs by " \
           "itself" in out, out


def test_a_generated_ideal_repair_states_what_a_session_charges_and_reports_read_it(tmp_path):
    # `cost / ideal` summed the ideal repair's steps at the catalogue's costs: the oracle, repairing the lamp under
    # the lid as the generated plan says, read 1.08 (130 min against 120)
    import csv

    (tmp_path / "hood.ttl").write_text(HOOD)
    store = str(tmp_path / "store")
    assert run_cli("--store", store, "load", str(tmp_path / "hood.ttl")).returncode == 0
    r = run_cli("--store", store, "generate", "hoodlamp", "--modes", "OpenComponent", "--out", str(tmp_path / "gen"))
    assert r.returncode == 0, r.stderr
    lamp = next(f for f in (tmp_path / "gen").glob("*.ttl") if "dk:target sys:lamp" in f.read_text())
    assert "dk:costMinutes 130" in lamp.read_text(), lamp.read_text()
    assert run_cli("--store", store, "load", str(tmp_path / "gen")).returncode == 0
    import json

    r = run_cli("--store", store, "evaluate", "--assistant", "oracle", "--scenarios", "system:hoodlamp", "--name", "orc",
                "--format", "json")
    assert r.returncode == 0, r.stderr
    campaign = json.loads(r.stdout.strip().splitlines()[-1])["campaign"]
    r = run_cli("--store", store, "report", campaign, "--out", str(tmp_path / "report"))
    assert r.returncode == 0, r.stderr
    with (tmp_path / "report" / "by-scenario.csv").open() as f:
        rows = list(csv.DictReader(f))
    mine = next(row for row in rows if row["scenario"] == lamp.name.split("-", 1)[0])
    assert float(mine["cost / ideal"]) == 1.0, mine
