"""A report of a campaign one of whose scenarios was removed since (`diagkg remove --scenario`) said the campaign
was unfinished ("1 of 2 assistant × scenario slots have not run all their sessions … resume it"), though every
session had run: a slot's batches name their scenario by the number its graph held, so they were not read back.
Such a slot is now left to the note on removed graphs. Run on a bicycle lamp written here
(tests/support/bike_lamp.py) with two scenarios."""

from __future__ import annotations

from pathlib import Path

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, report
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.updates import remove_graphs

from ..support.bike_lamp import bike_lamp

SCENARIO = """\
@prefix sys:     <https://example.org/rmlamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://w3id.org/diagkg/scenario/RM.ID> a dk:Scenario ; dk:scenarioNumber NUMBER ; dcterms:identifier "RM.ID" ;
    rdfs:label "LABEL" ; dk:onSystem sys:rmlamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode MODE ; dk:faultTarget sys:TARGET ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:PART ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType ACTION ; dk:target sys:PART ] ] ;
    dk:actionBudget 6 .
"""


def _scenario(sid: str, number: int, label: str, mode: str, target: str, part: str, action: str) -> str:
    return (SCENARIO.replace("ID", sid).replace("NUMBER", str(number)).replace("LABEL", label)
            .replace("MODE", mode).replace("TARGET", target).replace("PART", part).replace("ACTION", action))


def test_a_campaign_whose_scenario_was_removed_is_not_called_unfinished(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")
    (tmp_path / "rmlamp.ttl").write_text(bike_lamp("rmlamp", 1.0))
    (tmp_path / "rm1.ttl").write_text(_scenario("1", 9771, "Cable off", "dk:DetachedEnd", "cable.n", "cable",
                                                "dk:ReconnectCable"))
    (tmp_path / "rm2.ttl").write_text(_scenario("2", 9772, "Fuse blown", "dk:BlownFuse", "fuse", "fuse",
                                                "dk:ReplaceComponent"))
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "rmlamp.ttl", tmp_path / "rm1.ttl", tmp_path / "rm2.ttl"])
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle",), scenarios=(9771, 9772), runs=1, name="rm"))
    execution.run(store, campaign)
    assert report.unfinished(store, [campaign]) == []

    remove_graphs(store, [graphs.named("scenario", "RM.2")])
    assert report.unfinished(store, [campaign]) == []
    (gone,) = report.gone_graphs(store, [campaign])
    assert "<https://w3id.org/diagkg/graph/scenario/RM.2>" in gone
