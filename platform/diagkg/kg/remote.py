"""A remote store on an Oxigraph server (``oxigraph serve``), through SPARQL query, update and the Graph Store Protocol.

Not any SPARQL 1.1 endpoint: the URL given is the server's root, to which Oxigraph's own routes are
appended (``/query``, ``/update``, ``/store``), and the union default graph is asked for with Oxigraph's
``union-default-graph`` parameter; another server works only if it offers the same (``diagkg serve``,
whose endpoint is ``/sparql``, does not: it answers 404).

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

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import pyoxigraph as ox

from ..errors import QueryError, StoreError
from .queries import QueryFile, Substitution, bind_values, library
from .store import DEFAULT_WAIT, ENV_VAR, KnowledgeStore

if TYPE_CHECKING:  # pragma: no cover
    import httpx  # imported where a remote store is opened: every command goes through connect()

SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"
N_QUADS = "application/n-quads"
RESULTS_JSON = "application/sparql-results+json"
T = TypeVar("T")


def is_url(location: str | Path | None) -> bool:
    """Whether a ``--store`` value names a SPARQL endpoint rather than a folder."""
    return isinstance(location, str) and location.lower().startswith(("http://", "https://"))


def connect(location: str | Path | None = None, *, read_only: bool = False, in_memory: bool = False,
            wait: float = DEFAULT_WAIT, on_wait: Callable[[str], None] | None = None) -> KnowledgeStore:
    """The store at ``location``: a :class:`RemoteStore` for an ``http(s)://`` URL, else the
    embedded store (a folder, or the default one; in memory when asked)."""
    if in_memory:
        return KnowledgeStore.memory()
    if location is None:          # $DIAGKG_STORE names the default store: a folder, or a server's URL
        location = os.environ.get(ENV_VAR) or None
    if is_url(location):
        assert isinstance(location, str)
        return RemoteStore(location, read_only=read_only)
    return KnowledgeStore(location, read_only=read_only, wait=wait, on_wait=on_wait)


# -- the endpoint, shaped like the pyoxigraph store the rest of diagkg reads -----------------------

def _named(graph: ox.NamedNode | ox.BlankNode) -> ox.NamedNode:
    if isinstance(graph, ox.BlankNode):
        raise StoreError("a graph named by a blank node cannot be addressed on a remote store")
    return graph


class Endpoint:
    """A SPARQL 1.1 endpoint with the methods of :class:`pyoxigraph.Store` that diagkg uses
    (:class:`~diagkg.kg.rawstore.RawStore`): results are real pyoxigraph objects."""

    def __init__(self, url: str, client: httpx.Client):
        import httpx

        self.url = url.rstrip("/")
        self._client = client
        self._httpx = httpx

    # -- HTTP ----------------------------------------------------------------
    def _send(self, method: str, path: str, *, what: str, **kw: Any) -> httpx.Response:
        try:
            response = self._client.request(method, self.url + path, **kw)
        except self._httpx.TimeoutException:
            raise StoreError(f"the store at {self.url} did not answer in time ({what})") from None
        except self._httpx.HTTPError as exc:
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
        self.query(library().get("store-size").text)

    def _run(self, name: str, bindings: Mapping[str, Any] | None = None,
             **template: Any) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """One of the store-* query files (bound values and template values as everywhere)."""
        q: QueryFile = library().get(name)
        text = q.render(**template) if q.is_template else q.text
        return self.query(text, substitutions=q.substitutions(bindings) if bindings else None)

    def _solutions(self, name: str, bindings: Mapping[str, Any] | None = None, **template: Any) -> list[ox.QuerySolution]:
        result = self._run(name, bindings, **template)
        assert isinstance(result, ox.QuerySolutions)
        return list(result)

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
                           for t in self._read(response, "query", lambda body: list(
                               ox.parse(body, format=ox.RdfFormat.N_TRIPLES))))
            return scratch.query(library().get("store-triples").text)
        # read whole here (pyoxigraph parses lazily: a failure would surface in whoever iterates), then handed back
        self._read(response, "query", _every_row)
        return ox.parse_query_results(response.content, format=ox.QueryResultsFormat.JSON)

    def _read(self, response: httpx.Response, what: str, parse: Callable[[bytes], T]) -> T:
        """``parse`` of a 200 response's body, whole. Oxigraph streams what it answers: when evaluating fails
        after the first bytes went out (a ``SERVICE`` call that fails, a graph too large to serialise), it
        writes its error message where the rest should be, and the body no longer parses. That is the
        query's failure, as the embedded store raises it (exit 2); a body that fails otherwise, the store's."""
        body = response.content
        try:
            return parse(body)
        except SyntaxError as exc:
            said = _said_from(body, exc)
            if what == "query" and said:
                raise QueryError(f"the store at {self.url} stopped the query while answering it: {said}") from None
            raise StoreError(f"the store at {self.url} sent {what} results that cannot be read: {exc}") from None

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
            return iter(self._read(response, "graph read", lambda body: [
                ox.Quad(t.subject, t.predicate, t.object, graph_name)
                for t in ox.parse(body, format=ox.RdfFormat.N_TRIPLES)]))
        default = graph_name is None or isinstance(graph_name, ox.DefaultGraph)
        named = not isinstance(graph_name, ox.DefaultGraph)
        rows = self._solutions("store-quads", subject=subject, predicate=predicate, object=object,
                               graph=None if graph_name is None or isinstance(graph_name, ox.DefaultGraph)
                               else _named(graph_name),
                               default=default, named=named)
        out: list[ox.Quad] = []
        for row in rows:
            g = row["g"] if row["g"] is not None else ox.DefaultGraph()
            out.append(ox.Quad(row["s"], row["p"], row["o"], g))
        return iter(out)

    def named_graphs(self) -> Iterator[ox.NamedNode | ox.BlankNode]:
        return iter([row["graph"] for row in self._solutions("store-graph-names")])

    def contains_named_graph(self, graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> bool:
        if isinstance(graph_name, ox.DefaultGraph):
            return True
        return bool(self._run("store-has-graph", {"graph": _named(graph_name)}))

    def __len__(self) -> int:
        return int(self._solutions("store-size")[0]["quads"].value)

    # -- writing ---------------------------------------------------------------
    def update(self, update: str, **_: Any) -> None:
        self._send("POST", "/update", what="update", content=update.encode("utf-8"),
                   headers={"Content-Type": SPARQL_UPDATE + "; charset=utf-8"})

    def _write(self, name: str, **values: Any) -> None:
        self.update(library().get(name).render(**values))

    def extend(self, quads: Iterable[ox.Quad]) -> None:
        """Add quads in one update (one transaction)."""
        by_graph: dict[ox.NamedNode | None, list[ox.Triple]] = {}
        for q in quads:
            name = None if isinstance(q.graph_name, ox.DefaultGraph) else _named(q.graph_name)
            by_graph.setdefault(name, []).append(q.triple)
        if by_graph:
            self._write("store-add-quads", graphs=[{"name": g, "triples": t} for g, t in by_graph.items()])

    def add(self, quad: ox.Quad) -> None:
        self.extend([quad])

    def remove_graph(self, graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> None:
        self._write("store-drop-graph", graph=None if isinstance(graph_name, ox.DefaultGraph) else _named(graph_name),
                    drop=True)

    def clear_graph(self, graph_name: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> None:
        self._write("store-drop-graph", graph=None if isinstance(graph_name, ox.DefaultGraph) else _named(graph_name),
                    drop=False)

    def flush(self) -> None:
        """Nothing to do: the server made each update durable before it answered."""


def _every_row(body: bytes) -> None:
    """Read a JSON result through (an ASK's answer is read at once)."""
    result = ox.parse_query_results(body, format=ox.QueryResultsFormat.JSON)
    if isinstance(result, ox.QuerySolutions):
        for _ in result:
            pass


def _said_from(body: bytes, exc: SyntaxError) -> str:
    """What a server wrote from where its answer stopped parsing (``exc``'s line and column), on one line,
    at most 400 characters: the error message Oxigraph appends to a result it could not finish."""
    lines = body.decode("utf-8", errors="replace").split("\n")
    line, column = exc.lineno or 0, exc.offset or 0
    if not 1 <= line <= len(lines):
        return ""
    rest = "\n".join([lines[line - 1][max(column - 1, 0):], *lines[line:]])
    return " ".join(rest.split())[:400]


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
        import httpx

        from .tls import verifying_context

        self._client = httpx.Client(timeout=timeout, verify=verifying_context(httpx))
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
    def writing(self, wait: float | None = None) -> Iterator[Endpoint]:
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
        quads = [q for q in self._endpoint._read(response, "dump", lambda body: list(
            ox.parse(body, format=ox.RdfFormat.N_QUADS))) if not isinstance(q.graph_name, ox.DefaultGraph)]
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
