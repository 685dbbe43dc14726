"""An endpoint that describes itself (issue 32, item 3), on a real ``diagkg serve`` over the torch (a system
written in the tests): the SPARQL 1.1 Service Description at the endpoint URL with VoID statistics, the
shipped queries as discoverable examples, read with rdflib and with SPARQLWrapper, and run through the
endpoint by SPARQLWrapper and by rdflib's SPARQLStore."""

from __future__ import annotations

import warnings

import httpx
import pytest
import rdflib
from rdflib.namespace import RDF, VOID
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, SPARQLWrapper

from diagkg.kg.queries import library, query_form
from diagkg.kg.store import KnowledgeStore

from ..support.serving import start_server, stop_server, torch_store

SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")
SCHEMA = rdflib.Namespace("https://schema.org/")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = torch_store(tmp_path_factory.mktemp("describe"))
    proc, base = start_server(path)
    yield path, base
    stop_server(proc)


def test_get_sparql_without_a_query_is_the_service_description(served):
    path, base = served
    r = httpx.get(base + "/sparql", headers={"Accept": "text/turtle"}, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle")
    g = rdflib.Graph().parse(data=r.text, format="turtle")
    endpoint = rdflib.URIRef(base + "/sparql")
    assert (endpoint, RDF.type, SD.Service) in g and (endpoint, SD.endpoint, endpoint) in g
    assert {SD.SPARQL11Query, SD.SPARQL11Update} == set(g.objects(endpoint, SD.supportedLanguage))   # a token: updates
    assert (endpoint, SD.feature, SD.UnionDefaultGraph) in g
    assert (endpoint, SD.feature, SD.BasicFederatedQuery) not in g           # no --allow-remote
    dataset = g.value(endpoint, SD.defaultDataset)
    assert (dataset, RDF.type, VOID.Dataset) in g
    store = KnowledgeStore(path, read_only=True)
    try:
        graphs = {r["graph"]: int(r["triples"]) for r in store.select("graph-summary")}
        classes = {r["class"] for r in store.select("void-classes")}
    finally:
        store.close()
    assert int(g.value(dataset, VOID.triples)) == sum(graphs.values())
    listed = {str(g.value(n, SD.name)): int(g.value(g.value(n, SD.graph), VOID.triples))
              for n in g.objects(dataset, SD.namedGraph)}
    assert listed == graphs and "https://w3id.org/diagkg/graph/system/torch" in listed
    partitions = {str(g.value(p, VOID["class"])) for p in g.objects(dataset, VOID.classPartition)}
    assert partitions == classes and "https://w3id.org/diagkg/ontology#Bulb" in partitions
    for accept, fmt in (("application/ld+json", "json-ld"), ("application/rdf+xml", "xml")):
        other = httpx.get(base + "/sparql", headers={"Accept": accept}, timeout=60)
        assert other.headers["content-type"].startswith(accept)
        with warnings.catch_warnings():      # rdflib's own JSON-LD parser builds a ConjunctiveGraph, which it deprecates
            warnings.filterwarnings("ignore", "ConjunctiveGraph is deprecated", DeprecationWarning)
            assert (endpoint, RDF.type, SD.Service) in rdflib.Graph().parse(data=other.text, format=fmt)
    void = rdflib.Graph().parse(base + "/.well-known/void")           # rdflib fetches it, negotiating itself
    assert (dataset, VOID.triples, g.value(dataset, VOID.triples)) in void
    assert httpx.get(base + "/sparql", params={"query": "ASK {}"}, timeout=60).json()["boolean"] is True


def test_head_on_the_endpoint_answers_as_get_without_a_body(served):
    _, base = served
    r = httpx.head(base + "/sparql", headers={"Accept": "text/turtle"}, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle") and r.content == b""
    assert httpx.head(base + "/sparql", params={"query": "ASK {}"}, timeout=60).status_code == 200
    assert httpx.head(base + "/sparql", params={"query": "ASK {"}, timeout=60).status_code == 400


def test_every_shipped_query_is_a_discoverable_example_that_runs(served):
    path, base = served
    sd = rdflib.Graph().parse(base + "/sparql")
    (where,) = [o for o in sd.objects(rdflib.URIRef(base + "/sparql"), rdflib.RDFS.seeAlso) if "examples" in str(o)]
    g = rdflib.Graph().parse(str(where))
    examples = set(g.subjects(RDF.type, SH.SPARQLExecutable))
    shipped = [q for q in library().files() if not q.is_template]
    assert len(examples) == len(shipped) and len(shipped) > 50
    texts = {}
    for q in shipped:
        node = rdflib.URIRef("https://w3id.org/diagkg/queries/" + q.name)
        form = query_form(q.text)
        prop = {"select": SH.select, "ask": SH.ask, "construct": SH.construct, "describe": SH.describe,
                "update": SH.update}[form]
        assert str(g.value(node, prop)) == q.text and (node, SCHEMA.target, rdflib.URIRef(base + "/sparql")) in g
        kind = SH.SPARQLUpdateExecutable if form == "update" else SH[f"SPARQL{form.capitalize()}Executable"]
        assert (node, RDF.type, kind) in g
        if form == "select" and all(p.optional for p in q.inputs):     # runs as it is, every input left open
            texts[q.name] = str(g.value(node, SH.select))
    assert "system-summary" in texts and len(texts) > 5
    store = KnowledgeStore(path, read_only=True)
    wrapper = SPARQLWrapper(base + "/sparql")
    wrapper.setReturnFormat(JSON)
    try:
        for name in ("system-summary", "scenario-index", "graph-summary", "void-properties"):
            wrapper.setQuery(texts[name])
            rows = wrapper.queryAndConvert()["results"]["bindings"]
            assert len(rows) == len(store.select(name)), name
        remote = rdflib.Graph(store=SPARQLStore(query_endpoint=base + "/sparql", returnFormat="json"))
        rows = list(remote.query(texts["system-summary"]))
        assert [str(r["key"]) for r in rows] == [r["key"] for r in store.select("system-summary")] == ["torch"]
    finally:
        store.close()
