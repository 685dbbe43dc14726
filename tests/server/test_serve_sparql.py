"""``diagkg serve``'s SPARQL 1.1 endpoint: protocol, formats, limits, the token, freshness.

Every test runs on a user's system written in a test (the torch of
tests/support/torch.py) in an on-disk store of its own.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from fastapi.testclient import TestClient

from diagkg.server.app import ServerConfig, create_app

from ..support.cli import DIAGKG
from ..support.serving import LOCAL, TOKEN, TORCH_NS, start_server, stop_server, torch_store

COUNT_BULBS = ("PREFIX dk: <https://w3id.org/diagkg/ontology#> "
               "SELECT ?b ?label WHERE { ?b a dk:Bulb ; <http://www.w3.org/2000/01/rdf-schema#label> ?label }")
# a query that runs for minutes on any store: a cross product of everything, five times
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    return torch_store(tmp_path_factory.mktemp("serve-sparql"))


@pytest.fixture(scope="module")
def client(store_path):
    app = create_app(ServerConfig(store_path, token=TOKEN, query_timeout=3.0, max_result_bytes=20_000, workers=1))
    with TestClient(app, base_url=LOCAL) as c:
        yield c


def test_get_and_post_give_sparql_json(client):
    for r in (client.get("/sparql", params={"query": COUNT_BULBS}),
              client.post("/sparql", data={"query": COUNT_BULBS}),
              client.post("/sparql", content=COUNT_BULBS, headers={"content-type": "application/sparql-query"})):
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/sparql-results+json")
        rows = r.json()["results"]["bindings"]
        assert [b["label"]["value"] for b in rows] == ["Torch bulb"]


def test_result_formats_by_content_negotiation(client):
    r = client.get("/sparql", params={"query": COUNT_BULBS}, headers={"accept": "text/csv"})
    assert r.headers["content-type"].startswith("text/csv")
    assert list(csv.reader(io.StringIO(r.text)))[1] == [TORCH_NS + "bulb", "Torch bulb"]
    r = client.get("/sparql", params={"query": COUNT_BULBS}, headers={"accept": "text/tab-separated-values"})
    assert "\"Torch bulb\"" in r.text and r.headers["content-type"].startswith("text/tab-separated-values")
    r = client.get("/sparql", params={"query": COUNT_BULBS},
                   headers={"accept": "application/sparql-results+xml;q=0.9, text/csv;q=0.1"})
    assert r.headers["content-type"].startswith("application/sparql-results+xml") and "<literal>Torch bulb</literal>" in r.text
    construct = f"CONSTRUCT {{ <{TORCH_NS}bulb> ?p ?o }} WHERE {{ <{TORCH_NS}bulb> ?p ?o }}"
    r = client.get("/sparql", params={"query": construct}, headers={"accept": "application/n-triples"})
    assert r.headers["content-type"].startswith("application/n-triples")
    g = rdflib.Graph().parse(data=r.text, format="nt")
    assert (rdflib.URIRef(TORCH_NS + "bulb"), rdflib.RDFS.label, rdflib.Literal("Torch bulb")) in g
    r = client.get("/sparql", params={"query": construct})     # Turtle by default
    assert len(rdflib.Graph().parse(data=r.text, format="turtle")) == len(g)
    r = client.get("/sparql", params={"query": construct}, headers={"accept": "application/ld+json"})
    assert r.headers["content-type"].startswith("application/ld+json") and "Torch bulb" in json.dumps(r.json())
    r = client.get("/sparql", params={"query": "ASK { ?s a <https://w3id.org/diagkg/ontology#Bulb> }"})
    assert r.json()["boolean"] is True


def test_an_accept_header_nothing_fits_is_406_and_wildcards_fit(client):
    construct = f"CONSTRUCT {{ <{TORCH_NS}bulb> ?p ?o }} WHERE {{ <{TORCH_NS}bulb> ?p ?o }}"
    for query in (COUNT_BULBS, construct, "ASK {}"):         # (ASK {} is a quick query, answered before routing)
        r = client.get("/sparql", params={"query": query}, headers={"accept": "text/html"})
        assert r.status_code == 406, r.text
        assert "text/html" not in r.text and ("text/csv" in r.text or "text/turtle" in r.text)
    assert client.get("/sparql", headers={"accept": "text/html"}).status_code == 406       # the description
    assert client.get("/rdf-graphs", params={"default": ""}, headers={"accept": "image/png"}).status_code == 406
    r = client.get("/sparql", params={"query": COUNT_BULBS}, headers={"accept": "text/html, text/*;q=0.5"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    r = client.get("/sparql", params={"query": COUNT_BULBS}, headers={"accept": "text/html, application/*;q=0.5"})
    assert r.headers["content-type"].startswith("application/sparql-results+json")
    r = client.get("/sparql", params={"query": construct}, headers={"accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle")    # a browser's


def test_a_malformed_query_is_400_with_the_parsers_message(client):
    r = client.get("/sparql", params={"query": "SELECT ?x WHERE { ?x ?y }"})
    assert r.status_code == 400
    assert r.text.startswith("malformed query:") and "1:" in r.text


def test_the_result_size_limit(client):
    r = client.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"})
    assert r.status_code == 413
    assert "20,000 bytes" in r.text


def test_a_query_over_the_time_limit_is_stopped_and_the_endpoint_goes_on(client):
    t0 = time.monotonic()
    r = client.get("/sparql", params={"query": SLOW})
    assert r.status_code == 503
    assert "time limit of 3 s" in r.text and "stopped" in r.text
    assert time.monotonic() - t0 < 10
    assert client.get("/sparql", params={"query": COUNT_BULBS}).status_code == 200
    assert client.app.state.diagkg.pool.killed >= 1


def test_graph_store_protocol_reads_a_named_graph(client):
    g = "https://w3id.org/diagkg/graph/system/torch"
    r = client.get("/rdf-graphs", params={"graph": g}, headers={"accept": "text/turtle"})
    assert r.status_code == 200
    parsed = rdflib.Graph().parse(data=r.text, format="turtle")
    assert (rdflib.URIRef(TORCH_NS + "bulb"), rdflib.RDFS.label, rdflib.Literal("Torch bulb")) in parsed
    assert client.get("/rdf-graphs", params={"graph": "https://example.org/none"}).status_code == 404


def test_updates_need_the_token_and_change_nothing_without_it(client):
    update = f"INSERT DATA {{ GRAPH <urn:x:notes> {{ <{TORCH_NS}bulb> <urn:x:note> \"checked\" }} }}"
    ask = "ASK { GRAPH <urn:x:notes> { ?s ?p ?o } }"
    for headers in ({}, {"authorization": "Bearer wrong"}):
        r = client.post("/sparql", data={"update": update}, headers=headers)
        assert r.status_code == 403
        assert client.get("/sparql", params={"query": ask}).json()["boolean"] is False
    r = client.post("/sparql", content=update, headers={"content-type": "application/sparql-update",
                                                       "authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 204, r.text
    assert client.get("/sparql", params={"query": ask}).json()["boolean"] is True   # the workers see it
    bad = client.post("/sparql", data={"update": "INSERT DATA { <a> }"}, headers={"authorization": f"Bearer {TOKEN}"})
    assert bad.status_code == 400 and "malformed update" in bad.text
    r = client.post("/sparql", data={"update": "DROP GRAPH <urn:x:notes>"}, headers={"authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 204


def test_a_server_without_token_is_read_only(store_path):
    app = create_app(ServerConfig(store_path, token=None, workers=1))
    with TestClient(app, base_url=LOCAL) as c:
        r = c.post("/sparql", data={"update": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"},
                   headers={"authorization": "Bearer anything"})
        assert r.status_code == 403 and "read-only" in r.text


def test_answers_reflect_what_another_process_committed(client, store_path):
    ask = "ASK { GRAPH <urn:x:other> { ?s ?p ?o } }"
    assert client.get("/sparql", params={"query": ask}).json()["boolean"] is False
    env = dict(os.environ, DIAGKG_STORE=str(store_path))
    subprocess.run([*DIAGKG, "update",
                    "INSERT DATA { GRAPH <urn:x:other> { <urn:a> <urn:b> <urn:c> } }"],
                   env=env, check=True, capture_output=True, timeout=120)
    assert client.get("/sparql", params={"query": ask}).json()["boolean"] is True
    subprocess.run([*DIAGKG, "update", "DROP GRAPH <urn:x:other>"],
                   env=env, check=True, capture_output=True, timeout=120)
    assert client.get("/sparql", params={"query": ask}).json()["boolean"] is False


def test_the_real_server_answers_rdflibs_sparql_store(store_path):
    from rdflib.plugins.stores.sparqlstore import SPARQLStore, SPARQLUpdateStore

    proc, base = start_server(store_path)
    try:
        st = SPARQLStore(base + "/sparql", returnFormat="json")
        rows = list(st.query(COUNT_BULBS))
        assert [str(r.label) for r in rows] == ["Torch bulb"]
        g = rdflib.Graph(SPARQLStore(base + "/sparql"))
        assert (rdflib.URIRef(TORCH_NS + "bulb"), rdflib.RDFS.label, rdflib.Literal("Torch bulb")) in g
        up = SPARQLUpdateStore(base + "/sparql", base + "/sparql")
        with pytest.raises(Exception, match="403"):
            up.update("INSERT DATA { GRAPH <urn:x:rdflib> { <urn:a> <urn:b> <urn:c> } }")
        assert not list(st.query("SELECT * WHERE { GRAPH <urn:x:rdflib> { ?s ?p ?o } }"))
        SPARQLUpdateStore(base + "/sparql", base + "/sparql", auth=("diagkg", TOKEN)).update(
            "INSERT DATA { GRAPH <urn:x:rdflib> { <urn:a> <urn:b> <urn:c> } }")
        assert len(list(st.query("SELECT * WHERE { GRAPH <urn:x:rdflib> { ?s ?p ?o } }"))) == 1
        import httpx
        r = httpx.get(base + "/sparql", params={"query": "SELECT ?x WHERE {"})
        assert r.status_code == 400
    finally:
        stop_server(proc)


def test_a_federated_query_needs_the_token(client):
    federated = "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"
    r = client.get("/sparql", params={"query": federated})
    assert r.status_code == 403 and "SERVICE" in r.text
    # the word in a string, an IRI or a comment is no federated query
    plain = 'SELECT ?s WHERE { ?s ?p "SERVICE" . ?s ?p <urn:x:SERVICE> } # SERVICE'
    assert client.get("/sparql", params={"query": plain}).status_code == 200
    r = client.get("/sparql", params={"query": federated}, headers={"authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 403 and "--allow-remote 127.0.0.1" in r.text     # no host allowed by default


def test_cross_origin_requests_only_from_the_origins_named(store_path):
    # a SPARQL client hosted elsewhere (YASGUI's page) may query from a browser only when named
    allowed = "https://yasgui.example"
    with TestClient(create_app(ServerConfig(store_path, workers=1, cors=(allowed,))), base_url=LOCAL) as c:
        asked = c.options("/sparql", headers={"Origin": allowed, "Access-Control-Request-Method": "POST",
                                              "Access-Control-Request-Headers": "content-type"})
        assert asked.status_code == 200 and asked.headers["access-control-allow-origin"] == allowed
        r = c.get("/sparql", params={"query": "ASK {}"}, headers={"Origin": allowed, "Accept": "application/sparql-results+json"})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == allowed
        other = c.get("/sparql", params={"query": "ASK {}"}, headers={"Origin": "https://elsewhere.example"})
        assert "access-control-allow-origin" not in other.headers
    with TestClient(create_app(ServerConfig(store_path, workers=1)), base_url=LOCAL) as c:   # none named: no CORS
        r = c.get("/sparql", params={"query": "ASK {}"}, headers={"Origin": allowed})
        assert "access-control-allow-origin" not in r.headers


def _count(client, query: str, **params) -> int:
    reply = client.post("/sparql", data={"query": query, **params}, headers={"accept": "application/sparql-results+json"})
    assert reply.status_code == 200, reply.text
    return int(reply.json()["results"]["bindings"][0]["n"]["value"])


def test_the_requests_dataset_is_the_whole_dataset(client):
    """``default-graph-uri`` and ``named-graph-uri`` define the dataset (SPARQL 1.1 Protocol 2.1.4): one of them
    alone leaves the other part empty (the named graphs stayed every graph, the default graph the union)."""
    torch = next(g["graph"] for g in client.get("/api/graphs").json() if g["graph"].endswith("/system/torch"))
    graphs_seen = "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
    triples = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    inside = _count(client, f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{torch}> {{ ?s ?p ?o }} }}")
    assert 0 < inside < _count(client, triples)
    assert _count(client, triples, **{"default-graph-uri": torch}) == inside
    assert _count(client, graphs_seen, **{"default-graph-uri": torch}) == 0
    assert _count(client, triples, **{"named-graph-uri": torch}) == 0
    assert _count(client, graphs_seen, **{"named-graph-uri": torch}) == 1
    assert _count(client, graphs_seen, **{"default-graph-uri": torch, "named-graph-uri": torch}) == 1
    # the request's dataset, not the query's FROM
    assert _count(client, f"SELECT (COUNT(*) AS ?n) FROM NAMED <{torch}> WHERE {{ ?s ?p ?o }}",
                  **{"default-graph-uri": torch}) == inside


def test_an_update_dataset_by_parameter_and_a_default_graph_write_are_refused(client):
    """``using-graph-uri``/``using-named-graph-uri`` (SPARQL 1.1 Protocol 2.2.3) were ignored: the update ran over
    the empty default graph and answered 204. A write into the store's default graph (which dump and graphs leave
    out) is refused too. Nothing is written either way."""
    torch = next(g["graph"] for g in client.get("/api/graphs").json() if g["graph"].endswith("/system/torch"))
    auth = {"authorization": f"Bearer {TOKEN}"}
    seen = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:x:seen> { ?s ?p ?o } }"
    insert = ("INSERT { GRAPH <urn:x:seen> { ?b a <urn:x:Seen> } } "
              "WHERE { ?b a <https://w3id.org/diagkg/ontology#Bulb> }")
    for name in ("using-graph-uri", "using-named-graph-uri"):
        r = client.post("/sparql", data={"update": insert, name: torch}, headers=auth)
        assert r.status_code == 400 and name in r.text
        r = client.post(f"/sparql?{name}={torch}", content=insert,
                        headers={**auth, "content-type": "application/sparql-update"})
        assert r.status_code == 400
    assert _count(client, seen) == 0
    r = client.post("/sparql", data={"update": f"INSERT {{ GRAPH <urn:x:seen> {{ ?b a <urn:x:Seen> }} }} USING <{torch}> "
                                               "WHERE { ?b a <https://w3id.org/diagkg/ontology#Bulb> }"}, headers=auth)
    assert r.status_code == 204 and _count(client, seen) == 1          # USING in the update itself holds
    assert client.post("/sparql", data={"update": "DROP GRAPH <urn:x:seen>"}, headers=auth).status_code == 204
    everything = _count(client, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    r = client.post("/sparql", data={"update": "INSERT DATA { <urn:x:d> <urn:x:p> 'in the default graph' }"}, headers=auth)
    assert r.status_code == 400 and "default graph" in r.text
    assert _count(client, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }") == everything


def test_graph_store_protocol_reads_the_default_graph(store_path):
    """``?default`` (SPARQL 1.1 Graph Store Protocol §4.2: a standard client's way to ask for the default graph)
    was refused with 422; it is the union of the named graphs, as queries see it, with the result's limit."""
    app = create_app(ServerConfig(store_path, token=TOKEN, max_result_bytes=50_000_000, workers=1))
    with TestClient(app, base_url=LOCAL) as c:
        r = c.get("/rdf-graphs?default", headers={"accept": "application/n-triples"})
        assert r.status_code == 200, r.text
        parsed = rdflib.Graph().parse(data=r.text, format="nt")
        # the torch's own triples and the ontology's, as one graph
        assert (rdflib.URIRef(TORCH_NS + "bulb"), rdflib.RDFS.label, rdflib.Literal("Torch bulb")) in parsed
        assert (rdflib.URIRef("https://w3id.org/diagkg/ontology#Bulb"), rdflib.RDF.type, rdflib.OWL.Class) in parsed
        asked = c.get("/sparql", params={"query": "SELECT (COUNT(*) AS ?n) WHERE { SELECT DISTINCT ?s ?p ?o "
                                                  "WHERE { ?s ?p ?o } }"}, headers={"accept": "application/json"})
        assert len(parsed) == int(asked.json()["results"]["bindings"][0]["n"]["value"])
        quads = c.get("/rdf-graphs?default", headers={"accept": "application/n-quads"})
        assert quads.status_code == 200
        read = list(ox.parse(quads.content, format=ox.RdfFormat.N_QUADS))
        assert {q.graph_name for q in read} == {ox.DefaultGraph()} and len({q.triple for q in read}) == len(parsed)
        for params in ("", f"?default&graph={TORCH_NS}torch"):
            assert c.get("/rdf-graphs" + params).status_code == 400
    small = create_app(ServerConfig(store_path, token=TOKEN, max_result_bytes=20_000, workers=1))
    with TestClient(small, base_url=LOCAL) as c:
        assert c.get("/rdf-graphs?default").status_code == 413
