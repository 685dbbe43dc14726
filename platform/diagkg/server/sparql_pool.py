"""SPARQL queries run in worker processes, so that a query over the time limit can be stopped.

pyoxigraph cannot cancel a query in the process that runs it. The server keeps
a small pool of worker processes; each opens the on-disk store read-only and
reopens it whenever the store's files change (a read-only handle is a snapshot:
reopening it shows what other processes have committed). A query that runs
past the time limit gets its worker killed and replaced; a result larger than
the size limit is cut off with an error. Workers serialise the results
themselves (SPARQL JSON/XML/CSV/TSV, or an RDF format for CONSTRUCT/DESCRIBE
and graphs), chosen from the client's ``Accept`` list.

This module imports nothing from diagkg but the store's turns (:mod:`diagkg.kg.turns`, which imports
only pyoxigraph and diagkg's errors), so that a worker starts quickly.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import queue
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from ..errors import StoreLockedError
from ..kg.sparql_scan import names_dataset
from ..kg.turns import open_read_only

RESULT_TYPES: dict[str, ox.QueryResultsFormat] = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
RDF_TYPES: dict[str, ox.RdfFormat] = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES,
    "application/n-quads": ox.RdfFormat.N_QUADS,
    "application/trig": ox.RdfFormat.TRIG,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
}
DEFAULT_RESULTS = "application/sparql-results+json"
DEFAULT_RDF = "text/turtle"


@dataclass(frozen=True)
class Request:
    """One piece of work for a worker: a query, or a named graph to read."""

    kind: str                              # "query" or "graph"
    text: str = ""                         # the query, or the graph's IRI
    accept: tuple[str, ...] = ()           # media types the client takes, best first
    max_bytes: int = 50_000_000
    default_graphs: tuple[str, ...] = ()   # SPARQL protocol default-graph-uri
    named_graphs: tuple[str, ...] = ()     # SPARQL protocol named-graph-uri


@dataclass(frozen=True)
class Reply:
    status: str          # "ok", "syntax" (a malformed query), "too-large", "not-found", "not-acceptable", "error"
    media_type: str = ""
    body: bytes = b""
    message: str = ""


class QueryTimeout(Exception):
    """The query ran past the time limit; its worker was stopped."""


class PoolBusy(Exception):
    """Every worker stayed busy for the whole time limit."""


class _TooLarge(Exception):
    pass


class _Limited(io.BytesIO):
    """A byte buffer that refuses to grow past ``limit`` bytes."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def write(self, data: Any, /) -> int:
        if self.tell() + len(memoryview(data)) > self.limit:
            raise _TooLarge()
        return super().write(data)


def parse_accept(header: str | None) -> tuple[str, ...]:
    """Media types of an Accept header, best first (by q, then as written)."""
    if not header:
        return ()
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate(header.split(",")):
        bits = [b.strip() for b in part.split(";")]
        if not bits[0]:
            continue
        q = 1.0
        for b in bits[1:]:
            if b.startswith("q="):
                try:
                    q = float(b[2:])
                except ValueError:
                    q = 0.0
        if q > 0:
            ranked.append((-q, i, bits[0].lower()))
    return tuple(m for _, _, m in sorted(ranked))


def http_of(reply: Reply, remote: bool = False) -> tuple[int, str, bytes]:
    """The HTTP status, media type and body that answer a reply."""
    if reply.status == "ok":
        return 200, reply.media_type, reply.body
    # a federated query that fails while it runs: the remote end failed (502), not this server
    code = {"syntax": 400, "too-large": 413, "not-found": 404, "not-acceptable": 406}.get(reply.status, 502 if remote else 500)
    prefix = {"syntax": "malformed query: ", "too-large": "result too large: "}.get(reply.status, "")
    return code, "text/plain", (prefix + reply.message).encode("utf-8")


class NotAcceptable(Exception):
    """The client's ``Accept`` names no media type the answer can be given in (nor a wildcard)."""

    def __init__(self, offered: Iterable[str]):
        self.offered = tuple(offered)
        super().__init__("none of the media types in the Accept header can be given; this answer can be one of "
                         + ", ".join(self.offered) + " (or send */*)")


def choose(accept: tuple[str, ...], offered: Iterable[str], default: str) -> str:
    """The media type to answer in: the first of ``accept`` (best first) that is ``offered`` or a wildcard
    covering one (``*/*``: ``default``; ``text/*``: ``default`` if it is text, else the first text type
    offered); ``default`` when the client sent no Accept. :class:`NotAcceptable` when nothing fits."""
    choices = tuple(offered)
    for media in accept:
        if media in choices:
            return media
        if media == "*/*":
            return default
        if media.endswith("/*"):
            kind = media[:-1]
            found = default if default.startswith(kind) else next((c for c in choices if c.startswith(kind)), None)
            if found is not None:
                return found
    if accept:
        raise NotAcceptable(choices)
    return default


_LOGS: dict[str, tuple[int, tuple[str, ...]]] = {}     # folder -> (its mtime when listed, its write-ahead logs)
SETTLED_NS = 200_000_000        # a folder changed less long ago than this is listed again (coarse clocks)


def fingerprint(path: str) -> tuple[object, ...]:
    """What changes when another process commits to the store at ``path``.

    Every commit appends to a write-ahead log (``*.log``: its size grows); flushes,
    compactions and new logs add or remove files, which changes the folder's time.
    So the folder is listed only when its time changed (or changed so recently that
    a coarse clock could hide a second change), and otherwise only its logs are
    looked at: a few ``stat`` calls a query instead of one for every file."""
    folder = os.stat(path).st_mtime_ns
    known = _LOGS.get(path)
    if known is None or known[0] != folder or time.time_ns() - folder < SETTLED_NS:
        known = (folder, tuple(sorted(e.name for e in os.scandir(path) if e.name.endswith(".log"))))
        _LOGS[path] = known
    out: list[object] = [folder]
    for name in known[1]:
        try:
            st = os.stat(os.path.join(path, name))
        except FileNotFoundError:     # a log removed meanwhile (the folder's time says so next time)
            _LOGS.pop(path, None)
            out.append((name, -1, -1))
            continue
        out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def answer(store: ox.Store, req: Request) -> Reply:
    """Run one request on a store (in a worker)."""
    sink = _Limited(req.max_bytes)
    try:
        if req.kind == "graph":
            media = choose(req.accept, RDF_TYPES, DEFAULT_RDF)
            fmt = RDF_TYPES[media]
            if req.text:
                graph = ox.NamedNode(req.text)
                if not store.contains_named_graph(graph):
                    return Reply("not-found", message=f"no graph <{req.text}> in the store")
                quads: Iterable[ox.Quad] = store.quads_for_pattern(None, None, None, graph)
            else:                  # the default graph, as queries see it: the union of the named graphs
                quads = (ox.Quad(q.subject, q.predicate, q.object) for q in store.quads_for_pattern(None, None, None, None))
            ox.serialize(quads if fmt.supports_datasets else (q.triple for q in quads), sink, format=fmt)
            return Reply("ok", media, sink.getvalue())
        kwargs: dict[str, Any] = {}
        if req.default_graphs or req.named_graphs:
            # the request's dataset (SPARQL 1.1 Protocol §2.1.4): exactly the graphs it names, whatever the
            # query's FROM says; one of the two parameters alone leaves the other part empty
            kwargs["default_graph"] = [ox.NamedNode(g) for g in req.default_graphs]
            kwargs["named_graphs"] = [ox.NamedNode(g) for g in req.named_graphs]
        elif not names_dataset(req.text):          # (a query's own FROM states its default graph)
            kwargs["use_default_graph_as_union"] = True
        result = store.query(req.text, **kwargs)
        if isinstance(result, ox.QueryTriples):
            media = choose(req.accept, RDF_TYPES, DEFAULT_RDF)
            fmt = RDF_TYPES[media]
            if fmt.supports_datasets:          # N-Quads/TriG of a graph: its triples in the default graph
                ox.serialize((ox.Quad(t.subject, t.predicate, t.object) for t in result), sink, format=fmt)
            else:
                result.serialize(sink, format=fmt)
        else:
            media = choose(req.accept, RESULT_TYPES, DEFAULT_RESULTS)
            result.serialize(sink, format=RESULT_TYPES[media])
        return Reply("ok", media, sink.getvalue())
    except SyntaxError as exc:
        return Reply("syntax", message=str(exc))
    except NotAcceptable as exc:
        return Reply("not-acceptable", message=str(exc))
    except _TooLarge:
        return Reply("too-large", message=f"the result is larger than the limit of {req.max_bytes:,} bytes; "
                                          "ask for less (LIMIT, fewer variables) or raise --max-result-bytes")
    except ValueError as exc:        # a bad graph IRI
        return Reply("syntax", message=str(exc))


def _serve(path: str, conn: Connection) -> None:  # pragma: no cover - runs in the worker process
    store: ox.Store | None = None
    seen: tuple[object, ...] = ()
    while True:
        try:
            req = conn.recv()
        except (EOFError, OSError):
            return
        reply = Reply("error", message="not answered")
        for attempt in range(8):
            try:
                now = fingerprint(path)
                if store is None or now != seen:
                    try:     # between writers' commits (diagkg.kg.turns); a handle already open serves meanwhile
                        store, seen = open_read_only(Path(path), wait=0.0 if store is not None else 20.0), now
                    except StoreLockedError:
                        if store is None:
                            raise
                reply = answer(store, req)
                break
            except Exception as exc:   # any failure goes back to the client as a message
                reply = Reply("error", message=f"{type(exc).__name__}: {exc}")
                # a writer's compaction replaced a file under this handle: open it again
                if "no such file" not in str(exc).lower():
                    break
                store = None
                time.sleep(0.01 * 2 ** attempt)
        conn.send(reply)


@dataclass
class _Worker:
    process: Any
    conn: Connection
    served: int = field(default=0)


class QueryPool:
    """``size`` worker processes answering :class:`Request` s on the store at ``path``."""

    def __init__(self, path: str | os.PathLike[str], *, size: int = 2, timeout: float = 30.0):
        self.path = str(path)
        self.timeout = timeout
        self.size = size
        self._ctx = mp.get_context("spawn")      # never fork a process with threads
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self.killed = 0
        for _ in range(size):
            self._idle.put(self._spawn())

    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(self.path, child), daemon=True, name="diagkg-sparql")
        proc.start()
        child.close()
        return _Worker(proc, parent)

    def run(self, req: Request, timeout: float | None = None) -> Reply:
        """Answer a request in a worker (blocking); raises :class:`QueryTimeout` after the time limit."""
        limit = self.timeout if timeout is None else timeout
        try:
            worker = self._idle.get(timeout=limit)
        except queue.Empty:
            raise PoolBusy(f"all {self.size} query workers stayed busy for {limit:g} s") from None
        try:
            worker.conn.send(req)
            if worker.conn.poll(limit):
                reply: Reply = worker.conn.recv()
                worker.served += 1
                self._idle.put(worker)
                return reply
        except (EOFError, OSError, BrokenPipeError):
            self._replace(worker)
            raise
        self._replace(worker)
        self.killed += 1
        raise QueryTimeout(f"the query ran longer than the time limit of {limit:g} s and was stopped")

    def _replace(self, worker: _Worker) -> None:
        worker.process.kill()
        worker.process.join(5)
        worker.conn.close()
        if not self._closed:
            self._idle.put(self._spawn())

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                w = self._idle.get_nowait()
            except queue.Empty:
                break
            w.conn.close()
            w.process.kill()
            w.process.join(5)
