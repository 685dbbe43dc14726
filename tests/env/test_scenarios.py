"""Every shipped scenario, end to end through the service agent (one
parametrised test per check, over the scenario files):

* the fault is observable (not nominal after injection);
* the ideal repair, executed action by action, restores the system;
* a hypothesis naming every part still faulty is verified correct; one naming only the scenario's
  faulty components is correct when they are all that is broken, partial otherwise (honest success);
* a hypothesis naming a healthy component is wrong and costs the repair it implies, with the access it needs.
"""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env import verification
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.env.verification import CABLE_PORT_COST, COMPONENT_REPAIR_COST
from diagkg.kg.resources import catalog_files

from ..support.stores import shipped_store

FILES = [f.name for f in catalog_files()]
NUMBERS = [int(name.split("-", 1)[0]) for name in FILES]


@pytest.fixture(scope="module")
def catalog():
    return ScenarioCatalog(shipped_store())


# Each test ends its sessions (``with``), as a user's code does: a session's working memory goes back to the pool
# and the next session on the same system takes it, emptied of everything but its seed, instead of copying the
# ontology, the system and its inferences again (most of this file's time when the sessions were left open).


def test_file_names_match_their_scenario(catalog):
    assert NUMBERS == sorted(NUMBERS) and len(set(NUMBERS)) == len(NUMBERS)
    for name, number in zip(FILES, NUMBERS, strict=True):
        scenario = catalog.resolve(number)
        assert name == f"{number:03d}-{scenario.id}.ttl"


@pytest.mark.parametrize("number", NUMBERS)
def test_fault_is_observable(catalog, number):
    with diagkg.make(catalog.resolve(number), store=catalog.store) as session:
        session.reset(seed=0)
        assert not session.is_nominal(), "the injected faults leave the system working"


@pytest.mark.parametrize("number", NUMBERS)
def test_ideal_repair_restores_the_system(catalog, number):
    scenario = catalog.resolve(number)
    with diagkg.make(scenario, store=catalog.store) as session:
        session.reset(seed=0)
        assert scenario.repair, "no ideal repair"
        for step in scenario.repair:
            obs, cost, terminated, truncated, info = session.step(diagkg.Action(step.action, step.targets, step.value))
            assert obs["success"], f"step {step.position} ({step.action} {step.targets}) failed: {obs['message']}"
            assert cost > 0
            if terminated:
                break
        assert session.end == "success_no_hypothesis", f"still broken after the ideal repair (end: {session.end})"
        assert session.is_nominal()


@pytest.mark.parametrize("number", NUMBERS)
def test_correct_hypothesis_is_correct(catalog, number):
    scenario = catalog.resolve(number)
    with diagkg.make(scenario, store=catalog.store) as session:
        session.reset(seed=0)
        broken = frozenset(verification.still_broken(session, session.state()))
        assert scenario.faulty <= broken, f"a stated faulty part is not broken: {sorted(scenario.faulty - broken)}"
        obs, cost, terminated, truncated, info = session.step(diagkg.Hypothesis(broken))
        assert obs["verdict"] == "correct", obs["message"]
        assert terminated and info["end"] == "success"
        left_out = (verification.injected_parts(session) & broken) - scenario.faulty
    if left_out:       # a part with a fault of its own left out: naming the stated parts is no success
        with diagkg.make(scenario, store=catalog.store) as again:
            again.reset(seed=0)
            obs, _, terminated, _, info = again.step(diagkg.Hypothesis(scenario.faulty))
            assert obs["verdict"] == "partial", obs["message"]
            assert info.get("end") != "success"


@pytest.mark.parametrize("number", NUMBERS)
def test_healthy_component_hypothesis_is_wrong(catalog, number):
    scenario = catalog.resolve(number)
    with diagkg.make(scenario, store=catalog.store) as session:
        session.reset(seed=0)
        broken = verification.still_broken(session, session.state())
        healthy = next(c for c in sorted(session.sk.components)
                       if c not in broken and c not in scenario.removed and c not in scenario.faulty)
        access = sum(c for _, _, c in verification.access_steps(session, healthy))    # opening what hides it
        obs, cost, terminated, truncated, info = session.step(diagkg.Hypothesis({healthy}))
        assert obs["verdict"] == "wrong", obs["message"]
        expected = CABLE_PORT_COST if session.sk.components[healthy].type == "Cable" else COMPONENT_REPAIR_COST
        assert cost == expected + access
        assert not terminated
