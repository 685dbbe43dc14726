"""What makes one prediction (rollback + step on a model's shadow session) cheaper must not
change it: a session that rolls back again and again (its state graph written lazily, the
reset to the fault snapshot and a verified repair remembered per state) reports, costs,
ends and leaves exactly the state that a fresh session does, and once synced its store's
state graph holds that state.

On the torch written in tests/support/torch.py (not shipped).
"""

from __future__ import annotations

import dataclasses

import pyoxigraph as ox
import pytest

import diagkg
from diagkg.env import effects, verification
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.scenarios import restore, state_quads
from diagkg.errors import SessionError
from diagkg.kg import graphs
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import read_state

from ..support.torch import torch_memory_store


@pytest.fixture(scope="module")
def torch_store(tmp_path_factory) -> KnowledgeStore:
    return torch_memory_store(tmp_path_factory.mktemp("prediction-shortcuts"))


def _steps(session) -> list[Action | Hypothesis]:
    """Every one-target action of the catalogue on every component, and a hypothesis per component."""
    out: list[Action | Hypothesis] = []
    for cid in sorted(session.sk.components):
        for spec in sorted(session.catalogue.values(), key=lambda s: s.id):
            if spec.target_count == 1 and not spec.parameter and spec.target_kind in ("component", "any"):
                out.append(Action(spec.id, (cid,)))
        out.append(Hypothesis({cid}))
    return out


def _report(session, step) -> tuple:
    try:
        obs, cost, terminated, truncated, info = session.step(step)
    except SessionError as e:  # pragma: no cover - a step a session refuses in both
        return ("refused", str(e))
    return obs, cost, terminated, truncated, info, session.state()


@pytest.mark.parametrize("scenario", ["TORCH.1", "TORCH.2"])
def test_a_rolled_back_session_answers_as_a_fresh_one(torch_store, scenario):
    shadow = diagkg.make(scenario, store=torch_store, budget=10**6)
    shadow.reset(seed=0)
    steps = _steps(shadow)
    repairs = [s for s in steps if isinstance(s, Hypothesis) or
               (isinstance(s, Action) and shadow.catalogue[s.action].repair)]
    points = [([], shadow.checkpoint())]
    for first in repairs[:3]:             # points after a repair: rolled back to in turn with the start
        shadow.rollback(points[0][1])
        shadow.step(first)
        if shadow.end is None:
            points.append(([first], shadow.checkpoint()))
    # after each repair, every ninth step (nine is prime to the steps per part: every kind of step comes up)
    # (from the start; from the points after a repair, each step alone: every pair from every point took 20 s)
    sequences = [[s] for s in steps] + [[r, s] for r in repairs for s in steps[::9]]
    assert len(sequences) > 20 and len(points) > 1
    checked = expected_checks = 0
    for sequence in sequences:
        for prefix, point in points if len(sequence) == 1 else points[:1]:
            expected_checks += 2
            with diagkg.make(scenario, store=torch_store, budget=10**6) as fresh:     # closed: memory reused
                fresh.reset(seed=0)
                for step in prefix:
                    fresh.step(step)
                expected = []
                for step in sequence:
                    if fresh.end is not None:
                        break
                    expected.append(_report(fresh, step))
            for _ in range(2):                # the second time, from what was remembered
                shadow.rollback(point)
                got = [_report(shadow, step) for step in sequence[:len(expected)]]
                assert got == expected, (prefix, sequence)
                assert shadow.end == fresh.end and shadow.total_cost == fresh.total_cost
                assert shadow.repaired == fresh.repaired
                # the store stays the source of truth: synced, the state graph holds the state
                shadow.sync()
                assert frozenset(state_quads(shadow.store, shadow.state_graph)) == shadow.state_key()
                checked += 1
    assert checked == expected_checks >= 2 * len(sequences)


@pytest.mark.parametrize("scenario", ["TORCH.1", "TORCH.2"])
def test_a_tried_repair_reads_as_the_repair_on_a_copy(torch_store, scenario):
    """verification.repaired_state tries the repair on the session's own state graph (through the
    effect memo) and sets it back: it reads as the same repair template run on a copy of the
    graph, and leaves the session's state as it was."""
    session = diagkg.make(scenario, store=torch_store, budget=10**6)
    session.reset(seed=0)
    parts = sorted(session.sk.components)
    tried = 0
    for _ in range(2):                                # the second time, as remembered
        for part in parts:
            before = session.state_key()
            got = verification.repaired_state(session, [part])
            assert session.state_key() == before
            session.sync()
            assert frozenset(state_quads(session.store, session.state_graph)) == before
            copy = graphs.named("state", "copy-for-test")
            restore(session.store, copy, [ox.Quad(q.subject, q.predicate, q.object, copy) for q in before])
            verification.make_repair(session, part, copy)
            expected = read_state(session.store, copy, session.sk,
                                  frozenset(state_quads(session.store, copy)))
            session.store.raw.remove_graph(copy)
            session.store.touch()
            assert got == expected, part
            tried += got != session.state()
    assert tried > 0                                   # some repair changed the state


def _fault_worlds(store: KnowledgeStore):
    """The model-based assistant's shadow session and its worlds on the torch: every single fault
    of the catalogue on every part (each world's state has its fault injected)."""
    from ..support.worlds import set_up_worlds

    assistant = set_up_worlds(store, "TORCH.1")
    worlds = assistant.worlds
    points = [started[0] for c in assistant.space.singles if (started := worlds.start(c)) is not None]
    assert worlds.shadow is not None and len(points) > 5
    return worlds.shadow, points


def test_an_undoing_template_on_a_part_as_new_changes_nothing(torch_store):
    """effects.UNDOING: on a component that does not differ from its nominal description
    (still_broken), a repair template changes nothing that is read of the state, so it is not
    run; on a broken one it does change the state. Run on a copy of every world's state."""
    shadow, points = _fault_worlds(torch_store)
    seen = {True: 0, False: 0}
    for point in points:
        shadow.rollback(point)
        shadow.sync()
        state = shadow.state()
        broken = effects.still_broken(shadow, state)
        for part in sorted(shadow.sk.components):
            for template in sorted(effects.UNDOING):
                copy = graphs.named("state", "copy-for-test")
                restore(shadow.store, copy, [ox.Quad(q.subject, q.predicate, q.object, copy) for q in point.state])
                shadow.store.update(template, state=copy, system=shadow.system_graph, target=shadow.iri_of(part))
                after = read_state(shadow.store, copy, shadow.sk, frozenset(state_quads(shadow.store, copy)))
                shadow.store.raw.remove_graph(copy)
                shadow.store.touch()
                if part not in broken:
                    assert after == state, (part, template)
                seen[part in broken] += after != state
    assert seen[False] == 0 and seen[True] > 0


def test_a_step_ends_alike_whatever_else_was_repaired(torch_store):
    """Shadow.reads: a step's report, end and state are the same for every set of repaired
    parts with the same ones among those it names (a model remembers predictions by them)."""
    shadow, points = _fault_worlds(torch_store)
    steps = _steps(shadow)
    compared = read = 0
    for point in points[::2]:
        for step in steps:
            shadow.rollback(point)
            expected = _report(shadow, step)
            end, reads = shadow.end, shadow.reads
            read += bool(reads)
            for part in sorted(set(shadow.sk.components) - reads - point.repaired):
                shadow.rollback(dataclasses.replace(point, repaired=point.repaired | {part}))
                got = _report(shadow, step)
                assert got[:4] == expected[:4] and got[5] == expected[5] and shadow.end == end, (step, part)
                compared += 1
    assert compared > 100 and read > 0


def test_naming_costs_at_least_its_floor(torch_store):
    """verification.least_naming_cost bounds what naming costs in every world (the scoring's
    bound reads it): every one and every two parts of the torch named in every single-fault
    world cost at least that, and some cost exactly that."""
    shadow, points = _fault_worlds(torch_store)
    parts = sorted(shadow.sk.components)
    named = [{p} for p in parts] + [{p, q} for i, p in enumerate(parts) for q in parts[i + 1:]]
    exact = 0
    for point in points:
        for hypothesis in named:
            shadow.rollback(point)
            out, cost, *_ = shadow.step(Hypothesis(hypothesis))
            floor = verification.least_naming_cost(shadow, hypothesis)
            assert cost >= floor > 0, (hypothesis, cost, floor)
            exact += cost == floor
    assert exact > 0
    assert verification.least_naming_cost(shadow, {"no-such-part"}) == 0.0
