"""A crashed session keeps its diagnosis figures: an assistant that replaced healthy parts and then raised was stored
with the rounds it played (their healthy parts included) but no ``dk:falseRemovals``, so the isolation table read
no false removals for it, where one that stopped instead read them all. On a torch written in the test."""

from __future__ import annotations

import pytest

from diagkg.agents import registry
from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, regret
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from tests.support.torch_optimum import CASES, write_files


class Shotgun(BaseAssistant):
    """Replaces the switch and the LED's resistor (both healthy when the battery is flat), then stops."""

    name = "adv-shotgun-stop"
    api_version = 3

    def setup(self, briefing):
        super().setup(briefing)
        self.todo = ["sw", "r_led"]

    def suggest(self):
        return Action("replace_component", (self.todo.pop(0),)) if self.todo else None


class ShotgunCrash(Shotgun):
    """The same replacements, then it raises instead of stopping."""

    name = "adv-shotgun-crash"

    def suggest(self):
        if self.todo:
            return Action("replace_component", (self.todo.pop(0),))
        raise RuntimeError("nothing worked: crash rather than stop")


def test_a_crashed_session_counts_its_false_removals(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")
    for cls in (Shotgun, ShotgunCrash):
        registry.register(cls.name, cls)
    try:
        with KnowledgeStore(tmp_path / "store") as store:
            load_files(store, write_files(tmp_path, [CASES[0]]))       # the battery is flat
            campaign = cp.create(store, cp.CampaignConfig(assistants=(Shotgun.name, ShotgunCrash.name),
                                                          scenarios=(CASES[0]["n"],), name="crash"))
            execution.run(store, campaign)
            for rescore in (False, True):        # from the slot tallies and from the trajectories
                tables = {t.name: t for t in regret.tables(store, [campaign.id], rescore=rescore)}
                rows = {r[1]: dict(zip(tables["isolation"].columns, r, strict=True)) for r in tables["isolation"].rows}
                assert rows[Shotgun.name]["false removals"] == 2.0
                assert rows[ShotgunCrash.name]["false removals"] == 2.0, rescore
                costs = {r[1]: dict(zip(tables["regret"].columns, r, strict=True)) for r in tables["regret"].rows}
                assert costs[ShotgunCrash.name]["mean cost"] == pytest.approx(240.0)
    finally:
        for cls in (Shotgun, ShotgunCrash):
            registry._REGISTERED.pop(cls.name, None)
