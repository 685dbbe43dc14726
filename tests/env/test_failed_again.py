"""A new fuse that blows the moment it is in is what a technician sees first: a stranger's neuro-symbolic session on
a car's lights named the blown main fuse and was told only that it "was indeed faulty and has been repaired, but
the system still does not work". The short across a lamp that blew it was still there. Now the verdict says that
the new part failed again at once (``failed_again`` in its data, and in words)."""

from __future__ import annotations

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..sim.test_series_fuses import LANTERN

SCENARIO = """\
@prefix :        <https://example.org/lantern-scenarios/> .
@prefix sys:     <https://example.org/lantern/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:LAN.1 a dk:Scenario ; dk:scenarioNumber 9801 ; dcterms:identifier "LAN.1" ; rdfs:label "Lamp shorted" ;
    dk:onSystem sys:lantern ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lantern's lamp is dark." ;
    dk:faultyComponent sys:lamp, sys:branch ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ;
        dk:step [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:branch ] ] ;
    dk:actionBudget 10 .
"""


def test_a_new_fuse_that_blows_at_once_is_said_to(tmp_path):
    (tmp_path / "lantern.ttl").write_text(LANTERN)
    (tmp_path / "lan1.ttl").write_text(SCENARIO)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "lantern.ttl", tmp_path / "lan1.ttl"])
    with diagkg.make("LAN.1", store=store) as session:
        session.reset(seed=0)
        outcome, *_ = session.step(diagkg.Hypothesis({"branch"}))
        assert outcome.data["verdict"] == "partial" and outcome.data["works"] is False
        assert outcome.data["failed_again"] == ["branch"] and "branch fails again at once" in outcome.message
        # the short gone, the fuse named again: it holds, and the lantern works
        outcome, *_ = session.step(diagkg.Hypothesis({"lamp"}))
        assert "failed_again" not in outcome.data, outcome.data
        outcome, *_ = session.step(diagkg.Hypothesis({"branch"}))
        assert outcome.data["verdict"] == "correct" and "failed_again" not in outcome.data
