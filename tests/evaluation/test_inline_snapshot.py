"""A campaign run in its own process (one worker) reads the knowledge as it started, as worker processes do:
an outside operator's ``diagkg update`` of a system mid-run (a 12 V battery set to 1.5 V) reached the sessions
still to run with one worker (944 of 2,250 ran on the new battery, recorded as the old version, the report a blend
of both) and none with two. On the torch (written in the tests), on disk: an assistant updates the store through a
handle of its own (as another process would) during the campaign's first session, then every session reads the
battery's voltage."""

from __future__ import annotations

import time

import pytest

from diagkg.agents import registry
from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution
from diagkg.evaluation.campaign import CampaignConfig
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.updates import apply_update

from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

READ: list[float] = []
STORE: list[str] = []
HALF_FLAT = """PREFIX dk: <https://w3id.org/diagkg/ontology#>
DELETE { GRAPH ?g { <https://example.org/torch/bat> dk:voltage ?v } }
INSERT { GRAPH ?g { <https://example.org/torch/bat> dk:voltage 1.5 } }
WHERE { GRAPH ?g { <https://example.org/torch/bat> dk:voltage ?v } }"""


class Meter(BaseAssistant):
    """Measures the battery once; the first time, another handle on the store sets it to 1.5 V first."""

    name = "meter"
    api_version = 3

    def suggest(self):
        if self.outcomes:
            return None
        if not READ:
            apply_update(KnowledgeStore(STORE[0]), HALF_FLAT)
        elif len(READ) == 1:
            time.sleep(1.2)         # the first trajectory is then committed (after a second), the store read again
        return Action("measure_voltage", ("bat",))

    def record(self, outcome):
        super().record(outcome)
        volts = outcome.data["bat"].port_voltages
        READ.append(round(volts["pos"] - volts["neg"], 2))


@pytest.fixture()
def meter():
    registry.register("meter", Meter)
    yield
    registry._REGISTERED.pop("meter", None)
    READ.clear()
    STORE.clear()


def test_a_system_updated_mid_campaign_does_not_reach_its_sessions(tmp_path, meter):
    files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl", tmp_path / "t2.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**LOOSE_LEAD))
    files[2].write_text(scenario_text(**{**FLAT, "mode": "OpenComponent", "target": "bulb", "faulty": "bulb"}))
    STORE.append(str(tmp_path / "store"))
    store = KnowledgeStore(STORE[0])
    load_files(store, files)
    campaign = cp.create(store, CampaignConfig(assistants=("meter",), scenarios=(9101, 9102), runs=2, name="mid"))
    execution.run(store, campaign, workers=1)
    assert len(READ) == 4 and set(READ) == {6.0}, READ          # every session on the battery as it started
    store.refresh()
    voltage = "SELECT ?v WHERE { <https://example.org/torch/bat> <https://w3id.org/diagkg/ontology#voltage> ?v }"
    assert store.select(voltage)[0]["v"] == 1.5                 # (the update itself went through)
