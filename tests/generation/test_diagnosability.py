"""``diagkg diagnosability``: what a system's tests tell apart, on the workshop lamp written in
the test (tests/generation/workshop.py): ambiguity groups, the cheapest separating actions, fault
resolution, the faults nobody notices; Markdown, HTML, and RDF kept in the store."""

from __future__ import annotations

import json

import pytest

from diagkg.env.actions import action_catalogue
from diagkg.generation.diagnosability import diagnose
from diagkg.generation.generate import Dropped
from diagkg.generation.report import checked, markdown, triples
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.cli import run_cli
from .workshop import WORKSHOP


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workshop")
    (folder / "workshop.ttl").write_text(WORKSHOP)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "workshop.ttl"])
    return store, diagnose(store, "workshop", depth=2)


def test_ambiguity_groups_and_fault_resolution(report):
    _, report = report
    groups = [g for g in report.groups if len(g.members) > 1]
    # an open switch and a contact stuck open look the same to every test: one part, replaced either way
    assert [(g.members, g.parts) for g in groups] == [(("OpenComponent:sw", "StuckOpen:sw"), frozenset({"sw"}))]
    one, two, three = report.resolution()
    assert 0 < one <= two <= three == 1.0
    assert report.resolution(weighted=True)[0] > one        # the likelier faults are the better isolated
    assert not report.exhausted


def test_the_cheapest_action_that_separates_two_faults(report):
    _, report = report
    # a lead's end off and the lead open: the same lamp dark; a look at the lead tells them apart
    sep = report.separations[("DetachedEnd:lead_a.n", "OpenComponent:lead_a")]
    assert [(a.action, a.targets) for a in sep.steps] == [("observe_component", ("lead_a",))] and sep.minutes == 10
    # different lamps dark at the start: no action needed
    start = report.separations[("OpenComponent:lamp_a", "OpenComponent:lamp_b")]
    assert start.steps == () and start.minutes == 0


def test_faults_nobody_notices_and_what_shows_them(report):
    store, report = report
    unnoticed = {u.fault: u for u in report.unnoticed}
    led = unnoticed["OpenComponent:led"]            # only the indicator is dark: the lamps work
    # a look at it, or (scoring 7) a switch worked, which shows the lights while it holds: 10 minutes either way
    assert led.reason is Dropped.WORKING and led.revealed_by.action in ("observe_component", "close_switch")
    shorted = unnoticed["ShortedComponent:dio"]      # nothing a person sees; a meter does
    assert shorted.reason is Dropped.UNSEEN and shorted.revealed_by is not None
    assert not set(unnoticed) & set(report.faults)
    text = markdown(report)
    assert "OpenComponent:sw, StuckOpen:sw" in text and "| OpenComponent:led | working |" in text
    # the RDF conforms to the shapes (with the system it is about)
    catalogue = {aid: spec.iri for aid, spec in action_catalogue(store).items()}
    rdf = triples(report, "https://example.org/workshop/workshop", catalogue)
    assert checked(rdf, "report", [store.graph_as_rdflib(graphs.system("workshop"))]) == rdf


@pytest.mark.slow
def test_the_command_writes_markdown_html_and_rdf(tmp_path):
    system = tmp_path / "workshop.ttl"
    system.write_text(WORKSHOP)
    store = tmp_path / "store"
    r = run_cli("--store", str(store), "diagnosability", str(system), "--depth", "1", "--out", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "rep" / "diagnosability-workshop.md").read_text()
    html = (tmp_path / "rep" / "diagnosability-workshop.html").read_text()
    assert "## Ambiguity groups" in md and "<h2>Ambiguity groups</h2>" in html
    assert "OpenComponent:sw, StuckOpen:sw" in md and "OpenComponent:sw, StuckOpen:sw" in html
    rows = json.loads(run_cli("--store", str(store), "query", "diagnosability-summary", "--format", "json").stdout)
    [row] = rows["results"]["bindings"]
    assert row["system"]["value"] == "https://example.org/workshop/workshop"
    assert int(row["groups"]["value"]) == 1 and int(row["faults"]["value"]) > 40
    assert 0 < float(row["one"]["value"]) <= float(row["three"]["value"]) == 1.0
