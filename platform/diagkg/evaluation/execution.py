"""Running a campaign: plan the missing slots, run them (in this process, in
worker processes, or on a Dask cluster), store the trajectories as they come
back (group commit, :mod:`diagkg.evaluation.writer`: each trajectory graph,
which carries its campaign entry, its slot's tally and the failed trajectory
it replaces, if any, in one transaction with the rest of its batch; the store's
lock is taken per commit only), close batches and decide convergence.

Only the campaign's process writes; workers return N-Quads. Worker processes
end when the campaign's process ends, kill -9 included
(:func:`~diagkg.evaluation.sessions.exit_with_parent`). A session that kills
its worker process is recorded ``crashed`` and the campaign goes on
(:mod:`diagkg.evaluation.pool`).
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import pickle
import sys
import time
import uuid
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pyoxigraph as ox

from ..env.workspace import resolve_scenario
from ..errors import ClusterLost, InputError, WorkerDied
from ..kg.compaction import compact_if_grown, disk_bytes
from ..llm import shared_money
from ..llm.shared_money import SharedMoney
from . import campaign as cp
from . import money_journal, run_lease
from . import tally as tl
from .budget import Spending, Stop, stop_quads
from .campaign import Campaign, Task
from .pool import IN_A_ROW, LocalPool, Watch, died
from .sessions import Outcome, died_outcome, knowledge_bytes, knowledge_store, run_remote, run_task
from .writer import CampaignWriter, in_graph

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore

EXECUTORS = ("local", "dask")


@dataclass
class Progress:
    """What a progress display shows; handed to ``on_progress`` after each event."""

    scenarios: int = 0            # assistant × scenario groups in the campaign
    scenarios_done: int = 0
    batches: int = 0              # finished batches
    planned: int = 0              # trajectories the campaign holds or will hold (grows with adaptive batches)
    stored: int = 0               # trajectories the campaign holds
    ran: int = 0                  # sessions run by this call
    successes: int = 0
    ends: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    last: str = ""


@dataclass
class Summary:
    campaign: str
    progress: Progress
    states: dict[str, int]
    money: float = 0.0                # what the campaign's sessions and its judge spent on language models
    cost_limit: float | None = None
    stopped: Stop | None = None       # why this run stopped before the campaign was complete
    commits: int = 0                  # the writer's transactions (each holds many trajectories)
    longest_commit: float = 0.0       # seconds one commit took at most, waiting for the store's lock included
    longest_hold: float = 0.0         # seconds one commit held the store's lock at most
    compacted: float = 0.0            # seconds spent compacting the store at the end (0: not compacted)

    def to_json(self) -> dict[str, Any]:
        p = self.progress
        return {"campaign": self.campaign, "trajectories": p.stored, "ran": p.ran, "successes": p.successes,
                "ends": dict(sorted(p.ends.items())), "batches": p.batches, "scenarios": p.scenarios,
                "scenarios_done": p.scenarios_done, "states": dict(sorted(self.states.items())),
                "seconds": round(p.seconds, 3), "llm_money": round(self.money, 8), "cost_limit": self.cost_limit,
                "stopped": self.stopped.to_json() if self.stopped else None, "commits": self.commits,
                "longest_commit": round(self.longest_commit, 3), "longest_hold": round(self.longest_hold, 3),
                "compacted": round(self.compacted, 3)}


class _Inline(cf.Executor):
    """Runs each session at once in this process (reading the knowledge as the campaign started: a copy in
    memory, or the campaign's own store where it is in memory). Each scenario is
    read once per run of the campaign, as a worker reads the knowledge once when it starts (on a store
    on disk, finding a scenario again took milliseconds a session)."""

    def __init__(self, store: KnowledgeStore, money: SharedMoney | None = None):
        self.store = store
        self.money = money          # the run's money journal, where its calls are held and settled
        self.scenarios: dict[int, Scenario] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        try:
            task: Task = args[-1]
            scenario = self.scenarios.get(task.scenario)
            if scenario is None:
                scenario = self.scenarios[task.scenario] = resolve_scenario(self.store, task.scenario)
            with shared_money.using(self.money):
                future.set_result(run_task(self.store, task, scenario))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


class _OnCluster(cf.Executor):
    """A Dask client's executor whose sessions reserve their LLM calls in the campaign's shared totals on the
    scheduler (:class:`~diagkg.llm.shared_money.ClusterMoney`, sent with each task), with a cost limit."""

    def __init__(self, inner: cf.Executor, money: Any):
        self.inner, self.money = inner, money

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        return self.inner.submit(fn, *args, **kwargs, money=self.money)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.inner.shutdown(wait=wait, cancel_futures=cancel_futures)


def check_execution(workers: int, kind: str = "local", session_seconds: float | None = None) -> None:
    """Refuse settings a campaign cannot run with (before anything is written)."""
    if kind not in EXECUTORS:
        raise InputError(f"unknown executor {kind!r}; use one of {', '.join(EXECUTORS)}")
    if workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if session_seconds is not None and not session_seconds > 0:
        raise InputError(f"--session-seconds must be more than 0, got {session_seconds:g}")
    if session_seconds is not None and kind != "local":
        raise InputError("--session-seconds stops sessions in local worker processes only (--executor local); a "
                         "Dask cluster's workers cannot be stopped one session at a time")


def _registered(assistants: Iterable[str], kind: str) -> dict[str, Any]:
    """The campaign's assistants registered at run time in this process (``registry.register``, a script's or
    a notebook's own), for the local workers to register too (their sessions crashed, not knowing them);
    refused where no worker could have them: on a Dask cluster, or when defined where a worker cannot
    import them (a notebook's or a console's own class, a lambda)."""
    from ..agents import registry

    found = registry.registered(assistants)
    for name, factory in found.items():
        fix = (f"run the campaign in this process (workers=1, no session time limit), or install it as a plug-in "
               f"(an entry point of the {registry.GROUP} group)")
        if kind != "local":
            raise InputError(f"the assistant {name!r} was registered in this process (registry.register): the "
                             f"cluster's workers do not have it; {fix}")
        main = sys.modules.get("__main__")
        where = getattr(factory, "__module__", None)
        try:
            pickle.dumps(factory)
            if where == "__main__" and not getattr(main, "__file__", None):
                raise pickle.PicklingError("it is defined in an interactive session, which a worker cannot import")
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise InputError(f"the assistant {name!r} was registered in this process (registry.register) and "
                             f"cannot be sent to the worker processes ({exc}); {fix}") from None
    return found


def _executor(stack: ExitStack, store: KnowledgeStore, campaign: Campaign, workers: int, kind: str,
              scheduler: str | None, notify: Callable[[str], None] | None,
              session_seconds: float | None = None, allowance: float | None = None,
              journal: SharedMoney | None = None) -> tuple[cf.Executor, Any, int]:
    """The executor, the knowledge argument its tasks take, and how many sessions to keep in flight (a
    worker process even for one worker when a session's time is limited: only a process can be stopped);
    ``allowance``: what a campaign with a cost limit has left, which the sessions in flight share (a local pool's
    in a file, the run's ``journal`` where it has one, a cluster's on its scheduler)."""
    check_execution(workers, kind, session_seconds)
    if kind == "local" and workers == 1 and session_seconds is None:
        # the knowledge as the campaign starts, as a worker gets it: a system another process updates meanwhile
        # does not reach the sessions still to run (944 of 2,250 ran on the new battery, recorded as the old one)
        private = store.path is None and isinstance(store.raw, ox.Store)      # in memory: nobody else writes it
        return _Inline(store if private else knowledge_store(knowledge_bytes(store, campaign.config.scenarios)),
                       journal), None, 1
    registered = _registered(campaign.config.assistants, kind)
    data = knowledge_bytes(store, campaign.config.scenarios)
    if kind == "local":
        # each worker gets the knowledge once, when it starts; tasks name it by its digest (sending the
        # megabytes with every task cost each session a few milliseconds on both ends of the pipe)
        return (LocalPool(stack, workers, data, registered, allowance, journal), hashlib.sha256(data).hexdigest(),
                workers * 2)
    import importlib

    try:
        distributed: Any = importlib.import_module("distributed")     # untyped: used through Any
    except ImportError:  # pragma: no cover - a core dependency
        raise InputError("--executor dask needs dask[distributed] (pip install 'dask[distributed]')") from None
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    if scheduler:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    else:
        # the scheduler serves HTTP (metrics) even without a dashboard: on a port the system picks, as two
        # clusters starting at once both found 8787 free and one then failed to bind it
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        stack.callback(cluster.close)
        client = Client(cluster)
        if notify:
            notify(f"started a local Dask cluster with {workers} worker processes")
    stack.callback(client.close)
    slots = sum(client.nthreads().values()) or workers
    # every worker, and every one that joins later (a worker restarted after a session killed it), loads the
    # knowledge as it joins; tasks name it by its digest (see diagkg.evaluation.cluster)
    from .cluster import Knowledge, plugin_name

    digest = hashlib.sha256(data).hexdigest()
    client.register_plugin(Knowledge(data), name=plugin_name(digest))
    stack.callback(_unregister, client, plugin_name(digest))
    money = None
    if allowance is not None:     # the sessions in flight on the cluster share what the campaign has left
        money = shared_money.on_cluster(client, f"diagkg-money-{uuid.uuid4().hex}", allowance)
        stack.callback(shared_money.off_cluster, client, money)
        if journal is not None:   # the scheduler's totals, copied where a kill of this process leaves them
            money_journal.mirrored(stack, money, journal)
    return _OnCluster(client.get_executor(pure=False), money), digest, slots * 2


def _unregister(client: Any, name: str) -> None:
    """Take the campaign's knowledge off a cluster that may outlive the campaign (a shared scheduler)."""
    try:
        client.unregister_worker_plugin(name)
    except Exception:  # noqa: BLE001 - the cluster may be gone already: nothing is left to take off
        pass


def run(store: KnowledgeStore, campaign: Campaign, *, workers: int = 1, executor: str = "local",
        scheduler: str | None = None, retry_failed: bool = False, cost_limit: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        notify: Callable[[str], None] | None = None, session_seconds: float | None = None) -> Summary:
    """Run what ``campaign`` still lacks and return a summary; one run of a campaign at a time on a machine
    (:func:`~diagkg.evaluation.money_journal.running`) and on the store, from any machine
    (:func:`~diagkg.evaluation.run_lease.holding`): a second is refused with :class:`~diagkg.errors.CampaignRunning`.

    With ``session_seconds``, a session running longer is stopped and recorded ``crashed`` (in worker
    processes: :mod:`diagkg.evaluation.pool`).

    With ``cost_limit``, each new session may spend only what the campaign's finished sessions and its judge
    left of it (:mod:`diagkg.evaluation.budget`); once it is spent nothing new is scheduled and the stop is
    recorded."""
    with money_journal.running(store, campaign), run_lease.holding(store, campaign, notify):
        return _run(store, campaign, workers, executor, scheduler, retry_failed, cost_limit, on_progress, notify,
                    session_seconds)


def _run(store: KnowledgeStore, campaign: Campaign, workers: int, executor: str, scheduler: str | None,
         retry_failed: bool, cost_limit: float | None, on_progress: Callable[[Progress], None] | None,
         notify: Callable[[str], None] | None, session_seconds: float | None) -> Summary:
    cfg = campaign.config
    t0 = time.perf_counter()
    size = disk_bytes(store)
    cp.check_versions(store, campaign)
    rows = tl.source_rows(store, campaign)            # one pass: the slots done and the tallies afresh
    done = {(r["assistant"], int(r["scenario"]), int(r["seed"])): cp.Recorded(r["trajectory"], int(r["batch"]), r["end"])
            for r in rows}
    tallies = tl.from_rows(campaign, rows)
    tl.write_all(store, tallies)
    money_journal.reckon(store, campaign, notify)      # a killed run's sessions in flight: their money counted
    spending = Spending.read(store, campaign, cost_limit)
    if cost_limit is not None and notify:
        notify(f"LLM cost limit {cost_limit:g}: the campaign's finished sessions spent {spending.sessions:.4f} and "
               f"its judge {spending.judge:.4f}, {spending.remaining:.4f} remains")
    closed = cp.batches(store, campaign)
    prog = Progress(scenarios=len(cfg.assistants) * len(cfg.scenarios))
    for rec in done.values():
        prog.ends[rec.end] = prog.ends.get(rec.end, 0) + 1
    prog.stored = len(done)
    prog.successes = prog.ends.get("success", 0) + prog.ends.get("success_no_hypothesis", 0)
    prog.batches = sum(len(v) for v in closed.values())

    queue: deque[Task] = deque()
    open_batches: dict[tuple[str, int, int], int] = {}    # (assistant, scenario, batch) -> sessions outstanding
    to_close: list[tuple[str, int, int]] = []
    groups = [(a, n) for a in cfg.assistants for n in cfg.scenarios]
    for a, n in groups:
        history = closed.get((a, n), [])
        if history and history[-1]["state"] in cp.FINAL_STATES:
            prog.scenarios_done += 1
        else:
            _open_batch(cfg, campaign, a, n, len(history), done, queue, open_batches, to_close, retry_failed)
        if retry_failed:     # slots of closed batches that failed: run again
            for b in range(len(history)):
                for seed in cfg.seeds(b):
                    old = done.get((a, n, seed))
                    if old is not None and old.end in cp.RETRY_ENDS:
                        queue.append(Task(campaign.iri, a, cfg.config_for(a), n, seed, b, replaces=old.trajectory))
    prog.planned = prog.stored + sum(1 for t in queue if not t.replaces)
    cp.check_ready(store, dict.fromkeys((t.assistant, t.scenario) for t in queue))   # a resume: before any session

    def report(last: str = "") -> None:
        prog.seconds = time.perf_counter() - t0
        prog.last = last
        if on_progress:
            on_progress(prog)

    report()
    from ..env.scenarios import ScenarioCatalog

    # (a Dask cluster's sessions share their totals on its scheduler, copied into the journal: money_journal.mirrored)
    journal = money_journal.open_journal(store, campaign, spending.remaining)
    writer = CampaignWriter(store, tallies, notify=notify, on_stored=journal.stored if journal is not None else None)
    catalog = ScenarioCatalog(store)        # read once (one per scenario cost a second on 135 before any worker ran)
    iris = {n: catalog.iri(n) for n in cfg.scenarios}

    def close_journal(_kind: object, _error: object, _tb: object) -> None:
        spending.unstored += money_journal.close(store, campaign, journal, notify)

    with ExitStack() as stack:
        # (callbacks run last pushed first: the journal is reckoned once what finished is committed)
        stack.push(close_journal)
        stack.push(lambda _kind, error, _tb: writer.finish(error))    # what finished is committed, also on an error
        for key in to_close:
            _close(writer, campaign, key, iris, done, closed, open_batches, queue, prog, retry_failed)
        pool, data, capacity = _executor(stack, store, campaign, workers, executor, scheduler, notify, session_seconds,
                                         spending.remaining, journal)
        inflight: dict[cf.Future[Outcome], Task] = {}
        lost: deque[Task] = deque()     # in flight when a worker process died: run again, one at a time
        in_a_row: list[str] = []        # the sessions that killed their worker since one last finished
        watch = Watch(session_seconds)
        late: set[tuple[str, int, int]] = set()     # the slots of the sessions stopped past the time limit
        alone: set[tuple[str, int, int]] = set()    # the slots of the sessions run again alone (from lost)

        def take(task: Task, outcome: Outcome) -> None:
            previous = done[task.slot].end if task.replaces else ""
            store_outcome(writer, outcome, done, tallies, spending)
            prog.ran += 1
            if previous:
                prog.ends[previous] -= 1
            else:
                prog.stored += 1
            prog.ends[outcome.end] = prog.ends.get(outcome.end, 0) + 1
            prog.successes = prog.ends.get("success", 0) + prog.ends.get("success_no_hypothesis", 0)
            key = (task.assistant, task.scenario, task.batch)
            if key in open_batches:
                open_batches[key] -= 1
                if open_batches[key] == 0:
                    _close(writer, campaign, key, iris, done, closed, open_batches, queue, prog, retry_failed)
            report(f"{task.assistant} on scenario {task.scenario} seed {task.seed}: {outcome.end}")

        def send(source: deque[Task]) -> bool:
            """Hand a task of ``source`` to a worker (in a local pool, one of a scenario the worker ran before,
            where one is near the head); False (the task back at the front of ``source``) when the pool broke
            since the last look: a worker died."""
            lane: int | None = None
            if isinstance(pool, LocalPool):
                task, lane = pool.place(source, _scenario_of)
            else:
                task = source.popleft()
            if source is queue:
                task = spending.allow(task)
            try:
                inflight[pool.submit_to(lane, run_remote, data, task, pool.journal) if isinstance(pool, LocalPool)
                         else pool.submit(run_remote, data, task)] = task
            except BrokenProcessPool:
                source.appendleft(task)
                return False
            late.discard(task.slot)
            if source is lost:
                alone.add(task.slot)
            return True

        def after_death(dead: list[Task]) -> None:
            _after_death(pool, store, campaign, dead, inflight, lost, in_a_row, take, notify, late, session_seconds,
                         alone)

        while (queue and not spending.exhausted()) or inflight or lost:
            sent = True
            if lost:
                if not inflight:
                    sent = send(lost)
            else:
                while sent and queue and not spending.exhausted() and len(inflight) < capacity:
                    sent = send(queue)
            if not sent:
                after_death([])
                continue
            if inflight:
                finished, _ = cf.wait(list(inflight), timeout=watch.wait(inflight, writer.time_left()),
                                      return_when=cf.FIRST_COMPLETED)
            else:
                finished = set()
            dead: list[Task] = []
            for fut in [f for f in inflight if f in finished]:        # (in the order they were sent)
                task = inflight.pop(fut)
                if fut.cancelled():      # (a Dask cluster whose scheduler is gone cancels what it was running)
                    raise ClusterLost(f"the cluster cancelled the campaign's sessions (is its scheduler gone?); "
                                      f"what finished is stored: resume with diagkg evaluate --resume {campaign.id}")
                if (exc := fut.exception()) is not None and died(exc):
                    dead.append(task)
                    continue
                in_a_row.clear()
                take(task, fut.result())       # (a session's own error comes back as a crashed trajectory)
            if dead:
                after_death(dead)
            elif (overdue := watch.overdue(inflight)) and isinstance(pool, LocalPool):
                late.update(inflight[f].slot for f in overdue)
                if notify:
                    notify(f"{len(overdue)} session(s) ran longer than {session_seconds:g} s: stopping the worker "
                           "processes")
                pool.stop()
                after_death([])
            writer.commit_if_due()
        stopped = spending.stop(len(queue)) if queue and spending.exhausted() else None
        if stopped is not None:
            writer.records(stop_quads(campaign, stopped))
        if isinstance(pool, LocalPool):
            pool.shutdown(wait=False)      # the workers end while the last batch is committed (joined as the stack ends)
        writer.commit()
    compacted = compact_if_grown(store, size, writer.committed, notify)
    report()
    states: dict[str, int] = {}
    for history in cp.batches(store, campaign).values():
        states[history[-1]["state"]] = states.get(history[-1]["state"], 0) + 1
    return Summary(campaign.id, prog, states, spending.spent, cost_limit, stopped, writer.commits,
                   writer.longest_commit, writer.longest_hold, compacted)


def _journal(pool: cf.Executor) -> str | None:
    """Where a local pool's workers write the rounds they play (:func:`~diagkg.evaluation.sessions.journal_file`)."""
    return pool.journal if isinstance(pool, LocalPool) else None


def _after_death(pool: cf.Executor, store: KnowledgeStore, campaign: Campaign, dead: list[Task],
                 inflight: dict[cf.Future[Outcome], Task], lost: deque[Task], in_a_row: list[str],
                 take: Callable[[Task, Outcome], None], notify: Callable[[str], None] | None,
                 late: set[tuple[str, int, int]], session_seconds: float | None,
                 alone: set[tuple[str, int, int]]) -> None:
    """The process running each of ``dead`` died (:mod:`diagkg.evaluation.pool`). On a Dask cluster each was on
    workers that died each time it was tried: it is run again ``alone`` (through ``lost``), and recorded
    ``crashed`` if it was alone already. A local pool is broken with every session in flight: those that
    finished first are taken, and the rest are ``lost`` (run again one at a time on a fresh pool), unless one
    alone was in flight: that one killed its worker, and is recorded ``crashed``. Stops the campaign
    (:class:`~diagkg.errors.WorkerDied`) once :data:`~diagkg.evaluation.pool.IN_A_ROW` sessions in a row did,
    with what finished stored."""
    if isinstance(pool, LocalPool):
        pool.stop()       # (a process's death breaks its own lane: every lane is ended, as one pool ended them all)
        for fut in list(inflight):           # the pool fails them all (those that finished first aside)
            task = inflight.pop(fut)
            if (exc := fut.exception()) is not None and died(exc):
                dead.append(task)
            else:
                in_a_row.clear()
                take(task, fut.result())
        how = pool.how()
        pool.restart()
        if not dead:
            return          # (a worker died with no session on it)
        if len(dead) > 1:
            lost.extend(dead)
            if notify:
                notify(f"a worker process died ({how}) with {len(dead)} sessions in flight: running them again "
                       "one at a time to find the one that killed it")
            return
        culprits = [(dead[0], f"the session ran longer than the limit of {session_seconds:g} s (--session-seconds) "
                              "and its worker process was stopped" if dead[0].slot in late else
                              f"the worker process running this session died ({how})")]
    else:
        # the scheduler counts a worker's death against every session on it, those waiting behind the one that
        # killed it too (a cluster of one worker told several innocent sessions KilledWorker): each is run again
        # alone, and the one that kills its workers alone is the culprit
        again = [task for task in dead if task.slot not in alone]
        if again:
            lost.extend(again)
            if notify:
                notify(f"{len(again)} session(s) were on workers that died each time they were tried: running each "
                       "again alone to find the one that killed them")
        culprits = [(task, "the cluster's workers running this session died each time it was tried, also alone")
                    for task in dead if task.slot in alone]
    for task, why in culprits:
        where = f"{task.assistant} on scenario {task.scenario} seed {task.seed}"
        if notify:
            notify(f"{where}: {why}; recorded as crashed (--retry-failed runs it again)")
        take(task, died_outcome(store, task, WorkerDied(why), _journal(pool)))
        in_a_row.append(where)
    if len(in_a_row) >= IN_A_ROW:
        raise WorkerDied(f"{len(in_a_row)} sessions in a row killed the worker process running them, none finishing "
                         f"between ({'; '.join(in_a_row)}): each is recorded as crashed and what finished is stored. "
                         f"Resume with: diagkg evaluate --resume {campaign.id} (--retry-failed runs the crashed ones "
                         "again)")


def _open_batch(cfg: cp.CampaignConfig, campaign: Campaign, assistant: str, number: int, batch: int,
                done: dict[tuple[str, int, int], cp.Recorded], queue: deque[Task],
                open_batches: dict[tuple[str, int, int], int], to_close: list[tuple[str, int, int]],
                retry_failed: bool) -> int:
    """Queue the missing sessions of a batch; returns how many."""
    missing = 0
    for seed in cfg.seeds(batch):
        rec = done.get((assistant, number, seed))
        if rec is None:
            queue.append(Task(campaign.iri, assistant, cfg.config_for(assistant), number, seed, batch))
            missing += 1
        elif retry_failed and rec.end in cp.RETRY_ENDS:
            queue.append(Task(campaign.iri, assistant, cfg.config_for(assistant), number, seed, batch, replaces=rec.trajectory))
            missing += 1
    key = (assistant, number, batch)
    open_batches[key] = missing
    if missing == 0:
        to_close.append(key)
    return missing


def store_outcome(writer: CampaignWriter, outcome: Outcome, done: dict[tuple[str, int, int], cp.Recorded],
                  tallies: tl.Tallies, spending: Spending) -> None:
    """Hand the writer one transaction's worth: the trajectory (with its campaign entry and what the
    failed session it replaces spent) and its slot's tally in, the failed one it replaces out. The
    worker read what the tally and the money need off the trajectory; its N-Quads go to the writer as they are
    when every line is in the trajectory's graph (:func:`~diagkg.evaluation.writer.in_graph`; Oxigraph parses them
    as it loads them: nothing a worker sends reaches the store's update as text), else parsed and all put in it."""
    graph = ox.NamedNode(outcome.graph)
    data = outcome.nquads
    if not in_graph(data, graph):       # (never from this package's workers: every quad put in the trajectory's graph)
        data = ox.serialize([ox.Quad(q.subject, q.predicate, q.object, graph)
                             for q in ox.parse(data, format=ox.RdfFormat.N_QUADS)], format=ox.RdfFormat.N_QUADS) or b""
    replaced: ox.NamedNode | None = None
    task = outcome.task
    if task.replaces:
        from ..kg import graphs

        replaced = graphs.named("trajectory", task.replaces.rsplit("/", 1)[1])
    iri = _trajectory_iri(outcome.graph)
    spent = [ox.Quad(t.subject, t.predicate, t.object, graph)
             for t in spending.count(iri, outcome.money, outcome.cause, task.replaces)]
    if spent:
        data += ox.serialize(spent, format=ox.RdfFormat.N_QUADS) or b""
    money, prior = spending.by_trajectory[iri]       # with what the failed session it replaces spent
    slot = tallies.put(task.assistant, task.scenario, outcome.scenario_iri, replace(outcome.entry, money=money + prior))
    writer.trajectory(graph, data, slot, replaced, money=outcome.money)
    done[task.slot] = cp.Recorded(iri, task.batch, outcome.end)


def _scenario_of(task: Task) -> tuple[str, int]:
    """What a worker that ran ``task`` holds ready for the next of its kind: the assistant on the scenario."""
    return task.assistant, task.scenario


def _trajectory_iri(graph: str) -> str:
    from ..runs.trajectory import BASE

    return BASE + graph.rsplit("/", 1)[1]


def _close(writer: CampaignWriter, campaign: Campaign, key: tuple[str, int, int], iris: dict[int, str],
           done: dict[tuple[str, int, int], cp.Recorded], closed: dict[tuple[str, int], list[dict[str, Any]]],
           open_batches: dict[tuple[str, int, int], int], queue: deque[Task], prog: Progress,
           retry_failed: bool) -> None:
    """A batch is complete: record the scenario's state after it; open the next batch if it continues."""
    assistant, number, batch = key
    open_batches.pop(key, None)
    cfg = campaign.config
    if cfg.protocol == "fixed":
        quads = cp.batch_quads(campaign, assistant, iris[number], number, batch, "complete")
        state = "complete"
    else:
        from .protocol import assess_group

        writer.commit()         # the assessment reads the batch's trajectories from the store
        verdict, state = assess_group(writer.store, campaign, assistant, iris[number], batch)
        quads = cp.batch_quads(campaign, assistant, iris[number], number, batch, state, verdict.reason,
                               verdict.execution_ari, verdict.intent_ari, verdict.noise_floor,
                               verdict.execution_labels, verdict.notes)
    writer.records(quads)
    closed.setdefault((assistant, number), []).append({"batch": batch, "state": state})
    prog.batches += 1
    if state in cp.FINAL_STATES:
        prog.scenarios_done += 1
        return
    added = _open_batch(cfg, campaign, assistant, number, batch + 1, done, queue, open_batches, [], retry_failed)
    prog.planned += added
    if added == 0:        # already run (cannot happen for a fresh batch, but keeps the state consistent)
        _close(writer, campaign, (assistant, number, batch + 1), iris, done, closed, open_batches, queue, prog,
               retry_failed)

