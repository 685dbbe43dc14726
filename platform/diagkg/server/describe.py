"""An endpoint that describes itself: SPARQL 1.1 Service Description, VoID, and the shipped queries as examples.

* ``GET /sparql`` without a query answers the **Service Description**
  (W3C SPARQL 1.1 Service Description): an ``sd:Service`` with its endpoint,
  languages (Query; Update when the server has a token), result formats,
  features (the union default graph; basic federated query when ``--allow-remote``
  names hosts) and its default dataset, which is also a ``void:Dataset`` with
  **VoID** statistics: triples, named graphs with their triples, class and
  property partitions (``queries/graph-summary.rq``, ``queries/void-classes.rq``,
  ``queries/void-properties.rq``, run in the query workers under the time limit;
  kept until the store changes). ``/.well-known/void`` answers the same.
* ``/.well-known/sparql-examples`` answers every shipped query (``queries/*.rq``
  and ``*.ru``; templates ``*.j2`` need values rendered in and are not runnable
  text) as an ``sh:SPARQLExecutable`` (and ``sh:SPARQLSelectExecutable``, ``…Ask…``,
  ``…Construct…``, ``…Describe…`` or ``sh:SPARQLUpdateExecutable``) with its
  text (``sh:select``, ``sh:ask``, …), its summary, its inputs and
  ``schema:target`` the endpoint, as SPARQL example collections do.

Each answers Turtle, or N-Triples, JSON-LD or RDF/XML as the ``Accept`` header asks.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import rdflib
from fastapi import HTTPException, Request
from fastapi.responses import Response
from rdflib.namespace import DCTERMS, RDF, RDFS, VOID, XSD

from .. import __version__
from ..kg.queries import library, query_form
from .sparql_pool import NotAcceptable, PoolBusy, QueryTimeout, choose
from .sparql_pool import Request as WorkRequest
from .state import client_of, state_of

if TYPE_CHECKING:  # pragma: no cover
    from .state import ServerState

SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
FORMATS = rdflib.Namespace("http://www.w3.org/ns/formats/")
SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")
SCHEMA = rdflib.Namespace("https://schema.org/")
ENTAILMENT_SIMPLE = rdflib.URIRef("http://www.w3.org/ns/entailment/Simple")
EXAMPLE_BASE = "https://w3id.org/diagkg/queries/"
DK_VOCABULARY = rdflib.URIRef("https://w3id.org/diagkg/ontology#")
VOID_QUERIES = ("graph-summary", "void-classes", "void-properties")
MAX_LISTED_GRAPHS = 10_000        # a store of many trajectories: the named graphs listed (all are counted)

SERIALISATIONS = {"text/turtle": "turtle", "application/n-triples": "nt", "text/plain": "nt",
                  "application/ld+json": "json-ld", "application/rdf+xml": "xml"}
RESULT_FORMATS = ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                  "Turtle", "N-Triples", "N-Quads", "TriG", "JSON-LD", "RDF_XML")
EXECUTABLES = {"select": ("SPARQLSelectExecutable", "select"), "ask": ("SPARQLAskExecutable", "ask"),
               "construct": ("SPARQLConstructExecutable", "construct"),
               "describe": ("SPARQLDescribeExecutable", "describe"), "update": ("SPARQLUpdateExecutable", "update")}

def negotiate(accept: tuple[str, ...]) -> tuple[str, str]:
    """The media type and rdflib format for an ``Accept`` list (best first); Turtle by default, 406 when the
    client takes none of them."""
    try:
        media = choose(accept, SERIALISATIONS, "text/turtle")
    except NotAcceptable as exc:
        raise HTTPException(406, str(exc)) from exc
    return media, SERIALISATIONS[media]


def answer(graph: rdflib.Graph, accept: tuple[str, ...]) -> Response:
    media, fmt = negotiate(accept)
    return Response(graph.serialize(format=fmt), media_type=media)


# ---------------------------------------------------------------------------
# statistics (VoID)
# ---------------------------------------------------------------------------

_CACHE: dict[int, tuple[Any, dict[str, list[dict[str, Any]]]]] = {}
_CACHE_LOCK = threading.Lock()


async def statistics(request: Request) -> dict[str, list[dict[str, Any]]] | None:
    """The VoID queries' rows (``None`` when one of them ran past the time limit), kept until the store changes."""
    from .sparql_pool import fingerprint

    state: ServerState = state_of(request)
    now = fingerprint(str(state.config.store_path))
    with _CACHE_LOCK:
        kept = _CACHE.get(id(state))
        if kept is not None and kept[0] == now:
            return kept[1]
    rows: dict[str, list[dict[str, Any]]] = {}
    lib = library()
    for name in VOID_QUERIES:
        work = WorkRequest("query", lib.get(name).text, ("application/sparql-results+json",),
                           state.config.max_result_bytes)
        try:
            reply = await state.scheduler.run(client_of(request), work)
        except (QueryTimeout, PoolBusy):
            return None
        if reply.status != "ok":
            return None
        data = json.loads(reply.body)
        rows[name] = [{k: v["value"] for k, v in b.items()} for b in data["results"]["bindings"]]
    with _CACHE_LOCK:
        _CACHE[id(state)] = (now, rows)
    return rows


def endpoint_of(request: Request) -> str:
    return str(request.url.replace(query="", fragment="")).split("/.well-known/")[0].rstrip("/").removesuffix(
        "/sparql") + "/sparql"


def service_description(request: Request, stats: dict[str, list[dict[str, Any]]] | None) -> rdflib.Graph:
    """The Service Description of the endpoint, its default dataset described with VoID."""
    config = state_of(request).config
    endpoint = rdflib.URIRef(endpoint_of(request))
    base = str(endpoint).removesuffix("/sparql")
    g = rdflib.Graph()
    for prefix, ns in (("sd", SD), ("void", VOID), ("formats", FORMATS), ("dcterms", DCTERMS)):
        g.bind(prefix, ns)
    g.add((endpoint, RDF.type, SD.Service))
    g.add((endpoint, SD.endpoint, endpoint))
    g.add((endpoint, SD.supportedLanguage, SD.SPARQL11Query))
    if config.token:
        g.add((endpoint, SD.supportedLanguage, SD.SPARQL11Update))
    for fmt in RESULT_FORMATS:
        g.add((endpoint, SD.resultFormat, FORMATS[fmt]))
    g.add((endpoint, SD.feature, SD.UnionDefaultGraph))
    if config.allow_remote:
        g.add((endpoint, SD.feature, SD.BasicFederatedQuery))
    g.add((endpoint, SD.defaultEntailmentRegime, ENTAILMENT_SIMPLE))
    g.add((endpoint, RDFS.label, rdflib.Literal(f"diagkg {__version__} SPARQL endpoint")))
    g.add((endpoint, RDFS.seeAlso, rdflib.URIRef(base + "/.well-known/sparql-examples")))
    g.add((endpoint, RDFS.seeAlso, rdflib.URIRef(base + "/.well-known/void")))
    dataset = rdflib.URIRef(str(endpoint) + "#dataset")
    default = rdflib.URIRef(str(endpoint) + "#default-graph")
    g.add((endpoint, SD.defaultDataset, dataset))
    for t in (SD.Dataset, VOID.Dataset):
        g.add((dataset, RDF.type, t))
    g.add((dataset, DCTERMS.title, rdflib.Literal("diagkg knowledge store")))
    g.add((dataset, VOID.sparqlEndpoint, endpoint))
    g.add((dataset, VOID.vocabulary, DK_VOCABULARY))
    g.add((dataset, SD.defaultGraph, default))
    for t in (SD.Graph, VOID.Dataset):
        g.add((default, RDF.type, t))
    g.add((default, RDFS.comment, rdflib.Literal("the union of all named graphs")))
    if stats is None:
        g.add((dataset, RDFS.comment, rdflib.Literal("statistics left out: counting ran past the query time limit")))
        return g

    def integer(value: Any) -> rdflib.Literal:
        return rdflib.Literal(int(value), datatype=XSD.integer)

    graphs = stats["graph-summary"]
    total = sum(int(r["triples"]) for r in graphs)
    for node in (dataset, default):
        g.add((node, VOID.triples, integer(total)))
    g.add((dataset, VOID.classes, integer(len(stats["void-classes"]))))
    g.add((dataset, VOID.properties, integer(len(stats["void-properties"]))))
    for i, r in enumerate(graphs[:MAX_LISTED_GRAPHS]):
        named, inner = rdflib.URIRef(f"{endpoint}#graph-{i}"), rdflib.BNode()
        g.add((dataset, SD.namedGraph, named))
        g.add((named, RDF.type, SD.NamedGraph))
        g.add((named, SD.name, rdflib.URIRef(r["graph"])))
        g.add((named, SD.graph, inner))
        for t in (SD.Graph, VOID.Dataset):
            g.add((inner, RDF.type, t))
        g.add((inner, VOID.triples, integer(r["triples"])))
        g.add((dataset, VOID.subset, inner))
    if len(graphs) > MAX_LISTED_GRAPHS:
        g.add((dataset, RDFS.comment, rdflib.Literal(f"{len(graphs)} named graphs; the first {MAX_LISTED_GRAPHS} "
                                                     "are listed, all are counted in void:triples")))
    for r in stats["void-classes"]:
        part = rdflib.BNode()
        g.add((dataset, VOID.classPartition, part))
        g.add((part, VOID["class"], rdflib.URIRef(r["class"])))
        g.add((part, VOID.entities, integer(r["entities"])))
    for r in stats["void-properties"]:
        part = rdflib.BNode()
        g.add((dataset, VOID.propertyPartition, part))
        g.add((part, VOID.property, rdflib.URIRef(r["property"])))
        g.add((part, VOID.triples, integer(r["triples"])))
    return g


def examples(endpoint: str) -> rdflib.Graph:
    """Every shipped query file (not the templates) as an ``sh:SPARQLExecutable`` aimed at ``endpoint``."""
    g = rdflib.Graph()
    for prefix, ns in (("sh", SH), ("schema", SCHEMA), ("dcterms", DCTERMS)):
        g.bind(prefix, ns)
    target = rdflib.URIRef(endpoint)
    for q in library().files():
        if q.is_template:
            continue
        kind, prop = EXECUTABLES[query_form(q.text)]
        node = rdflib.URIRef(EXAMPLE_BASE + q.name)
        g.add((node, RDF.type, SH.SPARQLExecutable))
        g.add((node, RDF.type, SH[kind]))
        g.add((node, RDFS.label, rdflib.Literal(q.name)))
        g.add((node, RDFS.comment, rdflib.Literal(q.summary, lang="en")))
        g.add((node, SH[prop], rdflib.Literal(q.text)))
        g.add((node, SCHEMA.target, target))
        g.add((node, DCTERMS.source, rdflib.Literal(f"queries/{q.source}")))
        for p in q.inputs:
            g.add((node, SCHEMA.keywords, rdflib.Literal(f"input ?{p.name} ({p.kind}"
                                                          f"{', optional' if p.optional else ''}): {p.doc}".strip())))
    return g


async def description(request: Request, accept: tuple[str, ...]) -> Response:
    """The Service Description with the VoID statistics (``GET /sparql`` without a query, ``/.well-known/void``)."""
    negotiate(accept)          # a 406 before the statistics are worked out
    return answer(service_description(request, await statistics(request)), accept)


def examples_response(request: Request, accept: tuple[str, ...]) -> Response:
    """``/.well-known/sparql-examples``."""
    return answer(examples(endpoint_of(request)), accept)
