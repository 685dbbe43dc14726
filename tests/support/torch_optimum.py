"""Scenarios written for the optimal policy's tests (tests/evaluation/test_optimum.py, test_regret_report.py):
five faults of the torch (tests/support/torch.py), one of them intermittent, each with a budget of three rounds,
and the small catalogue the exhaustive enumeration of every policy is run over."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from .torch import TORCH

SCENARIO = """\
@prefix : <https://example.org/torch-optimum/> .
@prefix sys: <https://example.org/torch/> .
@prefix dk: <https://w3id.org/diagkg/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
:{id} a dk:Scenario ; dk:scenarioNumber {n} ; dcterms:identifier "{id}" ; rdfs:label "{id}" ;
    dk:onSystem sys:torch ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:{mode} ; dk:faultTarget sys:{target} {extra}] ;
    dk:initialObservations "The torch stays dark when switched on." ; dk:faultyComponent sys:{faulty} ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:{repair} ; dk:target sys:{faulty} ] ] ;
    dk:actionBudget 3 .
"""
CASES = [
    dict(id="OPT.1", n=9301, mode="DepletedBattery", target="bat", faulty="bat", repair="ReplaceComponent", extra=""),
    dict(id="OPT.2", n=9302, mode="DetachedEnd", target="lead.n", faulty="lead", repair="ReconnectCable", extra=""),
    dict(id="OPT.3", n=9303, mode="OpenComponent", target="bulb", faulty="bulb", repair="ReplaceComponent", extra=""),
    dict(id="OPT.4", n=9304, mode="DetachedEnd", target="ret.p", faulty="ret", repair="ReconnectCable", extra=""),
    # intermittent: the lead's end comes off half of the time
    dict(id="OPT.5", n=9305, mode="LooseConnectionFault", target="lead.p", faulty="lead", repair="ReconnectCable",
         extra="; dk:probability 0.5 "),
]
ACTIONS = ("measure_voltage", "reconnect_cable", "replace_component")


def write_files(folder: Path, cases: list[dict[str, str]] | None = None) -> list[Path]:
    """The torch and the scenarios ``cases`` (all of :data:`CASES` by default) as files in ``folder``."""
    files = [folder / "torch.ttl"]
    files[0].write_text(TORCH)
    for case in CASES if cases is None else cases:
        files.append(folder / f"{case['id']}.ttl")
        files[-1].write_text(SCENARIO.format(**case))
    return files


def load_into(store: KnowledgeStore, folder: Path) -> KnowledgeStore:
    load_files(store, write_files(folder))
    return store
