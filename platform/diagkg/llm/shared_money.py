"""What the sessions of one campaign may spend together, across its worker processes.

A campaign with a cost limit (``diagkg evaluate --cost-limit``) gives each new session what remains as its
own ``cost_limit``. With ``--workers N``, N sessions and more are in flight at once, each given the same
remainder, so together they could spend several times what was left. The campaign's local worker processes
therefore share one small file (in the campaign's folder): before a call, the client reserves its estimated
cost there (the largest the call can be, as :meth:`~diagkg.llm.client.LLMClient._check_budget` estimates it)
and is refused, as by its own limit, when what the campaign's sessions spent and reserved in this run would
pass what the campaign had left when the run began; after the call, the reservation becomes what the call
cost. Calls take turns on the file (``flock``) for a few microseconds, not for the call. A call cut short by
its worker's death leaves its reservation (the campaign then stops a little early, never late). The file also
holds what the trajectories the run stored spent: on a store on disk it is the run's money journal, kept where
a run killed with sessions in flight leaves it (:mod:`diagkg.evaluation.money_journal`), and a run in the
campaign's own process holds its calls there too.

Installed in each worker by :func:`install` (:func:`diagkg.evaluation.sessions.init_local_worker`); a
session run in the campaign's own process uses the run's journal where it has one (:func:`using`). A Dask cluster's workers share no
folder: there the totals are one Dask ``Variable`` on the scheduler, changed under one Dask ``Lock``
(:class:`ClusterMoney`, a round trip to the scheduler a call), given with each task (:func:`using`: a cluster
may serve two campaigns at once); the campaign's process copies them into its money journal as they change
(:meth:`SharedMoney.mirror`), so that a kill of that process loses little.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["ClusterMoney", "SharedMoney", "create", "create_at", "current", "install", "unstored", "using"]

CLUSTER_WAIT = 60.0      # seconds a worker waits for the scheduler's lock or variable before it gives up


class _Totals:
    """Reserving, settling and reading the totals, each in one turn (:meth:`_turn`) on what the sessions share;
    where they are kept, and how turns are taken, is the subclass's (:meth:`_held`)."""

    allowance: float

    def _held(self) -> contextlib.AbstractContextManager[tuple[Callable[[], tuple[float, float]],
                                                               Callable[[float, float], None]]]:
        """Hold the totals alone: give (read, write) of (spent, reserved) for the turn."""
        raise NotImplementedError

    def _turn(self, change: tuple[float, float] | None, fits: float | None = None) -> tuple[float, float] | None:
        """In one turn: read (spent, reserved); with ``fits``, None (nothing written) when spent + reserved + ``fits``
        passes the allowance; else add ``change`` and return the totals before it."""
        with self._held() as (read, write):
            spent, reserved = read()
            if fits is not None and spent + reserved + fits > self.allowance + 1e-12:
                return None
            if change is not None:
                write(spent + change[0], max(0.0, reserved + change[1]))
            return spent, reserved

    def reserve(self, estimate: float) -> bool:
        """Hold ``estimate`` for a call about to be sent; False (nothing held) when it does not fit."""
        return self._turn((0.0, estimate), fits=estimate) is not None

    def settle(self, estimate: float, money: float) -> None:
        """The call held ``estimate`` and cost ``money``."""
        self._turn((money, -estimate))

    def totals(self) -> tuple[float, float]:
        """What this run's sessions spent, and hold reserved."""
        found = self._turn(None)
        assert found is not None
        return found


@dataclass(frozen=True)
class SharedMoney(_Totals):
    """The file at ``path`` holding what this run's sessions spent and hold reserved, and ``allowance``, what the
    campaign had left when the run began. The file also holds what the trajectories the run stored spent
    (:meth:`stored`): where it outlives a run that was killed, what that run spent in sessions it never stored is
    the difference (:func:`unstored`)."""

    path: str
    allowance: float

    @contextlib.contextmanager
    def _held(self) -> Iterator[tuple[Callable[[], tuple[float, float]], Callable[[float, float], None]]]:
        """Under the file's lock."""
        with self._locked() as (values, write_all):
            yield (lambda: (values[0], values[1])), (lambda spent, reserved: write_all(spent, reserved, values[2]))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[tuple[list[float], Callable[[float, float, float], None]]]:
        """The file's three numbers (spent, reserved, stored), and how to write them, under its lock."""
        with open(self.path, "r+", encoding="ascii") as f:
            fcntl.flock(f, fcntl.LOCK_EX)

            def write(spent: float, reserved: float, stored: float) -> None:
                f.seek(0)
                f.write(_line(spent, reserved, stored))      # over the last line, as long: no moment empty
                f.flush()

            try:
                yield _numbers(f.read()), write
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def stored(self, money: float) -> None:
        """Trajectories spending ``money`` in all were stored (committed to the store)."""
        with self._locked() as (values, write):
            write(values[0], values[1], values[2] + money)

    def mirror(self, spent: float, reserved: float) -> None:
        """Hold ``spent`` and ``reserved`` as the run's totals, kept elsewhere (a Dask cluster's, on its scheduler:
        this file is then the run's money journal only, see :func:`diagkg.evaluation.money_journal.mirrored`)."""
        with self._locked() as (values, write):
            write(spent, reserved, values[2])


def _line(spent: float, reserved: float, stored: float) -> str:
    """The file's one line, always as long (a float's repr is 24 characters at most): written over the last one in
    one write, it is never seen (nor left by a process killed in the write) empty or half long."""
    return f"{spent!r:<24} {reserved!r:<24} {stored!r:<24}\n"


def _numbers(text: str) -> list[float]:
    words = text.split()
    values = [float(w) for w in words[:3]] if len(words) in (2, 3) else []
    return values + [0.0] * (3 - len(values))


def unstored(path: str) -> float | None:
    """What the run whose file is ``path`` spent (and held reserved: calls whose worker died before they were
    settled) beyond what the trajectories it stored spent; None when there is no such file."""
    try:
        with open(path, encoding="ascii") as f:
            fcntl.flock(f, fcntl.LOCK_SH)
            spent, reserved, stored = _numbers(f.read())
    except FileNotFoundError:
        return None
    return max(0.0, spent + reserved - stored)


@dataclass(frozen=True)
class ClusterMoney(_Totals):
    """The same totals for the workers of a Dask cluster: a ``Variable`` named ``name`` on the scheduler holding
    ``[spent, reserved]``, changed under the ``Lock`` of the same name (released by the scheduler if its worker
    dies holding it). Made by :func:`on_cluster`; sent to the workers with each task."""

    name: str
    allowance: float

    @contextlib.contextmanager
    def _held(self) -> Iterator[tuple[Callable[[], tuple[float, float]], Callable[[float, float], None]]]:
        """Under the scheduler's lock."""
        distributed: Any = importlib.import_module("distributed")      # untyped: used through Any
        lock = distributed.Lock(self.name)
        if not lock.acquire(timeout=CLUSTER_WAIT):
            raise TimeoutError(f"the campaign's shared money on the Dask scheduler ({self.name}) stayed locked for "
                               f"{CLUSTER_WAIT:g} s")
        var = distributed.Variable(self.name, client=distributed.get_client())

        def read() -> tuple[float, float]:
            spent, reserved = (float(v) for v in var.get(timeout=CLUSTER_WAIT))
            return spent, reserved

        try:
            yield read, lambda spent, reserved: var.set([spent, reserved])
        finally:
            lock.release()


def on_cluster(client: Any, name: str, allowance: float) -> ClusterMoney:
    """The shared totals of a run of a campaign that had ``allowance`` left, on the scheduler of ``client`` (a
    Dask client) under ``name`` (the run's own); :func:`off_cluster` takes them off."""
    distributed: Any = importlib.import_module("distributed")
    distributed.Variable(name, client=client).set([0.0, 0.0])
    return ClusterMoney(name, allowance)


def off_cluster(client: Any, money: ClusterMoney) -> None:
    """Take ``money``'s variable off the scheduler (a shared one outlives the campaign)."""
    distributed: Any = importlib.import_module("distributed")
    with contextlib.suppress(Exception):      # the cluster may be gone already: nothing is left to take off
        distributed.Variable(money.name, client=client).delete()


def create(folder: str, allowance: float) -> SharedMoney:
    """The shared file of a run of a campaign that had ``allowance`` left, in ``folder`` (the campaign's)."""
    return create_at(os.path.join(folder, "money"), allowance)


def create_at(path: str, allowance: float) -> SharedMoney:
    """The shared file of a run of a campaign that had ``allowance`` left, at ``path`` (made anew)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="ascii") as f:
        f.write(_line(0.0, 0.0, 0.0))
    return SharedMoney(path, allowance)


_INSTALLED: SharedMoney | None = None
_TASK = threading.local()         # the shared totals of the task this thread runs (a Dask worker's)


def install(shared: SharedMoney | None) -> None:
    """Make ``shared`` the file every LLM client of this (worker) process reserves its calls in."""
    global _INSTALLED
    _INSTALLED = shared


@contextlib.contextmanager
def using(shared: _Totals | None) -> Iterator[None]:
    """Reserve the calls of the sessions this thread runs meanwhile in ``shared`` (a Dask task's)."""
    before = getattr(_TASK, "money", None)
    _TASK.money = shared
    try:
        yield
    finally:
        _TASK.money = before


def current() -> _Totals | None:
    """The shared totals of the campaign this thread's session works for, if any."""
    task: _Totals | None = getattr(_TASK, "money", None)
    return task if task is not None else _INSTALLED
