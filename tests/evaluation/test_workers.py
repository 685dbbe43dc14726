"""A campaign's local workers are given the knowledge once, when they start; a task names it by its
digest instead of carrying it."""

from __future__ import annotations

import hashlib

import pytest

from diagkg.evaluation import sessions


def test_a_task_names_the_knowledge_a_worker_was_started_with(torch_copy):
    data = sessions.knowledge_bytes(torch_copy, [9101, 9102])
    assert len(data) > 10_000
    sessions.init_worker(data)                    # what the pool's initializer does in each worker
    digest = hashlib.sha256(data).hexdigest()
    store = sessions.worker_store(digest)
    assert store is sessions.worker_store(data)   # the same store, by the bytes or by their digest
    assert store.select("scenario-index")
    with pytest.raises(RuntimeError, match="started without it"):
        sessions.worker_store("0" * 64)


def test_a_scenario_stays_with_the_worker_process_that_ran_it():
    """A local pool gives a task to the process that ran its scenario before (it holds the scenario's circuit
    solved and the assistant's knowledge of the system); the others get a scenario nobody ran yet."""
    import collections
    import concurrent.futures as cf
    import os
    from contextlib import ExitStack

    from diagkg.evaluation.pool import LocalPool

    with ExitStack() as stack:
        local = LocalPool(stack, 2, b"")
        queue = collections.deque((scenario, seed) for scenario in "ab" for seed in range(4))
        ran: dict[str, set[int]] = collections.defaultdict(set)
        futures = []
        while queue:
            task, lane = local.place(queue, lambda t: t[0])
            futures.append((task, local.submit_to(lane, os.getpid)))
        cf.wait([f for _, f in futures])
        for (scenario, _seed), future in futures:
            ran[scenario].add(future.result())
        assert sorted(t for t, _ in futures) == [(s, n) for s in "ab" for n in range(4)]
        assert len(ran["a"]) == len(ran["b"]) == 1 and ran["a"] != ran["b"]     # each on one process, not the same
        assert os.getpid() not in ran["a"] | ran["b"]
        # with nothing of its own left, an idle process takes the head of the queue: no process waits
        queue.extend([("a", 9), ("a", 10)])
        busy = cf.Future[int]()                       # the lane that ran "a" is busy
        lane_a = next(i for i, seen in enumerate(local.seen) if "a" in seen)
        local.flight[lane_a].add(busy)
        assert local.place(queue, lambda t: t[0]) == (("a", 9), 1 - lane_a)
        local.restart()
        assert local.seen == [set(), set()]           # fresh processes hold nothing
