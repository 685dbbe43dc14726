"""A success that leaves a fault (a broken indicator stops no repair, so replacing the lamp alone ends a session in
success with the LED still broken) was counted like any other, and no figure told it apart. Every session now
records how many parts faulty at the start no repair reached (dk:faultsLeft), and the report's
``figure-faults-left`` table counts the successes that left one. On the torch, written in the tests."""

from __future__ import annotations

import pytest

from diagkg.agents import registry
from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, regret
from diagkg.kg.loading import load_files

from ..support.torch import SCENARIO, torch_memory_store

BOTH = (SCENARIO.format(id="TORCH.9", number=9109, label="Bulb and LED open", system="torch", mode="OpenComponent",
                        target="bulb", faulty="bulb", repair="ReplaceComponent",
                        symptoms="The torch stays dark when switched on, and the green LED is dark too.")
        .replace("dk:faultTarget sys:bulb ] ;",
                 "dk:faultTarget sys:bulb ] , [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:led ] ;")
        .replace("dk:faultyComponent sys:bulb ;", "dk:faultyComponent sys:bulb, sys:led ;")
        .replace("dk:target sys:bulb ] ] ;", "dk:target sys:bulb ] ,\n        [ a dk:DiagnosticAction ; dk:position 2 ; "
                 "dk:actionType dk:ReplaceComponent ; dk:target sys:led ] ] ;"))


class LampOnly(BaseAssistant):
    """Replaces the bulb, and stops there."""

    name = "lamp-only"
    api_version = 3

    def suggest(self):
        return None if self.outcomes else Action("replace_component", ("bulb",))


@pytest.fixture()
def lamp_only():
    registry.register("lamp-only", LampOnly)
    yield
    registry._REGISTERED.pop("lamp-only", None)


def test_a_success_that_leaves_the_indicator_broken_is_counted(tmp_path, lamp_only):
    store = torch_memory_store(tmp_path)
    (tmp_path / "both.ttl").write_text(BOTH)
    load_files(store, [tmp_path / "both.ttl"])
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle", "lamp-only"), scenarios=(9101, 9109),
                                                  name="left"))
    execution.run(store, campaign)
    ends = {key[:2]: r.end for key, r in cp.recorded(store, campaign).items()}
    assert ends[("lamp-only", 9109)] == "success_no_hypothesis"      # the lamp lights: the LED stops no repair
    (table,) = [t for t in regret.extra_tables(store, [campaign.id]) if t.name == "figure-faults-left"]
    rows = {r[1]: dict(zip(table.columns, r, strict=True)) for r in table.rows}
    assert (rows["lamp-only"]["successes"], rows["lamp-only"]["leavingFaults"], rows["lamp-only"]["faultsLeft"]) == (1, 1, 1)
    # the oracle plays the ideal repair, and its session ends once the lamp lights: after the bulb, as this one's
    # did; on the flat battery it leaves nothing
    assert (rows["oracle"]["successes"], rows["oracle"]["leavingFaults"], rows["oracle"]["faultsLeft"]) == (2, 1, 1)
