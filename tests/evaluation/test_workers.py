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
