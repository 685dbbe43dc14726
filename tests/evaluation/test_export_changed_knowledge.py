"""`diagkg export` carried the scenario and system graphs as the store holds them *now*: after a `load --replace` of
the system a campaign was played on, the export shipped the new system as the one the campaign used, and `diagkg
import` added it to another store without a word (its campaign recording one version, its system another). An
export is now refused while a graph the campaign used has changed (naming it with both versions), and an import
refuses an export whose graphs are not at the versions its campaign recorded. Run on a bicycle lamp written here
(tests/support/bike_lamp.py): fuse rated 1 A, then 2 A."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagkg.errors import VersionsNotKept
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, transfer
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.bike_lamp import bike_lamp

OFF = """\
@prefix sys:     <https://example.org/xlamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://w3id.org/diagkg/scenario/XL.1> a dk:Scenario ; dk:scenarioNumber 9761 ; dcterms:identifier "XL.1" ;
    rdfs:label "Cable off at the lamp" ; dk:onSystem sys:xlamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:cable.n ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:cable ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReconnectCable ; dk:target sys:cable ] ] ;
    dk:actionBudget 6 .
"""


def test_a_campaign_is_not_exported_or_imported_with_knowledge_it_was_not_played_on(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")
    (tmp_path / "xlamp.ttl").write_text(bike_lamp("xlamp", 1.0))
    (tmp_path / "xl1.ttl").write_text(OFF)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "xlamp.ttl", tmp_path / "xl1.ttl"])
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle",), scenarios=(9761,), runs=1, name="moved"))
    execution.run(store, campaign)
    system = graphs.system("xlamp")
    played_on = store.version_of(system)
    good = transfer.export_campaign(store, campaign.id)

    (tmp_path / "xlamp.ttl").write_text(bike_lamp("xlamp", 2.0))
    load_files(store, [tmp_path / "xlamp.ttl"], replace=True)
    with pytest.raises(VersionsNotKept) as refused:
        transfer.export_campaign(store, campaign.id)
    assert [(c.graph, c.recorded, c.now) for c in refused.value.changed] == [
        (system.value, played_on, store.version_of(system))]

    # what an export wrote before it checked: the campaign with the replaced system
    stale = store.dump(transfer.campaign_graphs(store, campaign.id))
    elsewhere = KnowledgeStore.memory()
    with pytest.raises(VersionsNotKept) as refused:
        transfer.import_campaign(elsewhere, stale, "stale.nq")
    assert [c.graph for c in refused.value.changed] == [system.value]
    assert not elsewhere.raw.contains_named_graph(campaign.graph)
    assert not elsewhere.raw.contains_named_graph(system)

    # the export made before the change imports, with the system the campaign was played on
    result = transfer.import_campaign(elsewhere, good, "good.nq")
    assert result.trajectories == 1 and elsewhere.version_of(system) == played_on
