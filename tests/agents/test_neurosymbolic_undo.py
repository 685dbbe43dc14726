"""A repair that undoes what the readings show. On a guarded lamp written in the test (a 12 V battery
lights a lamp through a diode that guards it against a battery put in the wrong way round), battery in
the wrong way round (GUARD.1) and battery flat (GUARD.2) look the same at the start: the lamp dark. What
a reading of the battery says decides the repair: set alone on the system as described, a battery in the
wrong way round reads what was read (-12 V) and a flat one does not, and turning the battery round
(30 minutes) undoes the first, so the battery is turned round rather than named (a replacement,
120 minutes); a flat battery is named, as before. On the shipped catalogue, seeds 0-2 (16 scenarios
with a battery in the wrong way round): three cubes 165.8 -> 147.2 minutes a session, ambient light
162.0 -> 146.8, current sensor 181.0 -> 167.5, ten cubes 125.6 -> 122.0, the same scenarios solved
(docs/results/2026-12.md)."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

GUARD = """\
@prefix :        <https://example.org/guard/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:guard a dk:System ; dk:systemKey "guard" ; dcterms:identifier "guard" ; rdfs:label "A guarded lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery lights a lamp through a diode that guards it against a battery put in backwards." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :guard .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:guard_diode a dk:Diode ; dcterms:identifier "guard_diode" ; rdfs:label "Guard diode" ; dk:partOf :box ;
    dk:forwardVoltage 0.7 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :guard_diode.anode, :guard_diode.cathode .
:guard_diode.anode a dk:Port ; dk:portName "anode" . :guard_diode.cathode a dk:Port ; dk:portName "cathode" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 60 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :guard_diode.anode .
:guard_diode.cathode dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/guard-scenarios/> .
@prefix sys:     <https://example.org/guard/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:GUARD.{n} a dk:Scenario ; dk:scenarioNumber 935{n} ; dcterms:identifier "GUARD.{n}" ;
    rdfs:label "{label}" ; dk:onSystem sys:guard ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:{mode} ; dk:faultTarget sys:bat ] ;
    dk:initialObservations "The lamp is dark." ;
    dk:faultyComponent sys:bat ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:{repair} ; dk:target sys:bat ] ] ;
    dk:actionBudget 10 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guard")
    (folder / "guard.ttl").write_text(GUARD)
    (folder / "backwards.ttl").write_text(SCENARIO.format(n=1, label="The battery in backwards", mode="ReversedBattery",
                                                          repair="ReverseBattery"))
    (folder / "flat.ttl").write_text(SCENARIO.format(n=2, label="A flat battery", mode="DepletedBattery",
                                                     repair="ReplaceComponent"))
    s = KnowledgeStore.memory()
    load_files(s, [folder / "guard.ttl"])
    load_files(s, [folder / "backwards.ttl", folder / "flat.ttl"])
    return s


def steps(store, ident: str, **config) -> tuple[list[str], object]:
    return steps_with(store, ident, NeuroSymbolic(**config))


def test_a_battery_read_in_backwards_is_turned_round_not_named(store):
    done, result = steps(store, "GUARD.1")
    assert "measure_voltage bat" in done
    assert done[-1] == "reverse_battery bat" and "hypothesis bat" not in done
    assert result.end == "success_no_hypothesis"
    named, plain = steps(store, "GUARD.1", undo=False)
    assert named[-1] == "hypothesis bat" and plain.end == "success"
    assert result.cost < plain.cost


def test_a_flat_battery_is_named_as_before(store):
    done, result = steps(store, "GUARD.2")
    assert "measure_voltage bat" in done
    assert "reverse_battery bat" not in done and done[-1] == "hypothesis bat"
    assert result.end == "success"


def test_one_what_if_session_serves_the_worlds_and_a_later_session_starts_them_again_from_memory(store, monkeypatch):
    from diagkg.env import workspace
    from diagkg.env.worlds import Shadow

    made, injected, copies = [], [], []
    init, reset, copy = Shadow.__init__, Shadow.reset, workspace.KnowledgeView.private_copy

    def counted_init(self, *args, **kwargs):
        made.append(kwargs.get("session_id"))
        init(self, *args, **kwargs)

    def counted_reset(self, *args, **kwargs):
        injected.append(self.scenario.faults)
        return reset(self, *args, **kwargs)

    monkeypatch.setattr(Shadow, "__init__", counted_init)
    monkeypatch.setattr(Shadow, "reset", counted_reset)
    monkeypatch.setattr(workspace.KnowledgeView, "private_copy", lambda view: copies.append(view) or copy(view))
    first = NeuroSymbolic()
    done, result = steps_with(store, "GUARD.1", first)
    assert done[-1] == "reverse_battery bat"
    assert made == ["neuro-symbolic-undo"]          # one what-if session for every world of the session
    assert first.undo_shadow is None                  # given back when the session ended
    made.clear(), injected.clear(), copies.clear()
    again, repeat = steps_with(store, "GUARD.1", NeuroSymbolic())
    assert (again, repeat.cost) == (done, result.cost)
    assert made == ["neuro-symbolic-undo"]
    assert injected == [] and copies == []            # its worlds written back as worked out, on the shared copy


def steps_with(store, ident: str, assistant: NeuroSymbolic) -> tuple[list[str], object]:
    done: list[dict] = []
    result = run_session(ident, assistant, store=store, seed=0, record=False, on_round=lambda r: done.append(r.to_dict()))
    return [r["intention"] if r.get("kind") == "action" else "hypothesis " + " ".join(r["data"]["candidates"])
            for r in done], result
