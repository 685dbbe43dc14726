"""A campaign's local worker processes, started again when one dies.

A session can kill the process that runs it without raising anything Python can catch: a native
crash in a simulator library on a circuit nobody tried before, the kernel's out-of-memory killer.
A process pool whose worker died is broken, and every session in flight on it is lost with it, so
:class:`LocalPool` starts a fresh pool, and the campaign (:func:`diagkg.evaluation.execution.run`)
runs the sessions lost one at a time: the one that kills its worker while running alone is the one
that did, and is recorded ``crashed`` (:class:`~diagkg.errors.WorkerDied` saying how the process
ended); the others are stored as usual. A Dask cluster finds the session itself (it runs a session
whose worker died on another worker, and gives up after a few: ``KilledWorker``, see :func:`died`).

A session that runs past a time limit (``diagkg evaluate --session-seconds S``: an assistant in an
endless loop, a solver that never returns) is stopped the same way (:class:`Watch`): the pool's
workers are ended, and the sessions in flight run again one at a time; the one that runs past the
limit alone is recorded ``crashed``, saying so.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
import time
from collections import deque
from collections.abc import Callable, Collection, Hashable
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from typing import Any, TypeVar

from ..errors import WorkerDied
from ..llm import shared_money
from .sessions import init_local_worker

REAPED = 2.0        # seconds to wait at most for a dead worker to be reaped, to say how it ended
T = TypeVar("T")
FOLDER = "diagkg-knowledge-"     # a campaign's folder in the temporary directory: FOLDER, owner(), '-'
IN_A_ROW = 3        # sessions in a row that kill their worker, none finishing between: the campaign stops


def ended(code: int | None) -> str:
    """How a process with exit code ``code`` ended, in words."""
    if code is None:
        return "it ended in a way not known"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"it exited with status {code}"


class Watch:
    """When each session in flight was first seen running (a pool marks a session running once it is
    on its way to a worker: it may wait there behind one other), to find those past ``seconds``."""

    POLL = 0.25          # seconds between two looks while a session has not been seen running yet

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.since: dict[cf.Future[Any], float] = {}

    def wait(self, inflight: Collection[cf.Future[Any]], longest: float | None) -> float | None:
        """How long to wait for a session to finish before looking again (``longest`` at most)."""
        if self.seconds is None:
            return longest
        now = time.monotonic()
        self.since = {f: t for f, t in self.since.items() if f in inflight}
        for f in inflight:
            if f not in self.since and f.running():
                self.since[f] = now
        due = min((t + self.seconds - now for t in self.since.values()), default=math.inf)
        if len(self.since) < len(inflight):
            due = min(due, self.POLL)
        due = max(due, 0.0)
        return due if longest is None else min(due, longest)

    def overdue(self, inflight: Collection[cf.Future[Any]]) -> list[cf.Future[Any]]:
        """The sessions in flight that have been running for longer than the limit."""
        if self.seconds is None:
            return []
        now = time.monotonic()
        return [f for f in inflight if f in self.since and not f.done() and now - self.since[f] > self.seconds]


def died(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a session's future, says the process running it died (a broken
    process pool, or Dask's ``KilledWorker``) rather than that the session failed."""
    return isinstance(exc, BrokenProcessPool) or type(exc).__name__ == "KilledWorker"


def _namespace() -> int:
    """This process's process-id namespace (0 where the system does not say)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def owner(pid: int | None = None) -> str:
    """What a campaign's folder is named by: its process id within its process namespace (a container that
    shares the temporary directory numbers its processes apart: a folder of another namespace is never taken
    for one whose process is gone)."""
    return f"{_namespace()}-{os.getpid() if pid is None else pid}"


def sweep_stale(where: str | None = None) -> list[str]:
    """Remove the folders of campaigns whose process is gone (killed with ``kill -9``: nothing of it ran to
    remove its own, and each kept a copy of the knowledge and its rounds, about 650 KB); the paths removed.
    A folder whose process still runs, of another process namespace, or that names no process is left alone."""
    base = where or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    space = _namespace()
    for name in names:
        found = re.fullmatch(re.escape(FOLDER) + r"(\d+)-(\d+)-\w+", name)
        if found is None or int(found.group(1)) != space or _alive(int(found.group(2))):
            continue
        path = os.path.join(base, name)
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True       # another user's process, or a number no process has: left alone
    return True


class LocalPool(cf.Executor):
    """``workers`` spawned processes, each given the campaign's knowledge ``data`` when it starts
    (:func:`~diagkg.evaluation.sessions.init_local_worker`); :meth:`restart` replaces a broken pool.

    Each process is a *lane* of its own (a one-process pool), so that a task goes to the process of its
    choosing (:meth:`place`): a session's first run on a scenario builds what later ones reuse (the
    circuit's solutions, the assistant's knowledge of the system: 25 ms against 10 for neuro-symbolic),
    and two processes taking turns on every scenario built it all twice. A process that dies breaks its
    lane; :meth:`stop` ends them all, so that the sessions in flight come back as lost together, as they
    did from one pool."""

    WINDOW = 256          # tasks at the head of the queue looked through for one of the lane's scenarios

    def __init__(self, stack: ExitStack, workers: int, data: bytes, registered: dict[str, Any] | None = None,
                 allowance: float | None = None, money: shared_money.SharedMoney | None = None):
        self.stack = stack
        self.workers = workers
        self.registered = registered or {}        # assistants registered at run time: the workers register them too
        # the knowledge goes to each worker in a file it reads, not in the initializer's arguments: those are
        # written to a worker through a pipe before it starts, and the write of megabytes waited forever for a
        # worker that died while starting (a script that runs a campaign without ``if __name__ ==
        # "__main__":``: the worker imports the script, which starts a campaign again, which Python refuses)
        sweep_stale()
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{FOLDER}{owner()}-"))
        self.data = os.path.join(folder, "knowledge.nq")
        # where each worker writes the rounds of the session it runs as they are played: a session that kills
        # its worker (or is stopped past its time) keeps them, their costs and false removals with them
        self.journal = os.path.join(folder, "rounds")
        os.mkdir(self.journal)
        # what the workers' sessions may spend together, with a cost limit (diagkg.llm.shared_money): in the run's
        # money journal where it has one (diagkg.evaluation.money_journal), else in this folder
        self.money = money
        if money is None and allowance is not None:
            self.money = shared_money.create(folder, allowance)
        with open(self.data, "wb") as f:
            f.write(data)
        self.ran = False                          # whether a worker of this campaign ever ran a task
        self.processes: dict[int, Any] = {}      # pid -> multiprocessing.Process of the pool's workers
        self.lanes = [self._start() for _ in range(workers)]
        self.flight: list[set[cf.Future[Any]]] = [set() for _ in range(workers)]     # each lane's tasks in flight
        self.seen: list[set[Hashable]] = [set() for _ in range(workers)]    # the keys each lane's process ran

    def _start(self) -> cf.ProcessPoolExecutor:
        pool = cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=init_local_worker,
                                      initargs=(os.getpid(), self.data, self.registered, self.money))
        self.stack.callback(pool.shutdown, wait=True, cancel_futures=True)
        return pool

    def place(self, queue: deque[T], key: Callable[[T], Hashable]) -> tuple[T, int]:
        """Take a task off ``queue`` for the least busy lane: the first (of the :data:`WINDOW` at its head) whose
        ``key`` that lane's process ran before, else the first whose key no lane ran, else the head."""
        lane = self._idlest()
        mine, anyone = self.seen[lane], set().union(*self.seen)
        fresh: int | None = None
        for i, task in enumerate(itertools.islice(queue, self.WINDOW)):
            k = key(task)
            if k in mine:
                break
            if fresh is None and k not in anyone:
                fresh = i
        else:
            i = fresh if fresh is not None else 0
        task = queue[i]
        del queue[i]
        mine.add(key(task))
        return task, lane

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        return self.submit_to(None, fn, *args, **kwargs)

    def submit_to(self, lane: int | None, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        """Submit ``fn`` to ``lane`` (the least busy if None)."""
        if lane is None:
            lane = self._idlest()
        pool = self.lanes[lane]
        future = pool.submit(fn, *args, **kwargs)
        self.flight[lane].add(future)
        if not self.ran:
            future.add_done_callback(self._ran)
        # the pool's processes, kept to say how one ended once the pool is broken (the pool forgets them)
        self.processes.update(getattr(pool, "_processes", None) or {})
        return future

    def _idlest(self) -> int:
        """The lane with the fewest tasks in flight (the first of them)."""
        for futures in self.flight:
            futures.difference_update([f for f in futures if f.done()])
        return min(range(self.workers), key=lambda lane: len(self.flight[lane]))

    def _ran(self, future: cf.Future[Any]) -> None:
        if not future.cancelled() and not isinstance(future.exception(), BrokenProcessPool):
            self.ran = True

    def how(self) -> str:
        """How the pool's worker ended that did not end well (once the pool is broken); ends the others."""
        # the pool fails its futures as soon as it sees a worker gone, then ends the others. Ended here too:
        # a worker it started while breaking escapes that, and would wait for work forever (and the pool's
        # shutdown with it). Then wait for them all to be gone: one that crashed may still be writing its
        # core dump
        self.stop()
        # (the pool's thread reaps them too: the one that reaps a process second is not told its exit code,
        # which the other then sets on the process both hold)
        deadline = time.monotonic() + REAPED
        while (left := [p for p in self.processes.values() if p.exitcode is None]) and time.monotonic() < deadline:
            left[0].join(0.05)
        for p in left:
            p.kill()
        codes = [p.exitcode for p in self.processes.values() if p.exitcode not in (None, 0)]
        # the pool's own and this method's ending of the others: the signal least likely to tell
        codes.sort(key=lambda code: code == -signal.SIGTERM)
        return ended(codes[0] if codes else None)

    def stop(self) -> None:
        """End every worker still running (a session ran past its time limit; or a lane broke, see
        :meth:`how`): every lane breaks, and the sessions in flight come back as lost with it."""
        for p in self.processes.values():
            if p.exitcode is None:
                p.terminate()

    def restart(self) -> None:
        """Fresh lanes for the broken ones, checked to start: a pool that cannot start its workers is no
        session's fault (:class:`~diagkg.errors.WorkerDied`)."""
        for pool in self.lanes:
            pool.shutdown(wait=True, cancel_futures=True)
        self.processes = {}
        self.lanes = [self._start() for _ in range(self.workers)]
        self.flight = [set() for _ in range(self.workers)]
        self.seen = [set() for _ in range(self.workers)]
        try:
            for lane in range(self.workers):
                self.submit_to(lane, os.getpid).result()
        except BrokenProcessPool:
            if not self.ran:
                raise WorkerDied(f"the campaign's worker processes cannot be started ({self.how()}, before running "
                                 "anything: its error is printed above). A Python script that runs a campaign with "
                                 "worker processes must start it under `if __name__ == \"__main__\":` (each worker "
                                 "imports the script)") from None
            raise WorkerDied(f"the campaign's worker processes cannot be started again ({self.how()}); what "
                             "finished is stored") from None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for pool in self.lanes:
            pool.shutdown(wait=wait, cancel_futures=cancel_futures)
