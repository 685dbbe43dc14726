"""One write path for SPARQL updates: worked out on a snapshot, applied in milliseconds.

``diagkg update``, the ``/sparql`` update route of ``diagkg serve`` and library code call
:func:`apply_update`; ``diagkg remove`` calls :func:`remove_graphs`. An update is:

1. **Worked out without the lock.** A worker process (a fresh Python, so that it can be
   killed: at the time limit it is, and nothing is written) takes a checkpoint of the on-disk store
   (``Store.backup`` of a read-only handle: hard links, milliseconds), runs the update on it
   *as written* (:mod:`diagkg.kg.deltas`: pyoxigraph's own semantics, no SPARQL built or
   rewritten), reads off what it changed, and settles the system, scenario and file graphs
   it touched (:mod:`diagkg.kg.revision`: refused or validated in context, new
   ``dk:contentHash``, inferences computed again) and the trajectory graphs (validated against
   their shapes, their slots' tallies dropped); a write into the default graph is refused. The time limit covers all of it
   (Python's start-up excepted). An in-memory store belongs to this process: it is copied
   and the update worked out here, without a time limit.
2. **Applied under the lock.** The change comes back as *one* SPARQL update rendered from
   ``queries/store-apply-change.ru.j2`` (every term through the escaping filters), with the
   digests of every graph the update read or wrote and the checks read (and, where
   identities were checked, every other graph's claims). Under the write lock the store is
   compared with them: the same, and the change is applied as one transaction and the
   lock let go (other writers wait milliseconds, not the update's duration); different
   (another writer changed what the update depended on), and the lock is let go and the
   update worked out again on a fresh snapshot, up to :data:`ATTEMPTS` times, then
   :class:`~diagkg.errors.UpdateConflict` (nothing written).
3. **Seen at once.** The writing process reads afresh after its write, and every cache
   derived from a graph is keyed by the graph's version (its ``dk:contentHash``), which
   the change replaced; other processes (a server's workers, sessions) see it at their
   next read of the store.

What can go wrong, typed: a malformed update (:class:`~diagkg.errors.QueryError`), a
``LOAD`` of something that is not RDF (:class:`~diagkg.errors.NotRdfError`) or that
cannot be fetched (:class:`~diagkg.errors.InputError`), a violation of the shapes
(:class:`~diagkg.errors.ValidationError`), a write no update may make
(:class:`~diagkg.errors.UpdateRefused`), the time limit
(:class:`~diagkg.errors.UpdateTimeout`). In every case nothing was written.

A graph whose change touches a blank node that the store already holds is rewritten whole
(its blank nodes get new labels, as a load gives them): SPARQL cannot name a stored blank
node; a graph the update did not change but that shares such a node with one it changed
is rewritten too (as it is), so that the node stays shared. On a remote store (a SPARQL server) the update is sent as it is: a
``diagkg serve`` applies this same path, another server its own rules.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import pyoxigraph as ox

from ..errors import DiagkgError, InputError, QueryError, StoreError, UpdateConflict, UpdateRefused, UpdateTimeout, ValidationError
from . import graphs
from .collisions import Held, held_claims
from .deltas import (
    DEFAULT,
    Delta,
    Footprint,
    FootprintMissed,
    Snapshot,
    blank_nodes,
    diff,
    digest,
    footprint,
    graph_of,
    key_of,
    run,
)
from .queries import QueryFile, library
from .rawstore import RawStore
from .revision import Revision, Settled, settle
from .store import DEFAULT_WAIT, KnowledgeStore, resolve_query, select_on
from .turns import reading

if TYPE_CHECKING:  # pragma: no cover
    from .validation import Validator

DEFAULT_TIMEOUT = 300.0     # seconds an update may take to work out (diagkg update --timeout)
ATTEMPTS = 3                # times an update is worked out again when what it read changed meanwhile
START_LIMIT = 120.0         # seconds the worker process may take to start (not counted in the time limit)


@dataclass(frozen=True)
class GraphChange:
    """What an update itself did to one graph (``graph`` empty: the default graph)."""

    graph: str
    added: int
    removed: int


@dataclass
class UpdateReport:
    """What an update did: its own changes, and what the rules did after them."""

    changes: list[GraphChange] = field(default_factory=list)
    revisions: list[Revision] = field(default_factory=list)       # graphs validated and given a new version
    inferred: dict[str, int] = field(default_factory=dict)        # system key -> inferred triples, computed again
    revalidated: list[str] = field(default_factory=list)          # stored scenarios checked against a new system
    stale: list[str] = field(default_factory=list)                # slot tallies dropped: a trajectory of theirs changed
    attempts: int = 1
    remote: bool = False                                          # sent to a SPARQL server as it is

    @property
    def changed(self) -> bool:
        return bool(self.changes) or self.remote


@dataclass
class Change:
    """An update's change, worked out on a copy: what applying it takes and what it depends on."""

    text: str                                 # one SPARQL update; empty when nothing changes
    expected: dict[str, str]                  # graph key -> digest the store must still have
    claims: frozenset[Held] | None            # other graphs' claims, when identities were checked
    revised: tuple[str, ...]                  # graphs whose claims changed (left out of ``claims``)
    report: UpdateReport


# ---------------------------------------------------------------------------
# working an update out on a copy
# ---------------------------------------------------------------------------

def compute(raw: ox.Store, text: str, *, everything: bool = False, name: str = "update",
            validator: "Validator | None" = None) -> Change:
    """Run ``text`` on ``raw`` (a private copy, which it changes) and return the change it makes
    to the store the copy was taken from. Raises :class:`~diagkg.kg.deltas.FootprintMissed`
    when the update wrote a graph its footprint did not name (call again on a fresh copy with
    ``everything``)."""
    fp = footprint(text)
    if everything:
        fp = Footprint.everything(fp.loads)
    before = Snapshot.take(raw, fp)
    run(raw, text, fp, name)
    delta = diff(before, raw)
    if delta.empty:
        return Change("", {}, None, (), UpdateReport())
    settled = settle(raw, delta, before, validator)
    apply_text, holders = render_change(raw, delta, before, settled)
    expected = dict(before.digests)
    for key in delta.graphs():
        expected.setdefault(key, "absent")        # a graph the update made (with every graph taken)
    for key in settled.read | holders:
        if key not in expected:
            expected[key] = digest(raw, key)      # not written by the update: as it was before
    report = UpdateReport(
        changes=[GraphChange(k, len(delta.added.get(k, ())), len(delta.removed.get(k, ())))
                 for k in delta.graphs()],
        revisions=settled.revisions, inferred=settled.inferred, revalidated=settled.revalidated,
        stale=settled.stale)
    revised = tuple(r.graph for r in settled.revisions)
    return Change(apply_text, expected, settled.claims, revised, report)


def _quads_with(raw: ox.Store, node: ox.BlankNode) -> Iterator[ox.Quad]:
    return chain(raw.quads_for_pattern(node, None, None, None), raw.quads_for_pattern(None, None, node, None))


def render_change(raw: ox.Store, delta: Delta, before: Snapshot, settled: Settled) -> tuple[str, set[str]]:
    """The SPARQL update that makes the store what the copy ``raw`` now is (for the graphs
    ``delta`` and ``settled`` name), and the graphs rewritten whole for their blank nodes."""
    replace = dict(settled.replace)
    drop = set(settled.drop) | set(delta.dropped)
    added = {(k, t) for k, ts in delta.added.items() for t in ts}
    removed_nodes = blank_nodes(t for ts in delta.removed.values() for t in ts)
    stored = set(removed_nodes)      # blank nodes the store holds (not made by the update)
    for node in blank_nodes(t for ts in delta.added.values() for t in ts) - removed_nodes:
        if any((key_of(q.graph_name), q.triple) not in added for q in _quads_with(raw, node)):
            stored.add(node)
    holders: set[str] = set()
    for node in stored:
        keys = {key_of(q.graph_name) for q in _quads_with(raw, node)}
        keys |= {k for k, ts in delta.removed.items() if node in blank_nodes(ts)}
        for key in sorted(keys - set(replace) - drop):
            if key in delta.after:
                content = delta.after[key]
            else:      # a graph the update did not change (it shares the node): rewritten as it is
                content = frozenset(q.triple for q in raw.quads_for_pattern(None, None, None, graph_of(key)))
            replace[key] = sorted(content, key=str)
            holders.add(key)
    named = [k for k in (*replace, *drop) if k != DEFAULT]
    for key in named:
        if key.startswith("_:"):
            raise UpdateRefused("nothing was written: a graph named by a blank node cannot be written by name")

    def group(items: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": None if k == DEFAULT else ox.NamedNode(k), "triples": sorted(ts, key=str)}
                for k, ts in sorted(items.items()) if ts]

    exists = {k for k in replace if k != DEFAULT and raw.contains_named_graph(graph_of(k))}
    create = sorted((set(delta.created) | {k for k in exists if not replace[k]}) - drop)
    values = dict(
        clear=DEFAULT in replace,
        drop=[ox.NamedNode(k) for k in sorted(set(named))],
        create=[ox.NamedNode(k) for k in create],
        remove=group({k: ts for k, ts in delta.removed.items() if k not in replace and k not in drop}),
        add=group({**{k: ts for k, ts in delta.added.items() if k not in replace and k not in drop}, **replace}),
    )
    return library().get("store-apply-change").render(**values), holders


def _copy_of(store: KnowledgeStore) -> ox.Store:
    raw = ox.Store()
    for g in store.raw.named_graphs():
        raw.add_graph(g)
    raw.extend(store.raw.quads_for_pattern(None, None, None, None))
    return raw


def _compute_here(store: KnowledgeStore, text: str, name: str, validator: "Validator | None") -> Change:
    try:
        return compute(_copy_of(store), text, name=name, validator=validator)
    except FootprintMissed:
        return compute(_copy_of(store), text, everything=True, name=name, validator=validator)


def _checkpoint(path: str, work: str, n: int) -> ox.Store:
    """A private, writable copy of the on-disk store at ``path`` (a checkpoint of a read-only handle)."""
    target = Path(work) / f"copy{n}"
    delay = 0.01
    for attempt in range(10):
        try:
            with reading(Path(path), DEFAULT_WAIT):     # no writer may remove files while they are linked
                reader = ox.Store.read_only(str(path))
                try:
                    reader.backup(str(target))
                finally:
                    del reader
            return ox.Store(str(target))
        except (OSError, RuntimeError) as exc:   # a file compacted away meanwhile: again
            shutil.rmtree(target, ignore_errors=True)
            if attempt == 9:
                raise StoreError(f"cannot take a snapshot of the store at {path}: {exc}") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
    raise AssertionError("unreachable")  # pragma: no cover


def _portable(exc: BaseException) -> tuple[str, Any]:
    """An error as it can cross to the parent process."""
    if isinstance(exc, ValidationError):
        return "validation", exc.violations
    if isinstance(exc, DiagkgError):
        try:
            again = pickle.loads(pickle.dumps(exc))
            if type(again) is type(exc) and str(again) == str(exc):
                return "exception", exc
        except Exception:  # noqa: BLE001, S110 - not picklable as it is: sent as its kind and message
            pass
        for kind, cls in (("input", InputError), ("query", QueryError), ("store", StoreError)):
            if isinstance(exc, cls):
                return kind, str(exc)
        return "error", str(exc)
    return "store", f"the update's worker failed: {type(exc).__name__}: {exc}"


def worker_main() -> None:  # pragma: no cover - runs in the worker process
    """The worker process (``python -c "from diagkg.kg.updates import worker_main; worker_main()" WORK``):
    reads its request from ``WORK/request.pickle``, says ``started`` on standard output, works the
    update out on a checkpoint in ``WORK`` and leaves its answer in ``WORK/answer.pickle``."""
    work = Path(sys.argv[1])
    path, text, name = pickle.loads((work / "request.pickle").read_bytes())
    print("started", flush=True)
    answer: tuple[str, Any]
    try:
        try:
            answer = ("done", compute(_checkpoint(path, str(work), 0), text, name=name))
        except FootprintMissed:
            answer = ("done", compute(_checkpoint(path, str(work), 1), text, everything=True, name=name))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        answer = ("error", _portable(exc))
    (work / "answer.tmp").write_bytes(pickle.dumps(answer))
    (work / "answer.tmp").replace(work / "answer.pickle")


def _raise(error: tuple[str, Any]) -> None:
    kind, payload = error
    if kind == "validation":
        raise ValidationError(payload)
    if kind == "exception":
        raise payload
    cls = {"input": InputError, "query": QueryError}.get(kind, StoreError)
    raise cls(payload)


def _workdir(path: Path) -> Path:
    """Where the checkpoint goes: beside the store (same file system: hard links), else the temp folder."""
    try:
        return Path(tempfile.mkdtemp(prefix=".diagkg-update-", dir=path.parent))
    except OSError:
        return Path(tempfile.mkdtemp(prefix="diagkg-update-"))


def _compute_in_child(path: Path, text: str, name: str, timeout: float | None) -> Change:
    """Work the update out in a worker process, killed at ``timeout`` seconds (nothing written)."""
    work = _workdir(path)
    proc: subprocess.Popen[bytes] | None = None
    try:
        (work / "request.pickle").write_bytes(pickle.dumps((str(path), text, name)))
        with open(work / "worker.log", "wb") as log:
            proc = subprocess.Popen(  # noqa: S603 - this Python, this module
                [sys.executable, "-c", "from diagkg.kg.updates import worker_main; worker_main()", str(work)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                start_new_session=True)     # its own process group: the reasoner's Java goes with it
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_LIMIT)
        if not ready or proc.stdout.readline().strip() != b"started":
            raise StoreError("the update's worker process did not start; nothing was written"
                             + _tail(work / "worker.log"))
        try:                               # the time limit counts from here
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise UpdateTimeout(f"{name}: the update ran longer than the time limit of {timeout:g} s and was "
                                "stopped; nothing was written") from None
        answer = work / "answer.pickle"
        if not answer.is_file():
            raise StoreError("the update's worker process stopped without an answer; nothing was written"
                             + _tail(work / "worker.log"))
        kind, payload = pickle.loads(answer.read_bytes())
    finally:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)      # the worker and anything it started
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        shutil.rmtree(work, ignore_errors=True)
    if kind == "error":
        _raise(payload)
    assert isinstance(payload, Change)
    return payload


def _tail(log: Path) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return f" ({text[-500:]})" if text else ""


# ---------------------------------------------------------------------------
# applying it
# ---------------------------------------------------------------------------

def commit(store: KnowledgeStore, change: Change) -> bool:
    """Apply ``change`` under the write lock if the store still holds what it was worked out on."""
    with store.writing() as w:
        for key, want in change.expected.items():
            if digest(w, key) != want:
                return False
        if change.claims is not None:
            now = frozenset(h for h in held_claims(select_on(w, "graph-claims")) if h.graph not in change.revised)
            if now != change.claims:
                return False
        try:
            w.update(change.text)
        except (SyntaxError, ValueError) as exc:    # pragma: no cover - a change diagkg rendered itself
            raise QueryError(f"store-apply-change: {exc}") from None
        except OSError as exc:
            raise StoreError(f"cannot write the store at {store.location}: {exc}") from None
    store.touch()
    return True


def apply_update(store: KnowledgeStore, update: str | QueryFile, *, timeout: float | None = DEFAULT_TIMEOUT,
                 validator: "Validator | None" = None, **values: Any) -> UpdateReport:
    """Run a SPARQL update (text, a query-file name or a :class:`QueryFile`, rendered with
    ``values`` when it is a template) on ``store`` by the one write path (see the module).
    ``timeout``: seconds the update may take to work out (None: no limit; an in-memory store
    has none)."""
    q = resolve_query(update)
    if not q.is_update:
        raise QueryError(f"{q.name} is a query, not an update")
    text = q.render(**values) if q.is_template else q.text
    if store.read_only:
        raise StoreError(f"the store at {store.location} is open read-only")
    if store.path is None and not store.in_memory:       # a SPARQL server applies it by its own rules
        store.update(q, **values)
        return UpdateReport(remote=True)
    for attempt in range(1, ATTEMPTS + 1):
        if store.path is None:
            change = _compute_here(store, text, q.name, validator)
        else:
            change = _compute_in_child(store.path, text, q.name, timeout)
        change.report.attempts = attempt
        if not change.text or commit(store, change):
            return change.report
    raise UpdateConflict(f"{q.name}: other processes kept changing what the update reads while it was worked "
                         f"out ({ATTEMPTS} times); nothing was written, try again")


# ---------------------------------------------------------------------------
# removing graphs
# ---------------------------------------------------------------------------

def removal(raw: RawStore, targets: Sequence[ox.NamedNode]) -> list[ox.NamedNode]:
    """The graphs removing ``targets`` removes (a system takes its inferences with it), or
    :class:`~diagkg.errors.InputError` when the removal would break the store: a graph that
    is not there, diagkg's own graphs, a system that stored scenarios still run on."""
    missing = [g.value for g in targets if not raw.contains_named_graph(g)]
    if missing:
        # a name given bare (`remove OPT.4`) may be the end of a graph's name (scenario/OPT.4)
        ends = tuple("/" + m.removeprefix(graphs.BASE) for m in missing if m.startswith(graphs.BASE))
        meant = sorted(g.value for g in raw.named_graphs() if isinstance(g, ox.NamedNode)
                       and g.value.endswith(ends)) if ends else []
        raise InputError("no graph " + ", ".join(f"<{m}>" for m in missing) + " in the store (see `diagkg graphs`)"
                         + (f"; did you mean {', '.join(x.removeprefix(graphs.BASE) for x in meant[:3])}? "
                            "(or --scenario, --trajectory, --campaign with an id)" if meant else ""))
    own = [g.value for g in targets if g in (graphs.ONTOLOGY, graphs.SHAPES)]
    if own:
        raise InputError(f"<{own[0]}> is diagkg's own and every load refreshes it; it cannot be removed")
    out = list(dict.fromkeys(targets))
    claims = held_claims(select_on(raw, "graph-claims"))
    for g in list(out):
        for claim in (h for h in claims if h.graph == g.value and h.kind in ("system", "system key")):
            if claim.kind == "system key":
                inferred = graphs.inferred(claim.value)
                if raw.contains_named_graph(inferred) and inferred not in out:
                    out.append(inferred)
                continue
            left = [r["graph"] for r in select_on(raw, "scenarios-on-system", {"system": ox.NamedNode(claim.value)})
                    if ox.NamedNode(r["graph"]) not in out]
            if left:
                raise InputError(f"<{g.value}> describes a system that {len(left)} stored scenario(s) run on "
                                 f"(e.g. <{left[0]}>); remove them in the same command, or keep the system")
    return out


def remove_graphs(store: KnowledgeStore, targets: Sequence[ox.NamedNode]) -> list[ox.NamedNode]:
    """Remove ``targets`` and what goes with them (see :func:`removal`) in one transaction,
    checked again inside the write lock (another process may have loaded a scenario on a
    system meanwhile); returns what was removed."""
    planned = removal(store.raw, targets)

    def check(writer: RawStore) -> list[ox.NamedNode]:
        again = removal(writer, targets)
        return [g for g in again if g not in planned]

    store.write_graphs({}, drop=planned, check=check)
    return planned


__all__ = ["ATTEMPTS", "DEFAULT_TIMEOUT", "Change", "GraphChange", "UpdateReport", "apply_update", "commit", "compute",
           "removal", "remove_graphs", "render_change"]
