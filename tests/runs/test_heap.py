"""The heap of a process that runs session after session (diagkg.runs.heap): what a session left
behind is collected, what lives on is frozen out of the collector's way, and what was frozen and
has since become garbage in a cycle is collected at the next walk of everything frozen."""

from __future__ import annotations

import dataclasses
import gc
import weakref
from collections.abc import Iterator

import pytest

from diagkg.evaluation.campaign import Task
from diagkg.evaluation.sessions import run_task
from diagkg.runs import heap


class Node:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def frozen(obj: object) -> bool:
    """Whether ``obj`` is in the collector's permanent generation (no generation lists it)."""
    return gc.is_tracked(obj) and not any(o is obj for o in gc.get_objects())


@pytest.fixture()
def settling(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(heap, "FREEZE", True)
    monkeypatch.setattr(heap._Settled, "times", 0)
    monkeypatch.setattr(heap, "EVERY_SECONDS", 0.0)
    gc.unfreeze()            # nothing frozen by an earlier test of this process
    try:
        yield
    finally:
        gc.unfreeze()        # the rest of the suite runs with the collector as Python sets it


def test_settling_collects_what_was_left_behind_and_freezes_what_lives(settling: None) -> None:
    left = Node()
    gone = weakref.ref(left)
    del left
    kept = Node()
    heap.settle()
    assert gone() is None                      # collected before anything was frozen, not frozen with it
    assert frozen(kept)
    assert gc.get_freeze_count() > 0


def test_what_was_frozen_and_became_garbage_is_collected_at_the_next_walk(settling: None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "UNFREEZE_EVERY", 3)
    node = Node()
    ref = weakref.ref(node)
    heap.settle()                              # 1: frozen
    assert frozen(node)
    del node
    heap.settle()                              # 2: garbage, but frozen: not walked
    assert ref() is not None
    heap.settle()                              # 3: everything frozen walked again
    assert ref() is None


def test_settling_waits_its_interval(settling: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A settling within EVERY_SECONDS of the last does nothing (sessions of a few milliseconds are not
    each followed by a collection)."""
    monkeypatch.setattr(heap, "EVERY_SECONDS", 3600.0)
    monkeypatch.setattr(heap._Settled, "last", float("-inf"))
    heap.settle()
    node = Node()
    gone = weakref.ref(node)
    del node
    gc.disable()             # no collection but the settling's own may free the cycle
    try:
        heap.settle()
        assert gone() is not None and heap._Settled.times == 1
    finally:
        gc.enable()


def test_no_freezing_when_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "FREEZE", False)
    gc.unfreeze()
    node = Node()
    heap.settle()
    assert gc.get_freeze_count() == 0 and not frozen(node)


def test_a_campaign_session_on_a_users_system_settles_the_heap_first(settling: None, torch_copy) -> None:
    """A campaign's session (run_task, as a worker runs it) on the torch written in the tests: the
    heap is settled before it, and what the first session left behind is collected before the second."""
    task = Task(campaign="urn:test:campaign", assistant="model-based", config={}, scenario=9101, seed=0, batch=0)
    first = run_task(torch_copy, task)
    assert first.end == "success"
    assert gc.get_freeze_count() > 0           # the knowledge and what the session's set-up made, frozen
    left = Node()                              # garbage the first session might have left in a cycle
    gone = weakref.ref(left)
    del left
    second = run_task(torch_copy, dataclasses.replace(task, seed=1))
    assert gone() is None                      # collected before the second session, not frozen
    assert (second.end, second.cost) == (first.end, first.cost)
