"""Fair shares of the query workers: one client cannot hold them all.

A SPARQL query (or a graph read) waits, on the event loop and holding no
thread, first for a turn of its client (:attr:`Scheduler.per_client` queries of
one client run at once, by default one; the client is its address, and whether
it holds the token), then for a free worker; it then runs in a thread of a
pool as large as the worker pool, blocked on its worker's pipe. Other clients'
queries take the other workers meanwhile, and the routes that never go through
the workers (the JSON API, the page) are not held up at all. A query that
waits longer than the time limit for its turn is answered 503 (``PoolBusy``).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from .sparql_pool import PoolBusy, QueryPool, Reply, Request


class Scheduler:
    """Runs :class:`~diagkg.server.sparql_pool.Request` s on a :class:`QueryPool`, fairly."""

    def __init__(self, pool: Callable[[], QueryPool], *, workers: int, per_client: int, wait: float):
        self._pool = pool
        self.workers = workers
        self.per_client = max(1, per_client)
        self.wait = wait
        self._free = asyncio.Semaphore(workers)
        self._turns: dict[str, tuple[asyncio.Semaphore, int]] = {}
        self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="diagkg-query")

    def running(self, client: str) -> int:
        """How many requests of ``client`` are running or waiting now."""
        return self._turns.get(client, (None, 0))[1]

    async def run(self, client: str, work: Request) -> Reply:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait
        turn, users = self._turns.get(client) or (asyncio.Semaphore(self.per_client), 0)
        self._turns[client] = (turn, users + 1)
        try:
            await self._acquire(turn, deadline, f"this client's {self.per_client} query turn(s) stayed taken")
            try:
                await self._acquire(self._free, deadline, f"all {self.workers} query workers stayed busy")
                try:
                    return await loop.run_in_executor(self._threads, self._pool().run, work)
                finally:
                    self._free.release()
            finally:
                turn.release()
        finally:
            sem, users = self._turns[client]
            if users <= 1:
                del self._turns[client]
            else:
                self._turns[client] = (sem, users - 1)

    async def _acquire(self, sem: asyncio.Semaphore, deadline: float, why: str) -> None:
        left = deadline - asyncio.get_running_loop().time()
        try:
            await asyncio.wait_for(sem.acquire(), max(left, 0.001))
        except TimeoutError:
            raise PoolBusy(f"{why} for {self.wait:g} s") from None

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
