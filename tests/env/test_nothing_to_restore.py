"""A scenario whose faults stop nothing a session judges by — the LED's resistor making contact now and then, on the
indicator's branch alone, which stops no repair (``diagkg check`` reports it, but ``load`` and ``evaluate`` take
it) — is restored by no action: every session ended in ``success_no_hypothesis`` at its first action, a look at the
bulb for 10 minutes. Only a correct hypothesis ends it in success now. On the torch, written in the tests."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.kg.loading import load_files

from ..support.torch import loose_scenario, torch_memory_store


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("torch")
    store = torch_memory_store(folder)
    (folder / "li.ttl").write_text(loose_scenario("TORCH.LI", 9183, "r_led.n", "ReplaceComponent", "Loose LED resistor",
                                                  "The green LED flickers; the torch lights."))
    load_files(store, [folder / "li.ttl"])
    return store


@pytest.mark.parametrize("seed", [0, 1])
def test_no_action_restores_a_system_its_faults_do_not_stop(torch, seed):
    with diagkg.make("TORCH.LI", torch) as session:
        session.reset(seed=seed)
        for action in (Action("observe_component", ("bulb",)), Action("replace_component", ("bulb",)),
                       Action("observe_component", ("no_such_part",))):
            *_, terminated, truncated, info = session.step(action)
            assert (terminated, info["end"]) == (False, None), action
        outcome, _, terminated, _, info = session.step(Hypothesis(frozenset({"r_led"})))
        assert (outcome["verdict"], terminated, info["end"]) == ("correct", True, "success")


def test_a_scenario_whose_faults_stop_the_system_still_ends_at_the_repair(torch):
    with diagkg.make("TORCH.2", torch) as session:      # the bulb's lead off
        session.reset(seed=0)
        *_, terminated, _, info = session.step(Action("reconnect_cable", ("lead",)))
        assert (terminated, info["end"]) == (True, "success_no_hypothesis")
