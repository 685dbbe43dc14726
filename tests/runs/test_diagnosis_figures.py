"""A diagnosis's precision and recall, and a campaign's healthy replacements, count a part the faults
damaged at once as faulty.

Found on a bike light written as a user would: a shorted bulb blows the fuse as the faults are injected; a
correct hypothesis must name the bulb and the fuse, and the oracle did, but precision was scored against
the injected parts alone ({bulb}): 0.5 for the oracle's perfect diagnosis. Here on a lamp behind a fuse,
written in the test."""

from __future__ import annotations

from pathlib import Path

from diagkg.env.actions import Action
from diagkg.evaluation.sessions import healthy_replacements
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs.runner import run_session

from ..support.scripted import Scripted

LAMP = """\
@prefix :        <https://example.org/fused/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:fused a dk:System ; dk:systemKey "fused" ; dcterms:identifier "fused" ; rdfs:label "Fused lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery lights a lamp through a 1 A fuse and a second lamp beside it." .
:board a dk:Module ; dcterms:identifier "board" ; rdfs:label "Board" ; dk:partOf :fused .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :board ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Fuse" ; dk:partOf :board ; dk:ratedCurrent 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:left a dk:Bulb ; dcterms:identifier "left" ; rdfs:label "Left lamp" ; dk:partOf :board ; dk:resistance 48 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :left.p, :left.n .
:left.p a dk:Port ; dk:portName "p" . :left.n a dk:Port ; dk:portName "n" .
:right a dk:Bulb ; dcterms:identifier "right" ; rdfs:label "Right lamp" ; dk:partOf :board ; dk:resistance 48 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :right.p, :right.n .
:right.p a dk:Port ; dk:portName "p" . :right.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :left.p, :right.p .
:bat.neg dk:connectedTo :left.n, :right.n .
"""

SHORTED = """\
@prefix :        <https://example.org/fused-scenarios/> .
@prefix sys:     <https://example.org/fused/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:FUSED.1 a dk:Scenario ; dk:scenarioNumber 8701 ; dcterms:identifier "FUSED.1" ; rdfs:label "Left lamp shorted" ;
    dk:onSystem sys:fused ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:left ] ;
    dk:initialObservations "Both lamps are dark." ;
    dk:faultyComponent sys:left, sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:left ] ,
                [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    dk:actionBudget 10 .
"""


def test_naming_the_fuse_a_short_blew_is_no_loss_of_precision(tmp_path: Path):
    (tmp_path / "fused.ttl").write_text(LAMP)
    (tmp_path / "shorted.ttl").write_text(SHORTED)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "fused.ttl", tmp_path / "shorted.ttl"])
    oracle = run_session("FUSED.1", "oracle", store=store, seed=0, record=False, keep_ledger=False)
    assert oracle.end == "success" and oracle.diagnosis is not None
    assert (oracle.diagnosis.precision, oracle.diagnosis.recall, oracle.diagnosis.false_removals) == (1.0, 1.0, 0)
    # a diagnosis that names the lamp alone is partial (the fuse stays blown): it found half of what is faulty
    model_based = run_session("FUSED.1", "model-based", store=store, seed=0, record=False, keep_ledger=False)
    assert model_based.end == "success" and model_based.diagnosis is not None
    assert model_based.diagnosis.recall == 1.0 and model_based.diagnosis.precision == 1.0


def test_replacing_the_fuse_a_short_blew_is_no_healthy_replacement(tmp_path: Path):
    # a campaign's summary counted a replacement healthy when the scenario injected no fault into the part:
    # the oracle's repair of a generated scenario (replace the part, then the fuse the short blew) counted one
    (tmp_path / "fused.ttl").write_text(LAMP)
    (tmp_path / "shorted.ttl").write_text(SHORTED)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "fused.ttl", tmp_path / "shorted.ttl"])
    plan = [Action("replace_component", ("right",)), Action("replace_component", ("left",)),
            Action("replace_component", ("fuse",))]
    result = run_session("FUSED.1", Scripted(plan), store=store, seed=0, keep_ledger=False)
    assert result.end == "success_no_hypothesis" and result.record is not None
    assert healthy_replacements(result.record.rounds) == 1           # the right lamp; not the fuse
    assert result.diagnosis is not None and result.diagnosis.false_removals == 1
    # the stored trajectory says which round's part was healthy (metrics-healthy-replacements reads it)
    stored = {(str(q.subject), str(q.object)) for q in store.raw.quads_for_pattern(None, DK.healthyPart.node, None, None)}
    assert stored == {(f"<{result.trajectory}#round-1>", "<https://example.org/fused/right>")}
