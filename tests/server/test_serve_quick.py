"""Queries that cannot be slow are answered by ``diagkg serve`` at once, never behind the query
workers (issue 31), with the same answer a worker gives; on a real server over the torch
written in the tests, with its protections as shipped (one worker per client, time and size limits).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from ..support.serving import TORCH_NS, start_server, stop_server, torch_store

SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
QUICK_SELECT = f"SELECT ?l WHERE {{ <{TORCH_NS}bulb> <{LABEL}> ?l }} LIMIT 10"
WORKER_SELECT = f"SELECT ?l WHERE {{ <{TORCH_NS}bulb> <{LABEL}> ?l FILTER (true) }} LIMIT 10"   # the same, not quick


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return torch_store(tmp_path_factory.mktemp("serve-quick"))


@pytest.fixture(scope="module")
def server(store):
    proc, base = start_server(store, "--query-timeout", "3", "--max-result-bytes", "4000")
    yield base
    stop_server(proc)


def test_a_busy_client_gets_its_quick_queries_at_once(server):
    """Two slow queries of this client hold its one worker turn (until the time limit stops
    them); meanwhile its quick queries, by GET and by POST, are answered, and correctly."""
    done: list[tuple[str, int]] = []

    def slow() -> None:
        done.append(("slow", httpx.get(server + "/sparql", params={"query": SLOW}, timeout=60).status_code))

    threads = [threading.Thread(target=slow) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.5)                     # both sent: the first runs, the second waits for this client's turn
    with httpx.Client(timeout=60) as c:
        ask = c.get(server + "/sparql", params={"query": "ASK { ?s a <https://w3id.org/diagkg/ontology#Bulb> }"},
                    headers={"accept": "application/sparql-results+json"})
        done.append(("ask", ask.status_code))
        none = c.get(server + "/sparql", params={"query": "ASK { ?s a <urn:nothing> }"})
        done.append(("ask nothing", none.status_code))
        label = c.post(server + "/sparql", data={"query": QUICK_SELECT}, headers={"accept": "text/csv"})
        done.append(("select", label.status_code))
    for t in threads:
        t.join()
    assert done[:3] == [("ask", 200), ("ask nothing", 200), ("select", 200)]
    assert sorted(done[3:]) == [("slow", 503), ("slow", 503)]
    assert ask.json()["boolean"] is True and none.json()["boolean"] is False
    assert label.text.splitlines() == ["l", "Torch bulb"]


@pytest.mark.parametrize("accept", ["application/sparql-results+json", "application/sparql-results+xml",
                                    "text/csv", "text/tab-separated-values", "text/turtle"])
def test_a_quick_answer_is_the_workers_answer(server, accept):
    with httpx.Client(timeout=60, headers={"accept": accept}) as c:
        quick = c.get(server + "/sparql", params={"query": QUICK_SELECT})
        worker = c.get(server + "/sparql", params={"query": WORKER_SELECT})
    # (a SELECT's rows cannot be Turtle: both say so, 406 Not Acceptable)
    assert quick.status_code == worker.status_code == (406 if accept == "text/turtle" else 200)
    assert quick.headers["content-type"] == worker.headers["content-type"]
    assert quick.content == worker.content


def test_limits_and_graphs_hold_for_quick_queries(server, store):
    with httpx.Client(timeout=60) as c:
        big = c.get(server + "/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 1000"})
        assert big.status_code == 413 and "4,000 bytes" in big.text          # --max-result-bytes
        graphs = c.get(server + "/api/graphs").json()
        torch = next(g["graph"] for g in graphs if g["graph"].endswith("/system/torch"))
        inside = c.get(server + "/sparql", params={"query": f"ASK {{ <{TORCH_NS}bulb> ?p ?o }}",
                                                   "default-graph-uri": torch}).json()["boolean"]
        outside = c.get(server + "/sparql", params={"query": f"ASK {{ <{TORCH_NS}bulb> ?p ?o }}",
                                                    "default-graph-uri": "urn:no-such-graph"}).json()["boolean"]
        assert (inside, outside) == (True, False)
        # malformed, or wanting the token: the route says so, as for any query
        assert c.get(server + "/sparql", params={"query": "ASK { ?s ?p }"}).status_code == 400
        assert c.get(server + "/sparql", params={"query": "ASK { ?s SERVICE:x ?o }"}).status_code == 403
        assert c.get(server + "/sparql", params={"query": "ASK {}", "unknown": "1"}).status_code == 200


def test_a_query_that_states_its_dataset_is_answered_over_it(server, store):
    """``FROM <g>`` states the default graph (SPARQL 1.1 Query 13.2): it was ignored, every query ran over the
    union of all graphs (the torch's system graph counted the whole store's triples), by the endpoint and by
    ``diagkg query`` alike; ``FROM NAMED`` alone leaves the default graph empty."""
    from diagkg.kg.store import KnowledgeStore

    with httpx.Client(timeout=60, headers={"accept": "application/sparql-results+json"}) as c:
        torch = next(g["graph"] for g in c.get(server + "/api/graphs").json() if g["graph"].endswith("/system/torch"))

        def count(query: str) -> int:
            reply = c.get(server + "/sparql", params={"query": query})
            assert reply.status_code == 200, reply.text
            return int(reply.json()["results"]["bindings"][0]["n"]["value"])

        inside = count(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{torch}> {{ ?s ?p ?o }} }}")
        everything = count("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert 0 < inside < everything
        assert count(f"SELECT (COUNT(*) AS ?n) FROM <{torch}> WHERE {{ ?s ?p ?o }}") == inside
        assert count(f"select (count(*) as ?n) from named <{torch}> where {{ ?s ?p ?o }}") == 0
        # the word in a string, an IRI or a comment states nothing
        assert count("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o BIND ('FROM <x>' AS ?w) } # FROM <urn:x>") == everything
    read = KnowledgeStore(store, read_only=True)
    rows = list(read.query(f"SELECT (COUNT(*) AS ?n) FROM <{torch}> WHERE {{ ?s ?p ?o }}"))
    assert int(rows[0]["n"].value) == inside
