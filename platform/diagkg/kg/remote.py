"""A remote store: any SPARQL 1.1 endpoint (query, update, Graph Store Protocol), e.g. ``oxigraph serve``.

``diagkg --store http://host:port …`` (or :func:`connect` in Python) gives a :class:`RemoteStore`:
the same interface as the embedded :class:`~diagkg.kg.store.KnowledgeStore` (it is one), so every
command and every shipped query works unchanged, and many machines can share one store.

How the embedded store's features map onto the protocol:

* **Bound values.** pyoxigraph binds a query's inputs by substitution; over HTTP the bound terms
  are written, escaped by pyoxigraph's own term serialisation, into a ``VALUES`` block at the start
  of the query's outermost ``WHERE`` group (:func:`bind_values`), which binds them for the whole
  pattern as a substitution does. Updates are templates whose filters already escape values.
* **Union default graph.** The embedded store runs queries with the default graph as the union
  of all graphs; the endpoint is asked for the same with Oxigraph's ``union-default-graph``
  parameter (or start the server with ``--union-default-graph``).
* **Atomic writes.** Every write is *one* SPARQL Update request (``DROP SILENT GRAPH`` … ``INSERT
  DATA`` …), which Oxigraph applies as one transaction: all of it or nothing. The server
  serialises writers itself, so :meth:`RemoteStore.holding` takes no lock; a ``check`` given to
  :meth:`~diagkg.kg.store.KnowledgeStore.write_graphs` reads the store just before the update,
  not under a lock (another machine may write in between).
* **Errors.** A server that cannot be reached, or answers 5xx, is a
  :class:`~diagkg.errors.StoreError` (exit 3); a 400 to a query or update is a
  :class:`~diagkg.errors.QueryError` with the server's message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import httpx
import pyoxigraph as ox

from ..errors import QueryError, StoreError
from .queries import _SKIP, Substitution
from .store import DEFAULT_WAIT, KnowledgeStore

SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"
N_QUADS = "application/n-quads"
RESULTS_JSON = "application/sparql-results+json"


def is_url(location: str | Path | None) -> bool:
    """Whether a ``--store`` value names a SPARQL endpoint rather than a folder."""
    return isinstance(location, str) and location.lower().startswith(("http://", "https://"))


def connect(location: str | Path | None = None, *, read_only: bool = False, in_memory: bool = False,
            wait: float = DEFAULT_WAIT, on_wait: Callable[[str], None] | None = None) -> KnowledgeStore:
    """The store at ``location``: a :class:`RemoteStore` for an ``http(s)://`` URL, else the
    embedded store (a folder, or the default one; in memory when asked)."""
    if in_memory:
        return KnowledgeStore.memory()
    if is_url(location):
        assert isinstance(location, str)
        return RemoteStore(location, read_only=read_only)
    return KnowledgeStore(location, read_only=read_only, wait=wait, on_wait=on_wait)


# -- bound values ---------------------------------------------------------------------------------

_TOKENS = re.compile(_SKIP + r"|(?P<word>\b(?:SELECT|ASK|CONSTRUCT|DESCRIBE|WHERE)\b)|(?P<open>\{)|(?P<close>\})",
                     re.IGNORECASE)


def _where_brace(text: str) -> int:
    """The offset just after the ``{`` that opens the query's outermost WHERE group."""
    form: str | None = None
    depth = 0
    for m in _TOKENS.finditer(text):
        word = m.group("word")
        if word is not None:
            word = word.upper()
            if form is None and word != "WHERE":
                form = word
            elif depth == 0 and word == "WHERE" and form is not None:
                form = "WHERE"
        elif m.group("open") is not None:
            if depth == 0 and form in ("SELECT", "ASK", "DESCRIBE", "WHERE"):
                return m.end()
            depth += 1
        elif m.group("close") is not None:
            depth -= 1
    raise QueryError("cannot bind values: no WHERE group found in the query")


def term_text(term: Substitution) -> str:
    """One bound value as SPARQL text (pyoxigraph's own escaping)."""
    if isinstance(term, ox.BlankNode):
        raise QueryError("a blank node cannot be bound in a query sent to a remote store")
    return str(term)


def bind_values(text: str, substitutions: Mapping[ox.Variable, Substitution]) -> str:
    """The query with its bound variables given as a ``VALUES`` block at the start of its
    outermost WHERE group (what pyoxigraph's substitutions do, in standard SPARQL)."""
    if not substitutions:
        return text
    names = " ".join(str(v) for v in substitutions)
    values = " ".join(term_text(t) for t in substitutions.values())
    at = _where_brace(text)
    return f"{text[:at]} VALUES ({names}) {{ ({values}) }} {text[at:]}"


# -- the endpoint, shaped like the pyoxigraph store the rest of diagkg reads -----------------------

def _graph_text(graph: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> str:
    if isinstance(graph, ox.BlankNode):
        raise StoreError("a graph named by a blank node cannot be addressed on a remote store")
    return str(graph)


class Endpoint:
    """A SPARQL 1.1 endpoint with the methods of :class:`pyoxigraph.Store` that diagkg uses
    (:class:`~diagkg.kg.store.RawStore`): results are real pyoxigraph objects."""

    def __init__(self, url: str, client: httpx.Client):
        self.url = url.rstrip("/")
        self._client = client

    # -- HTTP ----------------------------------------------------------------
    def _send(self, method: str, path: str, *, what: str, **kw: Any) -> httpx.Response:
        try:
            response = self._client.request(method, self.url + path, **kw)
        except httpx.TimeoutException:
            raise StoreError(f"the store at {self.url} did not answer in time ({what})") from None
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise StoreError(f"cannot reach the store at {self.url} ({what}): {reason}; is the SPARQL "
                             "server running (e.g. oxigraph serve --location DIR --bind HOST:PORT)?") from None
        if response.status_code >= 400:
            detail = " ".join(response.text.split())[:400] or response.reason_phrase
            if response.status_code == 400:
                raise QueryError(f"the store at {self.url} refused the {what}: {detail}")
            raise StoreError(f"the store at {self.url} answered {response.status_code} to the {what}: {detail}")
        return response

    def ping(self) -> None:
        self.query("ASK { }")

    # -- reading ---------------------------------------------------------------
    def query(self, query: str, *, use_default_graph_as_union: bool = False,
              substitutions: Mapping[ox.Variable, Substitution] | None = None,
              **_: Any) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        text = bind_values(query, substitutions or {})
        params = {"union-default-graph": ""} if use_default_graph_as_union else {}
        response = self._send("POST", "/query", what="query", content=text.encode("utf-8"), params=params,
                              headers={"Content-Type": SPARQL_QUERY + "; charset=utf-8",
                                       "Accept": f"{RESULTS_JSON}, {N_QUADS};q=0.9, application/n-triples;q=0.8"})
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        if kind in (N_QUADS, "application/n-triples"):
            # CONSTRUCT / DESCRIBE: the triples, handed back as pyoxigraph's own result object
            scratch = ox.Store()
            scratch.extend(ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph())
                           for t in ox.parse(response.content, format=ox.RdfFormat.N_TRIPLES))
            return scratch.query("CONSTRUCT WHERE { ?s ?p ?o }")
        try:
            return ox.parse_query_results(response.content, format=ox.QueryResultsFormat.JSON)
        except SyntaxError as exc:
            raise StoreError(f"the store at {self.url} sent results that cannot be read: {exc}") from None

    def quads_for_pattern(self, subject: ox.NamedNode | ox.BlankNode | ox.Triple | None,
                          predicate: ox.NamedNode | None,
                          object: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None,
                          graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph | None = None) -> Iterator[ox.Quad]:
        if subject is None and predicate is None and object is None and isinstance(graph_name, ox.NamedNode):
            # a whole graph: the Graph Store Protocol, one GET
            response = self._send("GET", "/store", what="graph read", params={"graph": graph_name.value},
                                  headers={"Accept": "application/n-triples"}, follow_redirects=True) \
                if self.contains_named_graph(graph_name) else None
            if response is None:
                return iter(())
            return (ox.Quad(t.subject, t.predicate, t.object, graph_name)
                    for t in ox.parse(response.content, format=ox.RdfFormat.N_TRIPLES))
        bound: dict[ox.Variable, Substitution] = {}
        for name, term in (("s", subject), ("p", predicate), ("o", object)):
            if term is not None:
                bound[ox.Variable(name)] = term
        patterns = []
        if graph_name is None or isinstance(graph_name, ox.DefaultGraph):
            patterns.append("{ ?s ?p ?o BIND(false AS ?named) }")
        if graph_name is None or not isinstance(graph_name, ox.DefaultGraph):
            if graph_name is not None:
                bound[ox.Variable("g")] = graph_name
            patterns.append("{ GRAPH ?g { ?s ?p ?o } }")
        result = self.query("SELECT ?s ?p ?o ?g WHERE { " + " UNION ".join(patterns) + " }", substitutions=bound)
        assert isinstance(result, ox.QuerySolutions)
        rows = list(result)
        out: list[ox.Quad] = []
        for row in rows:
            s = subject if subject is not None else row["s"]
            p = predicate if predicate is not None else row["p"]
            o = object if object is not None else row["o"]
            g = row["g"] if row["g"] is not None else (graph_name if graph_name is not None else ox.DefaultGraph())
            out.append(ox.Quad(s, p, o, g))
        return iter(out)

    def named_graphs(self) -> Iterator[ox.NamedNode | ox.BlankNode]:
        result = self.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")
        assert isinstance(result, ox.QuerySolutions)
        return iter([row["g"] for row in result])

    def contains_named_graph(self, graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> bool:
        if isinstance(graph_name, ox.DefaultGraph):
            return True
        result = self.query(f"ASK {{ GRAPH {_graph_text(graph_name)} {{ }} }}")
        return bool(result)

    def __len__(self) -> int:
        result = self.query("SELECT (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }")
        assert isinstance(result, ox.QuerySolutions)
        return int(next(iter(result))["n"].value)

    # -- writing ---------------------------------------------------------------
    def update(self, update: str, **_: Any) -> None:
        self._send("POST", "/update", what="update", content=update.encode("utf-8"),
                   headers={"Content-Type": SPARQL_UPDATE + "; charset=utf-8"})

    def extend(self, quads: Iterable[ox.Quad]) -> None:
        """Add quads in one update (one transaction)."""
        by_graph: dict[str, list[str]] = {}
        for q in quads:
            by_graph.setdefault("" if isinstance(q.graph_name, ox.DefaultGraph) else _graph_text(q.graph_name),
                                []).append(f"{q.triple} .")
        if not by_graph:
            return
        blocks = [("\n".join(lines) if not g else f"GRAPH {g} {{\n" + "\n".join(lines) + "\n}")
                  for g, lines in by_graph.items()]
        self.update("INSERT DATA {\n" + "\n".join(blocks) + "\n}")

    def add(self, quad: ox.Quad) -> None:
        self.extend([quad])

    def remove_graph(self, graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> None:
        self.update("CLEAR DEFAULT" if isinstance(graph_name, ox.DefaultGraph)
                    else f"DROP SILENT GRAPH {_graph_text(graph_name)}")

    def clear_graph(self, graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> None:
        self.update("CLEAR DEFAULT" if isinstance(graph_name, ox.DefaultGraph)
                    else f"CLEAR SILENT GRAPH {_graph_text(graph_name)}")

    def flush(self) -> None:
        """Nothing to do: the server made each update durable before it answered."""


class RemoteStore(KnowledgeStore):
    """The diagkg store kept by a SPARQL 1.1 server (see the module's notes)."""

    def __init__(self, url: str, *, read_only: bool = False, timeout: float = 120.0):
        # the embedded store's state, none of it used for files
        self.read_only = read_only
        self.wait = 0.0
        self.on_wait = None
        self._reader = None
        self._held = None
        self.generation = 0
        self._closed = False
        self.path = None
        self.url = url.rstrip("/")
        self._client = httpx.Client(timeout=timeout)
        self._endpoint = Endpoint(self.url, self._client)
        try:
            self._endpoint.ping()
        except BaseException:
            self._client.close()
            raise

    @property
    def in_memory(self) -> bool:
        return False

    @property
    def location(self) -> str:
        return self.url

    @property
    def raw(self) -> Endpoint:
        if self._closed:
            raise StoreError("the store is closed")
        return self._endpoint

    def close(self) -> None:
        if not self._closed:
            self._client.close()
        self._closed = True

    def refresh(self) -> None:
        """Nothing to renew: every read asks the server."""

    @contextmanager
    def writing(self) -> Iterator[Endpoint]:
        if self.read_only:
            raise StoreError(f"the store at {self.url} is open read-only")
        yield self.raw

    @contextmanager
    def holding(self) -> Iterator[KnowledgeStore]:
        yield self

    def renew_writer(self) -> None:
        """Nothing to renew."""

    def dump(self, names: Sequence[ox.NamedNode] = ()) -> bytes:
        """As the embedded store's; every named graph comes in one Graph Store Protocol request."""
        if names:
            return super().dump(names)
        response = self._endpoint._send("GET", "/store", what="dump", headers={"Accept": N_QUADS})
        quads = [q for q in ox.parse(response.content, format=ox.RdfFormat.N_QUADS)
                 if not isinstance(q.graph_name, ox.DefaultGraph)]
        quads.sort(key=lambda q: q.graph_name.value)
        return ox.serialize(quads, format=ox.RdfFormat.N_QUADS) or b""

    def __repr__(self) -> str:
        return f"RemoteStore({self.url!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a worker process or a Dask worker), a remote store is its URL: the worker
        connects to the same server."""
        return (_reconnect, (self.url, self.read_only))


def _reconnect(url: str, read_only: bool) -> RemoteStore:
    return RemoteStore(url, read_only=read_only)
