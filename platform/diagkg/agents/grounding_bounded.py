"""Accepted queries, run on a copy of an assistant's view in a process of their own, so
that one past the time limit can be stopped (pyoxigraph cannot cancel a query in the
process that runs it), and cut to a number of rows.

The worker starts at the first query of a session (it loads the view's graphs as
N-Triples, a few thousand statements), answers one query at a time over a pipe, and is
killed and forgotten when a query runs past ``timeout`` seconds (the next query starts a
fresh one). Answers are rows of terms as text: IRIs with the usual prefixes or the
system's own (``sys:bulb``), literals by their value.
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Mapping

import pyoxigraph as ox

from ..kg.sparql_scan import names_dataset

SPAWN = mp.get_context("spawn")


@dataclass(frozen=True)
class Answer:
    """What a query gave: rows (at most the limit), whether more were cut, or why none came."""

    rows: tuple[dict[str, str], ...] = ()
    boolean: bool | None = None
    truncated: bool = False
    timed_out: bool = False
    error: str = ""
    variables: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        if self.timed_out:
            return {"stopped": "the query ran past the time limit"}
        if self.error:
            return {"error": self.error}
        if self.boolean is not None:
            return {"answer": self.boolean}
        return {"rows": list(self.rows), "truncated": self.truncated}


def _text(term: Any, prefixes: Mapping[str, str]) -> str:
    if isinstance(term, ox.NamedNode):
        for prefix, ns in prefixes.items():
            if term.value.startswith(ns) and len(term.value) > len(ns):
                return f"{prefix}:{term.value[len(ns):]}"
        return term.value
    if isinstance(term, ox.Literal):
        return term.value
    return str(term)


def _serve(conn: Connection, documents: Mapping[str, str]) -> None:   # pragma: no cover - runs in the worker
    store = ox.Store()
    for graph, text in documents.items():
        store.load(text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES, to_graph=ox.NamedNode(graph))
    conn.send(("ready",))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        text, prefixes, show, limit = request
        try:
            result = store.query(text, prefixes=dict(prefixes), use_default_graph_as_union=not names_dataset(text))
            if isinstance(result, ox.QueryBoolean):
                conn.send(("boolean", bool(result)))
            elif isinstance(result, ox.QuerySolutions):
                names = [v.value for v in result.variables]
                rows: list[dict[str, str]] = []
                for row in result:
                    if len(rows) == limit:
                        conn.send(("rows", names, rows, True))
                        break
                    rows.append({n: _text(row[n], show) for n in names if row[n] is not None})
                else:
                    conn.send(("rows", names, rows, False))
                del result
            else:
                triples: list[dict[str, str]] = []
                cut = False
                for t in result:
                    if len(triples) == limit:
                        cut = True
                        break
                    triples.append({"subject": _text(t.subject, show), "predicate": _text(t.predicate, show),
                                    "object": _text(t.object, show)})
                conn.send(("rows", ["subject", "predicate", "object"], triples, cut))
        except (SyntaxError, ValueError, OSError, RuntimeError) as exc:
            conn.send(("error", str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__))


class BoundedQueries:
    """Runs accepted queries on ``documents`` (graph IRI -> N-Triples text), ``timeout``
    seconds and ``max_rows`` rows at most each."""

    def __init__(self, documents: Mapping[str, str], prefixes: Mapping[str, str], shown: Mapping[str, str],
                 timeout: float = 5.0, max_rows: int = 40, start_timeout: float = 60.0):
        self.documents = dict(documents)
        self.prefixes = dict(prefixes)         # what a query may use undeclared
        self.shown = dict(shown)               # how IRIs are written in the answers
        self.timeout = timeout
        self.max_rows = max_rows
        self.start_timeout = start_timeout
        self._worker: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._conn is None:
            parent, child = SPAWN.Pipe()
            worker = SPAWN.Process(target=_serve, args=(child, self.documents), daemon=True)
            worker.start()
            child.close()
            if not parent.poll(self.start_timeout):
                worker.kill()
                worker.join()
                raise TimeoutError("the query worker did not start")
            parent.recv()
            self._worker, self._conn = worker, parent
        return self._conn

    def run(self, text: str) -> Answer:
        try:
            conn = self._start()
        except (TimeoutError, EOFError, OSError) as exc:
            self.close()
            return Answer(error=f"the query could not be run: {exc}")
        conn.send((text, self.prefixes, self.shown, self.max_rows))
        if not conn.poll(self.timeout):
            self.close()
            return Answer(timed_out=True)
        try:
            reply = conn.recv()
        except EOFError:
            self.close()
            return Answer(error="the query worker stopped")
        if reply[0] == "boolean":
            return Answer(boolean=bool(reply[1]))
        if reply[0] == "error":
            return Answer(error=str(reply[1]))
        _, names, rows, cut = reply
        return Answer(tuple(rows), truncated=bool(cut), variables=tuple(names))

    def close(self) -> None:
        """Stop the worker (a session's end, or a query past the time limit)."""
        if self._worker is not None:
            self._worker.kill()
            self._worker.join()
        if self._conn is not None:
            self._conn.close()
        self._worker, self._conn = None, None


__all__ = ["Answer", "BoundedQueries"]
