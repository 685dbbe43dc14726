"""Automatic access follows what a system declares: a part reached through a hatch the user typed a
peephole (``dk:Peephole``) whose opening grants it reach is reached by opening the hatch. The session
skipped every peephole when a part had to be reached, turned the enclosure over instead (which
grants nothing here) and refused the repair, charged for the turning. Also through a hypothesis: the
verdict's repair is priced with the same access. Written here, not shipped: a lamp under a hood."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

HOOD = '''\
@prefix :        <https://example.org/hatch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:hatchlamp a dk:System ; dk:systemKey "hatchlamp" ; dcterms:identifier "hatchlamp" ; rdfs:label "Lamp behind a hatch" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery lights a lamp in a hood; the lamp is seen and reached through a round hatch." .
:main a dk:Module ; dcterms:identifier "main" ; rdfs:label "Circuit" ; dk:partOf :hatchlamp .
:hood a dk:Enclosure ; dcterms:identifier "hood" ; rdfs:label "Hood" ; dk:partOf :hatchlamp ; dk:affords dk:Observable, dk:Movable .
:hatch a dk:Peephole ; dcterms:identifier "hatch" ; rdfs:label "Round hatch" ; dk:partOf :main ; dk:containedIn :hood ;
    dk:affords dk:Observable, dk:Reachable, dk:Openable .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :main ;
    dk:voltage 12 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :main ; dk:containedIn :hood ;
    dk:resistance 28.8 ; dk:powerThreshold 0.5 ; dk:affords dk:Measurable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:lamp dk:affordsWhen [ a dk:ConditionalAffordance ; dk:grants dk:Observable, dk:Reachable, dk:Replaceable ;
    dk:whenAny [ a dk:StateCondition ; dk:onElement :hatch ; dk:inState dk:Open ] ] .

:bat.pos dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
'''

SCENARIO = '''\
@prefix :        <https://example.org/hatch-scenarios/> .
@prefix sys:     <https://example.org/hatch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:HATCH.1 a dk:Scenario ; dk:scenarioNumber 9841 ; dcterms:identifier "HATCH.1" ; rdfs:label "The lamp is open" ;
    dk:onSystem sys:hatchlamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lamp in the hood is dark." ;
    dk:statedSymptom [ dk:about sys:lamp ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 10 .
'''


def hatch_store(folder: Path) -> KnowledgeStore:
    (folder / "hatch.ttl").write_text(HOOD)
    (folder / "hatch-scenarios.ttl").write_text(SCENARIO)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "hatch.ttl", folder / "hatch-scenarios.ttl"])
    return store


def test_a_part_reached_through_a_peephole_that_grants_reach_is_reached_by_opening_it(tmp_path):
    s = diagkg.make("HATCH.1", hatch_store(tmp_path))
    s.reset(seed=0)
    obs, cost, *_, info = s.step(Action("replace_component", ("lamp",)))
    assert obs.refusal is None, obs.message
    steps = [(a, t) for a, t, _ in obs.executed]
    assert steps[0] == ("open_opening", ("hatch",)) and ("invert_enclosure", ("hood",)) not in steps
    assert steps[-1] == ("replace_component", ("lamp",))
    assert info["repaired"] and cost == sum(c for *_, c in obs.executed)
    s.close()


def test_a_naming_of_the_part_is_repaired_through_the_same_opening(tmp_path):
    s = diagkg.make("HATCH.1", hatch_store(tmp_path))
    s.reset(seed=0)
    obs, cost, *_, info = s.step(Hypothesis(frozenset({"lamp"}), "the lamp is open"))
    assert obs.verdict == "correct" and info["repaired"], obs.message
    steps = [(a, t) for a, t, _ in obs.executed]
    assert ("open_opening", ("hatch",)) in steps and ("invert_enclosure", ("hood",)) not in steps, steps
    s.close()


# The hatch is in a fairing over the hood, not in the hood itself: the lamp's dk:affordsWhen names it all the
# same. Automatic access looked only at the openings of the part's own enclosure (and a part in no enclosure
# got none), so the repair was refused ("not reachable now") where opening the hatch grants reach.
FAIRING = HOOD.replace(
    ":hatch a dk:Peephole ; dcterms:identifier \"hatch\" ; rdfs:label \"Round hatch\" ; dk:partOf :main ; dk:containedIn :hood ;",
    ":fairing a dk:Enclosure ; dcterms:identifier \"fairing\" ; rdfs:label \"Fairing\" ; dk:partOf :hatchlamp ;"
    " dk:affords dk:Observable, dk:Movable .\n"
    ":hatch a dk:Peephole ; dcterms:identifier \"hatch\" ; rdfs:label \"Round hatch\" ; dk:partOf :main ;"
    " dk:containedIn :fairing ;")


def fairing_store(folder: Path, text: str) -> KnowledgeStore:
    (folder / "hatch.ttl").write_text(text)
    (folder / "hatch-scenarios.ttl").write_text(SCENARIO)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "hatch.ttl", folder / "hatch-scenarios.ttl"])
    return store


@pytest.mark.parametrize("text", [FAIRING, HOOD.replace(":lamp a dk:Bulb ; dcterms:identifier \"lamp\" ; "
                                                        "rdfs:label \"Lamp\" ; dk:partOf :main ; dk:containedIn :hood ;",
                                                        ":lamp a dk:Bulb ; dcterms:identifier \"lamp\" ; "
                                                        "rdfs:label \"Lamp\" ; dk:partOf :main ;")],
                         ids=["hatch-in-another-enclosure", "part-in-no-enclosure"])
def test_an_opening_the_part_names_is_opened_wherever_it_is(tmp_path, text):
    assert text != HOOD
    s = diagkg.make("HATCH.1", fairing_store(tmp_path, text))
    s.reset(seed=0)
    obs, cost, *_, info = s.step(Action("replace_component", ("lamp",)))
    assert obs.refusal is None, obs.message
    assert [(a, t) for a, t, _ in obs.executed] == [("open_opening", ("hatch",)), ("replace_component", ("lamp",))]
    assert info["repaired"] and cost == sum(c for *_, c in obs.executed) == 130.0
    s.close()
