"""The ontology's documentation (scripts/ontology_docs.py, the MkDocs hook): pyLODE on the shipped ontology
and on a small ontology written here; every class and property is on the page."""

from __future__ import annotations

import importlib.util

import pytest
import rdflib
from rdflib.namespace import OWL, RDF

from .support.paths import ROOT

# pyLODE leaves its stylesheet open for the garbage collector (its own bug, not ours)
pytestmark = [pytest.mark.filterwarnings("ignore:unclosed file.*pylode:ResourceWarning"),
              pytest.mark.filterwarnings("ignore:Exception ignored in.*pylode:pytest.PytestUnraisableExceptionWarning")]

SMALL = """\
@prefix :     <https://example.org/lamp#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

<https://example.org/lamp> a owl:Ontology ; rdfs:label "Lamp ontology" .
:Lamp a owl:Class ; rdfs:label "lamp" ; rdfs:comment "Something that glows when fed." .
:Filament a owl:Class ; rdfs:subClassOf :Lamp ; rdfs:label "filament lamp" .
:wattage a owl:DatatypeProperty ; rdfs:domain :Lamp ; rdfs:label "wattage" .
"""


def hook():
    spec = importlib.util.spec_from_file_location("ontology_docs", ROOT / "scripts" / "ontology_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_small_ontology_written_here(tmp_path):
    (tmp_path / "onto").mkdir()
    (tmp_path / "onto" / "lamp.ttl").write_text(SMALL)
    page = hook().generate(tmp_path / "out" / "lamp.html", tmp_path / "onto").read_text()
    assert "Lamp ontology" in page and "Something that glows when fed." in page
    for label in ("filament lamp", "wattage"):
        assert label in page


def test_the_shipped_ontology_every_class_and_property(tmp_path):
    page = hook().generate(tmp_path / "diagkg.html").read_text()
    g = rdflib.Graph()
    for path in sorted((ROOT / "ontology").glob("*.ttl")):
        g.parse(path, format="turtle")
    terms = {s for kind in (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)
             for s in g.subjects(RDF.type, kind) if str(s).startswith("https://w3id.org/diagkg/ontology#")}
    assert len(terms) > 100
    missing = [t for t in terms if str(t) not in page]
    assert not missing, missing[:10]


def test_a_time_or_a_cost_in_minutes_states_its_unit():
    from diagkg.kg.validation import default_ontology

    qudt = rdflib.Namespace("http://qudt.org/schema/qudt/")
    time = rdflib.URIRef("http://qudt.org/vocab/quantitykind/Time")
    dk = "https://w3id.org/diagkg/ontology#"
    ontology = default_ontology()
    timed = [p for p in ontology.subjects(RDF.type, OWL.DatatypeProperty) if str(p).startswith(dk)
             and (str(p).endswith(("Seconds", "Minutes")) or str(p)[len(dk):] in
                  {"expectedCost", "oracleCost", "perfectInformationCost", "tallyCost"})]
    assert len(timed) >= 8
    for p in timed:
        assert (p, qudt.unit, None) in ontology and (p, qudt.hasQuantityKind, time) in ontology, p
