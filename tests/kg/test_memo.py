"""One cache discipline (diagkg.kg.memo): bounded memos of derived data, keyed by versions."""

from __future__ import annotations

import pytest

from diagkg.kg.memo import Memo, clear_all, memos


def test_a_memo_keeps_the_most_recently_used_within_its_limit():
    memo: Memo[int] = Memo("test squares", 2)
    made: list[int] = []

    def square(n: int) -> int:
        made.append(n)
        return n * n

    assert memo.get_or(("v1", 2), lambda: square(2)) == 4
    assert memo.get_or(("v1", 3), lambda: square(3)) == 9
    assert memo.get_or(("v1", 2), lambda: square(2)) == 4          # kept: not made again, now the most recent
    assert memo.get_or(("v1", 4), lambda: square(4)) == 16         # full: the least recently used (3) goes
    assert ("v1", 3) not in memo and ("v1", 2) in memo and len(memo) == 2
    assert memo.get_or(("v2", 2), lambda: square(2)) == 4          # another version: another entry
    assert made == [2, 3, 4, 2]
    assert (memo.hits, memo.misses) == (1, 4)
    with pytest.raises(ValueError):
        Memo("empty", 0)


def test_every_derived_cache_of_the_package_is_a_memo_and_can_be_emptied():
    import diagkg.agents.neurosymbolic_knowledge  # noqa: F401 - each module declares its memos
    import diagkg.env.access  # noqa: F401
    import diagkg.env.service  # noqa: F401
    import diagkg.env.workspace  # noqa: F401
    import diagkg.runs.ledger  # noqa: F401

    names = {m.name for m in memos()}
    assert {"simulators", "scenarios", "views", "affordances", "neuro-symbolic knowledge", "ledger openings",
            "ledger reports", "ledger probes"} <= names
    memo: Memo[str] = Memo("test clear", 4)
    memo.put("k", "v")
    clear_all()
    assert len(memo) == 0 and all(len(m) == 0 for m in memos())
