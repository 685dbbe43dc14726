"""One campaign session, wherever it runs: in the campaign's process, in a
worker process, or on a Dask worker.

A worker holds an in-memory copy of the knowledge a campaign needs (the
ontology, the systems with their inferences, the scenarios: N-Quads shipped
once per worker), runs the session, and returns the trajectory as N-Quads
bytes; the campaign's single writer stores it. A session that raises is
recorded as a ``crashed`` trajectory: a failure, never a dropped sample.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import pyoxigraph as ox

from ..kg import graphs
from ..kg.vocab import DK
from ..llm.records import FailureCause
from .budget import session_money
from .campaign import XSD, Task
from .tally import Entry, entry_of

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore
    from ..llm.shared_money import ClusterMoney, SharedMoney
    from ..runs.trajectory import SessionRecord


@dataclass(frozen=True)
class Outcome:
    """What a worker sends back: the slot, its trajectory graph as N-Quads, headline values, and
    what the campaign's writer keeps of it, read off its triples here (the writer never reads
    them: it hands them to the store)."""

    task: Task
    graph: str
    nquads: bytes
    end: str
    cost: float
    scenario_iri: str
    entry: Entry                             # the session as its slot's tally keeps it
    money: float = 0.0                       # what the session spent on language models
    cause: FailureCause | None = None        # why a language model stopped it, if one did


def knowledge_graphs(store: KnowledgeStore, numbers: Iterable[int]) -> list[ox.NamedNode]:
    """What a worker needs to run sessions on these scenarios: the ontology, the scenarios and their
    systems, each system's inferences and its stored optimal policy (the optimal assistant's prior,
    which the runner shows only to the assistants allowed it)."""
    from .campaign import used_graphs

    out = [graphs.ONTOLOGY]
    for g in used_graphs(store, numbers):
        out.append(g)
        if graphs.kind_of(g) == "system":
            key = g.value.rsplit("/", 1)[1]
            out += [k for k in (graphs.inferred(key), graphs.named("optimum", key)) if store.raw.contains_named_graph(k)]
    return list(dict.fromkeys(out))


def knowledge_bytes(store: KnowledgeStore, numbers: Iterable[int]) -> bytes:
    """The knowledge of :func:`knowledge_graphs` as N-Quads (after making sure every system has its inferences)."""
    from ..env.scenarios import ScenarioCatalog
    from ..kg.loading import ensure_inferences

    numbers = list(numbers)
    catalog = ScenarioCatalog(store)
    for key in sorted({catalog.entry(n).key for n in numbers}):
        ensure_inferences(store, key, None)
    return store.dump(knowledge_graphs(store, numbers))


_WORKER: dict[str, KnowledgeStore] = {}
WORKER_KNOWLEDGE = 2          # knowledge stores a worker process keeps, the oldest given up first


def worker_store(data: bytes | str) -> KnowledgeStore:
    """An in-memory store holding ``data``, one per worker process and knowledge; ``data`` may also be
    the digest of knowledge the worker was given when it started (:func:`init_local_worker`), so that a
    task does not carry megabytes through the pipe."""
    if isinstance(data, str):
        if data not in _WORKER:
            raise RuntimeError(f"this worker holds no knowledge {data[:12]}…: it was started without it")
        return _WORKER[data]
    digest = hashlib.sha256(data).hexdigest()
    if digest not in _WORKER:
        while len(_WORKER) >= WORKER_KNOWLEDGE:        # (a Dask worker may serve two campaigns at once)
            _WORKER.pop(next(iter(_WORKER)))
        _WORKER[digest] = knowledge_store(data)
    return _WORKER[digest]


def knowledge_store(data: bytes) -> KnowledgeStore:
    """An in-memory store holding the knowledge ``data`` (:func:`knowledge_bytes`)."""
    from ..kg.store import KnowledgeStore

    store = KnowledgeStore.memory()
    store.add_quads(q for q in ox.parse(data, format=ox.RdfFormat.N_QUADS) if isinstance(q, ox.Quad))
    return store


def init_worker(data: bytes) -> None:
    """ProcessPoolExecutor initializer: load the knowledge once."""
    worker_store(data)


def init_local_worker(parent: int, path: str, registered: dict[str, Any] | None = None,
                      money: SharedMoney | None = None) -> None:
    """The local process pool's initializer: end with the campaign's process (:func:`exit_with_parent`),
    hold the knowledge in the file ``path``, which tasks then name by its digest, know the assistants
    the campaign's process registered at run time (``registered``: name -> factory), and reserve each LLM
    call in the campaign's shared money file (``money``, with a cost limit: :mod:`diagkg.llm.shared_money`)."""
    from ..agents import registry
    from ..llm import shared_money

    shared_money.install(money)

    exit_with_parent(parent)
    for name, factory in (registered or {}).items():
        registry.register(name, factory)
    with open(path, "rb") as f:
        init_worker(f.read())


PR_SET_PDEATHSIG = 1          # linux/prctl.h
WATCH_EVERY = 0.5             # seconds between two looks at the parent (the portable fallback)


def exit_with_parent(parent: int) -> None:
    """Worker-process initializer: the worker ends when the campaign's process ends, however it
    ends (kill -9 included), instead of waiting forever for work. On Linux the kernel kills it
    when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``); everywhere a watchdog thread
    looks at the parent's pid every :data:`WATCH_EVERY` seconds."""
    import signal
    import threading
    import time

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):     # no prctl: the watchdog alone
            pass
    if os.getppid() != parent:                # the parent died before the line above
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_EVERY)
        os._exit(1)

    threading.Thread(target=watch, name="diagkg-parent-watch", daemon=True).start()


def journal_file(folder: str | None, task: Task) -> Path | None:
    """Where a worker writes the rounds of ``task``'s session as they are played (one JSON line each), in
    ``folder`` (a local pool's: :class:`~diagkg.evaluation.pool.LocalPool`); None without one."""
    if folder is None:
        return None
    return Path(folder) / (hashlib.sha256(json.dumps([task.campaign, *task.slot]).encode()).hexdigest()[:32] + ".jsonl")


def journal_rounds(folder: str | None, task: Task) -> list[dict[str, Any]]:
    """The rounds ``task``'s session wrote into its journal before its worker died (none without one)."""
    path = journal_file(folder, task)
    if path is None or not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:        # the last line, cut off by the death
            break
    return out


def run_remote(data: bytes | str, task: Task, journal: str | None = None, money: ClusterMoney | None = None) -> Outcome:
    """A worker's entry point (process pool or Dask); ``journal``: the folder of :func:`journal_file`; ``money``:
    where a Dask worker's session reserves its LLM calls (:mod:`diagkg.llm.shared_money`; a local worker's
    was installed when it started)."""
    from ..llm import shared_money

    with shared_money.using(money):
        return run_task(worker_store(data), task, journal=journal_file(journal, task))


def run_task(store: KnowledgeStore, task: Task, scenario: Scenario | None = None, journal: Path | None = None) -> Outcome:
    """Run one session of a campaign and return its trajectory (nothing is written to ``store``);
    ``scenario``: the task's, read already; ``journal``: where each round is written as it is played, so that a
    session that kills its worker keeps its rounds (:func:`died_outcome`)."""
    from ..env.workspace import resolve_scenario
    from ..runs import heap
    from ..runs.exec_boundary import whole_session_in_this_thread
    from ..runs.runner import run_session

    heap.settle()        # what the last session left collected, and what the sessions share frozen out of the way
    if scenario is None:
        scenario = resolve_scenario(store, task.scenario)
    record: SessionRecord | None
    played: list[dict[str, Any]] = []        # what a crashed session's record keeps: the rounds it played, at their cost
    try:      # (a run again starts afresh)
        written = open(journal, "w", encoding="utf-8") if journal is not None else None
    except OSError:       # the journal is a fallback: one that cannot be opened never stops the session either
        written = None

    def on_round(entry: Any) -> None:
        played.append(entry.to_dict())
        if written is not None:
            try:      # the journal is a fallback: a round it cannot hold never stops the session
                written.write(json.dumps(played[-1], default=str) + "\n")
                written.flush()
            except (OSError, TypeError, ValueError):
                pass

    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    try:
        with whole_session_in_this_thread():     # an exec: program dies with this thread (a Dask worker's too)
            result = run_session(scenario, task.assistant, seed=task.seed, config=task.config, store=store,
                                 record=False, on_round=on_round)
        record = result.record
        assert record is not None
    except Exception as exc:  # noqa: BLE001 - any failure of a session is recorded, not dropped
        record = crashed_record(scenario, task, exc, rounds=played, started=started, wall_time=time.perf_counter() - t0)
    finally:
        if written is not None and journal is not None:
            written.close()
            journal.unlink(missing_ok=True)
    return outcome_of(store, task, scenario, record)


def died_outcome(store: KnowledgeStore, task: Task, exc: BaseException, journal: str | None = None) -> Outcome:
    """The ``crashed`` trajectory of a session whose worker process died running it (``exc`` says how),
    made by the campaign's process, with the rounds the session wrote into its ``journal`` (a local pool's
    folder, :func:`journal_file`) before it died: an assistant that killed its worker, or hung past the time
    limit, after a costly wrong guess read 0 minutes and no false removals. A Dask worker keeps no journal:
    its rounds are lost with it."""
    from ..env.workspace import resolve_scenario

    scenario = resolve_scenario(store, task.scenario)
    return outcome_of(store, task, scenario, crashed_record(scenario, task, exc, rounds=journal_rounds(journal, task)))


def outcome_of(store: KnowledgeStore, task: Task, scenario: Scenario, record: SessionRecord) -> Outcome:
    """What the campaign's writer is sent for ``record``, ``task``'s trajectory: its N-Quads (checked as
    :class:`~diagkg.runs.trajectory.CheckPolicy` says) and what the tallies and the money read off it."""
    from ..env.actions import action_catalogue
    from ..runs import trajectory

    record.extra.extend(summary_triples(record, scenario, task))
    catalogue = {a: spec.iri for a, spec in action_catalogue(store).items()}
    quads = trajectory.to_quads(record, catalogue)
    policy = trajectory.CheckPolicy.from_env()
    if policy is trajectory.CheckPolicy.ALWAYS or (
            policy is trajectory.CheckPolicy.FIRST and (task.assistant, scenario.key) not in _CHECKED):
        _CHECKED.add((task.assistant, scenario.key))
        trajectory.validate(quads, f"trajectory {record.trajectory_id}")
    data = ox.serialize(quads, format=ox.RdfFormat.N_QUADS) or b""
    triples = [q.triple for q in quads]
    money, cause = session_money(trajectory.BASE + record.graph.value.rsplit("/", 1)[1], triples)
    return Outcome(task, record.graph.value, data, record.end, float(record.total_cost), scenario.iri,
                   entry_of(triples, task.seed, record.end), money, cause)


_CHECKED: set[tuple[str, str]] = set()


def crashed_record(scenario: Scenario, task: Task, exc: BaseException, *, rounds: Sequence[dict[str, Any]] = (),
                   started: datetime | None = None, wall_time: float = 0.0) -> SessionRecord:
    """The ``crashed`` trajectory of ``task``'s session, with the ``rounds`` it played before it raised ``exc`` (an
    assistant that crashed after two measurements read 0 minutes, the cheapest of the report, without them)."""
    from ..runs.keeping import crashed_record as crashed

    return crashed(scenario, task.assistant, dict(task.config), task.seed, exc, rounds=rounds, started=started,
                   wall_time=wall_time)


def healthy_replacements(rounds: Iterable[Mapping[str, Any]]) -> int:
    """How many healthy parts a session replaced: the targets of its ``replace_component`` steps that the
    service agent found not differing from their description when replaced (the round's ``healthy``, as
    the false removals count them). A fuse the faults blew is no healthy part, though no fault was
    injected into it (counted against the injected faults, replacing it was a healthy replacement)."""
    count = 0
    for r in rounds:
        healthy = set(r.get("healthy") or ())
        for e in r.get("executed", []):
            if e.get("action") == "replace_component":
                count += sum(1 for t in e.get("targets", []) if t.split(".", 1)[0] in healthy)
    return count


def summary_triples(record: SessionRecord, scenario: Scenario, task: Task) -> list[ox.Triple]:
    """The campaign link and the trajectory's summary (counts), for its own graph."""
    traj = ox.NamedNode(record.iri)
    session = ox.NamedNode(record.iri + "#session")
    actions = sum(1 for r in record.rounds if r.get("kind") == "action")
    hyps = [r for r in record.rounds if r.get("kind") == "hypothesis"]
    correct = sum(1 for r in hyps if r.get("verdict") == "correct")
    healthy = healthy_replacements(record.rounds)

    def integer(n: int) -> ox.Literal:
        return ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer"))

    return [ox.Triple(ox.NamedNode(task.campaign), ox.NamedNode(DK.hasTrajectory), traj),
            ox.Triple(traj, ox.NamedNode(DK.batchIndex), integer(task.batch)),
            ox.Triple(session, ox.NamedNode(DK.assistantName), ox.Literal(task.assistant)),
            ox.Triple(session, ox.NamedNode(DK.actionCount), integer(actions)),
            ox.Triple(session, ox.NamedNode(DK.hypothesisCount), integer(len(hyps))),
            ox.Triple(session, ox.NamedNode(DK.correctHypothesisCount), integer(correct)),
            ox.Triple(session, ox.NamedNode(DK.healthyReplacementCount), integer(healthy))]
