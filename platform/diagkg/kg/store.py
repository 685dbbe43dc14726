"""The diagkg knowledge store: an Oxigraph store, embedded and on disk by default.

Where the store lives, in order of precedence:

1. the ``path`` argument (the CLI's ``--store`` option);
2. the ``DIAGKG_STORE`` environment variable;
3. ``$XDG_DATA_HOME/diagkg/store`` (``~/.local/share/diagkg/store``).

``KnowledgeStore.memory()`` gives an in-memory store (tests, throw-away runs).

Many processes share one on-disk store. A process reads through a read-only
handle (a snapshot, renewed by :meth:`KnowledgeStore.refresh` and after each of its own
writes, opened between other processes' writes: :mod:`diagkg.kg.turns`) and holds the write lock only while it writes: each write
(:meth:`~KnowledgeStore.write_graphs`, :meth:`~KnowledgeStore.add_quads`,
:meth:`~KnowledgeStore.update`) opens the store for writing, waits up to
``wait`` seconds for another writer to finish (telling ``on_wait`` once), then
raises :class:`~diagkg.errors.StoreLockedError`. Every write is one Oxigraph
transaction: killed at any moment, the store holds all of it or none.
Loading files (validation, collisions, provenance, inferences) is :mod:`diagkg.kg.loading`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence, TypeVar

import pyoxigraph as ox

from ..errors import InputError, QueryError, StoreError, StoreLockedError
from . import graphs
from .queries import QueryFile, bind_values, explain_syntax_error, from_text, library, read_query_file
from .rawstore import RawStore
from .rdfio import RdfDocument, python_value, quads_of, to_rdflib, value_of
from .sparql_scan import names_dataset
from .turns import WriteTurn, check_new_store, held_by, is_lock_error, open_read_only, try_write_turn, write_turn
from .vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    import rdflib

ENV_VAR = "DIAGKG_STORE"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DEFAULT_WAIT = 60.0      # seconds a writer waits for another one before giving up


def default_store_path() -> Path:
    """The on-disk store used when no path is given."""
    if env := os.environ.get(ENV_VAR):
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "diagkg" / "store"


@dataclass(frozen=True)
class LoadedGraph:
    """What a load put where."""

    file: str
    graph: str
    triples: int


class KnowledgeSource(Protocol):
    """Anything that answers diagkg's query files: a :class:`KnowledgeStore`, a
    session's working memory, or an assistant's read-only view
    (:class:`diagkg.env.workspace.KnowledgeView`)."""

    def select(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
               **template_values: Any) -> list[dict[str, Any]]: ...

    def version_of(self, graph: ox.NamedNode) -> str: ...


def _version(raw: RawStore, graph: ox.NamedNode) -> str:
    for marker in (DK.contentHash, DK.inferredFrom):
        for q in raw.quads_for_pattern(graph, ox.NamedNode(str(marker)), None, graph):
            return value_of(q.object)
    lines = sorted(str(q.triple) for q in raw.quads_for_pattern(None, None, None, graph))
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest() if lines else ""


# writes to an in-memory store between compactions (see KnowledgeStore.compact)
COMPACT_EVERY = 2_000
STALE_RETRIES = 5     # tries of a read whose snapshot lost a file to another process's writer
T = TypeVar("T")


class KnowledgeStore:
    """An Oxigraph store plus the conventions of diagkg."""

    last_hold = 0.0          # seconds the last write through this object held the lock (on disk)

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False, in_memory: bool = False,
                 wait: float = DEFAULT_WAIT, on_wait: Callable[[str], None] | None = None):
        self.read_only = read_only
        self.wait = wait
        self.on_wait = on_wait
        self._reader: ox.Store | None = None
        self._held: ox.Store | None = None     # the writer, while holding() lasts
        self._turn: WriteTurn | None = None    # its turn on the store (diagkg.kg.turns)
        self.generation = 0                    # counts writes made through this object (see touch)
        self._compacted = 0                    # the generation of the last compaction (see compact)
        self._closed = False
        if in_memory:
            self.path: Path | None = None
            self._reader = ox.Store()
            return
        if (where := str(path if path is not None else os.environ.get(ENV_VAR, ""))).lower().startswith(("http://", "https://")):
            raise StoreError(f"{where} is a server, not a folder: open it with diagkg.kg.remote.connect "
                             "(or diagkg --store URL)")
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        if not (self.path / "CURRENT").exists():
            check_new_store(self.path, read_only)
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store at {self.path}: {exc.strerror}") from None
            with self.writing():
                pass      # creates the database files
        elif not read_only:
            try:
                self._reader = open_read_only(self.path, wait, on_wait)      # between writers' turns
            except StoreError:      # unfinished (its creator was killed): opening it for writing completes it,
                with contextlib.suppress(StoreLockedError), self.writing():   # as does another writer, now
                    pass

    # -- construction ------------------------------------------------------
    @classmethod
    def memory(cls) -> "KnowledgeStore":
        return cls(in_memory=True)

    @classmethod
    def over(cls, raw: ox.Store) -> "KnowledgeStore":
        """A store whose content is ``raw``, a pyoxigraph store of this process's own (e.g. the
        private copy an update is worked out on, :mod:`diagkg.kg.updates`); it behaves as an
        in-memory store."""
        store = cls(in_memory=True)
        store._reader = raw
        return store

    @classmethod
    def open_for_reading(cls, path: str | Path | None = None) -> "KnowledgeStore":
        """A store for commands that only read (never takes the write lock)."""
        return cls(path, read_only=True)

    def __enter__(self) -> "KnowledgeStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Let go of the store (an on-disk store is not locked between writes anyway)."""
        self._reader = None
        self._closed = True

    @property
    def in_memory(self) -> bool:
        return self.path is None

    @property
    def raw(self) -> RawStore:
        """The underlying pyoxigraph store, for reading (read-only on disk)."""
        if self._closed:
            raise StoreError("the store is closed")
        if self._held is not None:
            return self._held
        if self._reader is None:
            assert self.path is not None
            self._reader = open_read_only(self.path, self.wait, self.on_wait)
        return self._reader

    def refresh(self) -> None:
        """See what other processes have committed since this store was opened."""
        if not self.in_memory:
            self._reader = None

    def refresh_now(self) -> bool:
        """Like :meth:`refresh`, but only if that needs no wait: while another process commits, the
        snapshot at hand stays (a server answering meanwhile); returns whether it was renewed."""
        if self.in_memory or self._held is not None or self._reader is None:
            self.refresh()
            return True
        assert self.path is not None
        try:
            self._reader = open_read_only(self.path, 0.0)
        except StoreLockedError:
            return False
        return True

    # -- writing -----------------------------------------------------------
    @contextmanager
    def writing(self, wait: float | None = None) -> Iterator[RawStore]:
        """The store opened for writing, for as long as the ``with`` block lasts.

        On disk, waits up to ``wait`` seconds (by default :attr:`wait`) for another
        writer; the lock is released when the block ends.
        """
        if self.read_only:
            raise StoreError(f"the store at {self.path} is open read-only")
        if self._closed:
            raise StoreError("the store is closed")
        if self.in_memory:
            assert self._reader is not None
            yield self._reader
            return
        if self._held is not None:
            yield self._held          # each update or extend is atomic by itself
            return
        turn, writer = self._open_writer(wait)
        t0 = time.perf_counter()
        try:
            yield writer
            writer.flush()
        except OSError as exc:
            raise StoreError(f"cannot write the store at {self.path}: {exc}") from None
        finally:
            del writer            # releases the lock
            turn.release()
            self.last_hold = time.perf_counter() - t0
            self._reader = None   # the next read sees what was written

    def check_writable(self) -> None:
        """Raise :class:`~diagkg.errors.StoreError` if this process can never write the store (read-only,
        closed, no permission, a read-only file system, damaged files); one that another process writes
        now passes (its writes wait their turn). Takes the lock for a moment when it is free."""
        if self.read_only:
            raise StoreError(f"the store at {self.location} is open read-only")
        if self._closed:
            raise StoreError("the store is closed")
        if self.path is None or self._held is not None:     # in memory, or a server (it answers each write)
            return
        turn = try_write_turn(self.path)
        if turn is None:           # another process writes now
            return
        try:
            try:
                writer = ox.Store(str(self.path))
            except OSError as exc:
                if is_lock_error(exc):
                    return
                raise StoreError(f"the store at {self.path} cannot be written: {exc}") from None
            del writer             # releases the lock
        finally:
            turn.release()
        self._reader = None        # opening for writing may have removed files an older read handle expects

    def _open_writer(self, wait: float | None = None) -> tuple[WriteTurn, ox.Store]:
        """Take the store's write turn and open it for writing, waiting up to ``wait`` (by default :attr:`wait`)
        seconds for another writer (or a reader opening its handle: :mod:`diagkg.kg.turns`)."""
        assert self.path is not None
        wait = self.wait if wait is None else wait
        deadline = time.monotonic() + max(wait, 0.0)
        delay, told = 0.02, False
        while True:
            try:
                turn = write_turn(self.path, deadline - time.monotonic(), None if told else self.on_wait)
            except StoreLockedError as exc:
                raise StoreLockedError(self.path, wait, holder=exc.holder) from None
            try:
                return turn, ox.Store(str(self.path))
            except OSError as exc:
                turn.release()
                ours = "current process" in str(exc)   # a failed write's handle, kept alive by its traceback
                if not is_lock_error(exc) or (ours and told):     # else a process that takes no turns holds it
                    raise StoreError(f"cannot open the store at {self.path}: " + ("this process still holds it after "
                                     "an earlier write failed" if ours else str(exc))) from None
                gc.collect() if ours else None
            if time.monotonic() >= deadline:
                raise StoreLockedError(self.path, wait, holder=held_by(self.path)) from None
            if not told and self.on_wait is not None and not ours:
                self.on_wait(f"waiting for the store at {self.path} (another process is writing)…")
            told = True
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    @contextmanager
    def holding(self) -> Iterator["KnowledgeStore"]:
        """Keep an on-disk store open for writing across many writes (a benchmark's or a one-off tool's single
        writer): each write costs no open, flush and reopen, reads see the writes at once, and other processes wait
        for the lock until the block ends, so nothing that others use while it runs holds it (a campaign commits in
        batches and lets go of the lock between them: :mod:`diagkg.evaluation.writer`). Every write stays atomic;
        what was written before a crash is kept. In memory, nothing changes."""
        if self.in_memory or self._held is not None:
            yield self
            return
        self._turn, self._held = self._open_writer()
        try:
            yield self
            self._held.flush()
        except OSError as exc:
            raise StoreError(f"cannot write the store at {self.path}: {exc}") from None
        finally:
            self._held = None       # releases the lock
            self._let_turn_go()
            self._reader = None     # the next read sees what was written

    def _let_turn_go(self) -> None:
        if self._turn is not None:
            self._turn.release()
            self._turn = None

    def touch(self) -> None:
        """Say that :attr:`raw` was written directly (caches keyed by
        :attr:`generation` read again); every write method here does it."""
        self.generation += 1

    def compact(self, every: int = COMPACT_EVERY) -> bool:
        """In memory: when ``every`` writes were made since the last time, move the content into
        a fresh pyoxigraph store. An in-memory store keeps what was removed (as older versions)
        and every scan slows down with it: a graph removed and written 3,000 times makes reading
        it 60 times slower (working memories that sessions reset and roll back again and again).
        Call it where nothing else is reading :attr:`raw`; returns whether it compacted."""
        if not self.in_memory or self._held is not None or self.generation - self._compacted < every:
            return False
        fresh = ox.Store()
        fresh.extend(list(self.raw.quads_for_pattern(None, None, None)))
        self._reader = fresh
        self._compacted = self.generation
        return True

    def renew_writer(self) -> None:
        """While :meth:`holding`: save what was written and take a fresh writer. The writer's memory (memtables, caches)
        grows with what it wrote; a long run of writes calls this now and then (when nothing else holds :attr:`raw`)."""
        if self._held is None:
            return
        self._held.flush()
        self._held = None           # releases the lock (another writer may slip in: we wait our turn)
        self._let_turn_go()
        self._turn, self._held = self._open_writer()

    def write_graphs(self, new: Mapping[ox.NamedNode, Sequence[ox.Triple]], drop: Iterable[ox.NamedNode] = (),
                     check: Callable[[RawStore], Iterable[ox.NamedNode]] | None = None,
                     add: Mapping[ox.NamedNode, Sequence[ox.Triple]] | None = None, wait: float | None = None,
                     fresh: Mapping[ox.NamedNode, Sequence[ox.Quad] | bytes] | None = None) -> None:
        """Drop the graphs ``drop``, make each graph of ``new`` hold exactly its triples and add those of ``add``
        to their graphs, in one atomic update (all or nothing). ``check`` runs first, under the write lock, on the
        store opened for writing: it may raise to call the write off, and returns more graphs to drop.
        ``fresh``: graphs the store does not hold (with their quads), added under the same lock just before, in
        one atomic step of their own (Oxigraph's bulk load: a third of a transaction's cost); killed between the
        two, the store holds them all and none of the rest. One the store holds after all goes with the rest. A fresh
        graph may be N-Quads all in it (a campaign's trajectories, as its workers wrote them): Oxigraph parses them."""
        self.generation += 1
        add, fresh = add or {}, dict(fresh or {})
        if fresh and not isinstance(self.raw, ox.Store):        # a server: all in the one update
            new, fresh = {**new, **{g: [x.triple for x in quads_of(qs)] for g, qs in fresh.items()}}, {}
        payload = [{"name": g, "triples": [*t, *add.get(g, ())]} for g, t in new.items() if t or add.get(g)]
        payload += [{"name": g, "triples": list(t)} for g, t in add.items() if t and g not in new]
        q = library().get("load-graphs")       # rendered before the lock (again under it, if a check adds drops)
        written = {g for g, t in [*new.items(), *add.items()] if t or add.get(g)}     # emptied, not dropped
        absent = self.reading(lambda raw: {g for g in written if isinstance(raw, ox.Store)
                                           and not raw.contains_named_graph(g)})
        old = dict.fromkeys([*drop, *new])       # each operation costs ~1 ms: one empties them all
        def render(skip: set[ox.NamedNode]) -> str:
            return q.render(drop=[g for g in old if g not in written], clear=[g for g in old if g in written - skip],
                            graphs=payload)
        text, more = ("" if check else render(absent)), list[ox.NamedNode]()
        with self.writing(wait) as w:
            if check is not None or any(w.contains_named_graph(g) for g in absent):     # or one appeared meanwhile
                old.update(dict.fromkeys(more := list(check(w)) if check is not None else []))
                text = render(set())
            # a fresh graph the store holds after all goes with the rest; all of them, where there is more to drop
            if held := [g for g in fresh if more or w.contains_named_graph(g)]:
                payload += [{"name": g, "triples": [x.triple for x in quads_of(fresh.pop(g))]} for g in held]
                old.update(dict.fromkeys(held))
                written.update(held)
                text = render(set())
            if fresh:
                assert isinstance(w, ox.Store)
                if len(blobs := [qs for qs in fresh.values() if isinstance(qs, bytes)]) == len(fresh):
                    w.bulk_load(b"".join(blobs), format=ox.RdfFormat.N_QUADS)
                else:
                    w.bulk_extend(x for qs in fresh.values() for x in quads_of(qs))
            if payload or old:
                self._run_text(w, q.name, text)

    def replace_graph(self, graph: ox.NamedNode, triples: Iterable[ox.Triple]) -> int:
        """Make ``graph`` hold exactly ``triples`` (atomically); returns their number."""
        self.write_graphs({graph: (triples := list(triples))})
        return len(triples)

    def add_quads(self, quads: Iterable[ox.Quad]) -> None:
        """Add quads in one transaction."""
        quads = list(quads)
        self.generation += 1
        with self.writing() as w:
            w.extend(quads)

    def remove_graphs(self, names: Iterable[ox.NamedNode]) -> None:
        """Remove named graphs in one transaction."""
        self.write_graphs({}, drop=names)

    def update(self, query: str | QueryFile, **values: Any) -> None:
        """Run a SPARQL update: a query-file name, a :class:`QueryFile`, or text, as it is, under
        the write lock: the primitive for diagkg's own templates on graphs of its own (a session's
        state, caches). An update a person gives goes through :func:`diagkg.kg.updates.apply_update`,
        which validates and versions the graphs it changes."""
        q = resolve_query(query)
        self.generation += 1
        with self.writing() as w:
            self._run_update(w, q, **values)

    @staticmethod
    def _run_update(on: RawStore, q: QueryFile, /, **values: Any) -> None:
        KnowledgeStore._run_text(on, q.name, q.render(**values) if q.is_template else q.text)

    @staticmethod
    def _run_text(on: RawStore, name: str, text: str) -> None:
        # (an OSError, the disk refusing the write, goes on to writing(), which says the store cannot be written
        # where: made a StoreError named after the update here, a full disk read "load-graphs: IO error: …")
        try:
            on.update(text)
        except SyntaxError as exc:
            raise QueryError(explain_syntax_error(name, text, exc)) from None

    def version_of(self, graph: ox.NamedNode) -> str:
        """The version of a named graph: the content hash recorded when it was
        loaded, else a hash of its triples (empty string for a missing graph)."""
        return self.reading(lambda raw: _version(raw, graph))

    def quads(self, graph: ox.NamedNode) -> list[ox.Quad]:
        """Every quad of one named graph."""
        return self.reading(lambda raw: list(raw.quads_for_pattern(None, None, None, graph)))

    def dump(self, names: Sequence[ox.NamedNode] = ()) -> bytes:
        """The named graphs ``names`` (all of them when empty) as N-Quads."""
        graph_names: Sequence[ox.NamedNode | ox.BlankNode] = names
        if not graph_names:
            graph_names = sorted(self.raw.named_graphs(), key=lambda g: g.value)
        missing = [g.value for g in graph_names if not self.raw.contains_named_graph(g)]
        if missing:
            raise InputError("no graph " + ", ".join(f"<{m}>" for m in missing) + " in the store")
        quads = [q for g in graph_names for q in self.raw.quads_for_pattern(None, None, None, g)]
        return ox.serialize(quads, format=ox.RdfFormat.N_QUADS) or b""

    def system_graph(self, iri: str) -> rdflib.Graph | None:
        """The stored description of the system with this IRI (for validating scenarios)."""
        for q in self.raw.quads_for_pattern(ox.NamedNode(iri), ox.NamedNode(RDF_TYPE), ox.NamedNode(str(DK.System))):
            if isinstance(q.graph_name, ox.NamedNode):
                return self.graph_as_rdflib(q.graph_name)
        return None

    # -- reading -----------------------------------------------------------
    def graph_as_rdflib(self, graph: ox.NamedNode) -> rdflib.Graph:
        """A copy of one named graph as an rdflib graph."""
        import rdflib

        g = rdflib.Graph()
        for q in self.raw.quads_for_pattern(None, None, None, graph):
            g.add((to_rdflib(q.subject), to_rdflib(q.predicate), to_rdflib(q.object)))
        return g

    def query(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
              use_default_graph_as_union: bool = True,
              **template_values: Any) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """Run a SPARQL query: a query-file name, a :class:`QueryFile`, or text.

        ``bindings`` bind variables of a plain query as RDF terms; templates take ``template_values``. By
        default the default graph is the union of all graphs: a query sees everything unless it names a ``GRAPH``,
        or states its own dataset (``FROM``: the union would override it)."""
        q = resolve_query(query)
        if q.is_update:
            raise QueryError(f"{q.name} is an update, not a query; run it as an update")
        text = q.render(**template_values) if q.is_template else q.text
        subs = q.substitutions(bindings or {}) if bindings else None
        use_default_graph_as_union = use_default_graph_as_union and not names_dataset(text)
        try:
            try:
                return self.raw.query(text, substitutions=subs, use_default_graph_as_union=use_default_graph_as_union)
            except RuntimeError:   # Oxigraph substitutes only what the results could show (?k in a FILTER alone was
                if subs is None:   # a traceback): then bound as a remote store binds them, by a VALUES block
                    raise
                return self.raw.query(bind_values(text, subs), use_default_graph_as_union=use_default_graph_as_union)
        except SyntaxError as exc:
            raise QueryError(explain_syntax_error(q.name, text, exc)) from None
        except OSError as exc:
            raise StoreError(f"{q.name}: {exc}") from None

    def select(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
               **template_values: Any) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts of Python values (IRIs as str, literals converted). On disk, a
        read whose snapshot lost a file to another process's compaction is tried again afresh."""
        return self.reading(lambda _: rows_of(self.query(query, bindings, **template_values)))

    def reading(self, read: Callable[[RawStore], T]) -> T:
        """``read`` of :attr:`raw`, whole (materialise what it returns). On disk, a read whose snapshot
        lost a file to another process's compaction is tried again on a fresh snapshot."""
        for attempt in range(1, STALE_RETRIES + 1):
            try:
                return read(self.raw)
            except (OSError, StoreError) as exc:
                if attempt == STALE_RETRIES or self.path is None or self._held is not None or \
                        "no such file" not in str(exc).lower():
                    raise
            self.refresh()
            time.sleep(0.01 * 2 ** attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def graphs(self) -> list[tuple[str, int]]:
        """Named graphs with their number of triples, by name."""
        rows = self.select("graph-summary")
        return [(r["graph"], int(r["triples"])) for r in rows]

    def __len__(self) -> int:
        return len(self.raw)

    def __bool__(self) -> bool:
        return True   # an empty store is still a store (``store or default`` must not drop it)

    @property
    def location(self) -> str:
        """Where the store is, for messages: its folder, ``in memory``, or a server's URL."""
        return str(self.path) if self.path is not None else "the in-memory store"



def resolve_query(query: str | QueryFile) -> QueryFile:
    """A query-file name, a :class:`QueryFile`, a ``.rq``/``.ru`` file of one's own (with its header), or SPARQL text."""
    if isinstance(query, QueryFile):
        return query
    if query.endswith((".rq", ".ru", ".j2")) and not any(ch.isspace() for ch in query) and Path(query).is_file():
        return read_query_file(Path(query))
    lib = library()
    if query in lib:
        return lib.get(query)
    if not any(ch.isspace() for ch in query.strip()):
        return lib.get(query)  # a name that is not in queries/: UnknownQueryError
    return from_text(query)


def rows_of(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> list[dict[str, Any]]:
    """Rows of a SELECT result as dicts of Python values (IRIs as str, literals converted).

    The result is consumed here and released here, on this thread, whatever happens: pyoxigraph's
    ``QuerySolutions`` may only be dropped by the thread that made it, and a frame kept alive by an
    exception's traceback (or a reference cycle collected later, on whichever thread runs the garbage
    collector, e.g. a Dask worker's event loop) would otherwise drop it elsewhere
    (``RuntimeError: ... PyQuerySolutions is unsendable, but is being dropped on another thread``)."""
    try:
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError("not a SELECT query")
        names = [v.value for v in result.variables]
        return [{n: python_value(row[n]) for n in names} for row in result]
    finally:
        del result


def select_on(target: RawStore, query: str, bindings: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows of a query file run on a raw pyoxigraph store (e.g. one opened for writing)."""
    q = library().get(query)
    return rows_of(target.query(q.text, substitutions=q.substitutions(bindings) if bindings else None,
                                use_default_graph_as_union=True))


def graph_for(doc: RdfDocument) -> ox.NamedNode:
    """The named graph a document belongs in: ``system/<key>`` for a system
    description, ``file/<name>`` for anything else."""
    scenarios = [t.subject for t in doc.triples
                 if t.predicate.value == RDF_TYPE and value_of(t.object) == str(DK.Scenario)]
    if len(set(scenarios)) > 1:
        raise InputError(f"{doc.name}: holds several scenarios; use one file per scenario")
    if scenarios:
        ids = [value_of(t.object) for t in doc.triples
               if t.subject == scenarios[0] and t.predicate.value == "http://purl.org/dc/terms/identifier"]
        return graphs.named("scenario", ids[0] if ids else Path(doc.name).stem)
    systems = [t for t in doc.triples if t.predicate.value == str(DK.systemKey)]
    keys = sorted({value_of(t.object) for t in systems})
    if len(keys) > 1:
        raise InputError(f"{doc.name}: describes several systems ({', '.join(keys)}); use one file per system")
    if keys:
        return graphs.system(keys[0])
    return graphs.named("file", Path(doc.name).name)
