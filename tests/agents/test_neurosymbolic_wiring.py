"""The neuro-symbolic assistant on a system that declares no functions (the torch of
tests/support/torch.py, written in the tests, declares none; nor do the random systems of
benchmarks/unwritten_systems.py): its dependencies come from the wiring, each part needing those whose
opening puts it out or stops its current. Before, it had none on such a system and measured and
inspected the lamps' own parts until the rounds ran out (102 of 211 generated scenarios on six random
systems solved; 138 with the wiring's)."""

from __future__ import annotations

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.agents.neurosymbolic_knowledge import Knowledge, wired_dependencies
from diagkg.env.service import simulator_for
from diagkg.runs.runner import run_session

from ..support.stores import shipped_store
from ..support.torch import torch_memory_store


def test_a_system_without_functions_gets_its_dependencies_from_the_wiring(tmp_path):
    store = torch_memory_store(tmp_path)
    knowledge = Knowledge.of(store, "torch")
    assert not knowledge.deps           # none declared
    deps = knowledge.wired
    # the bulb needs the battery, the switch and both leads; the LED the battery and its resistor
    assert deps["bulb"] == {"bat", "sw", "lead", "ret"}
    assert {"bat", "r_led"} <= deps["led"] and "sw" not in deps["led"] and "bulb" not in deps["led"]
    assert deps == wired_dependencies(simulator_for(store, "torch"))
    # a session on it runs with them (TORCH.1: a flat battery)
    assistant = NeuroSymbolic()
    result = run_session("TORCH.1", assistant, store=store, seed=0, record=False)
    assert result.end in ("success", "success_no_hypothesis") and assistant.deps == deps
    plain = NeuroSymbolic(wiring=False)
    run_session("TORCH.1", plain, store=store, seed=0, budget=1, record=False)
    assert plain.deps == {}


def test_a_system_that_declares_functions_keeps_its_own():
    store = shipped_store()
    knowledge = Knowledge.of(store, "three_cubes")
    wired = wired_dependencies(simulator_for(store, "three_cubes"))
    assert knowledge.deps and knowledge.deps != wired and not knowledge.wired   # the description's, not the wiring's
