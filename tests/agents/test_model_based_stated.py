"""The reported symptoms as data (a scenario's ``dk:statedSymptom``), on the torch of
tests/support/torch.py (written in the tests, not shipped).

A lamp reported flickering may be seen lit at the start: a loose end happened to make contact. The
model-based assistant read only the lights it saw, so every world that keeps the lamp lit agreed, and
on a random system nobody wrote (benchmarks/unwritten_systems.py) it inspected every part's ends in
turn and ran out of rounds. The briefing now carries the report as data (``Briefing.stated``, also in
a plug-in's ``briefing`` message), and a world must be able to show such a lamp lit and dark: one that
cannot (no loose connection on its way) is not a candidate."""

from __future__ import annotations

import pytest

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.agents.registry import Briefing
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.exec_boundary import Limits, briefing_message
from diagkg.runs.exec_host import briefing_of
from diagkg.runs.runner import run_session

from ..support.torch import TORCH, loose_scenario
from ..support.worlds import KeptOpen

STATED = ("dk:statedSymptom [ dk:about sys:bulb ; dk:appearance dk:Flickering ], "
          "[ dk:about sys:led ; dk:appearance dk:Lit ] ;\n    dk:actionBudget 10 .")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("stated")
    files = [folder / "torch.ttl", folder / "flicker.ttl"]
    files[0].write_text(TORCH)
    text = loose_scenario("TORCH.FL", 9160, "lead.n", "ReconnectCable", "The bulb lead loose",
                          "The bulb flickers; the green LED is lit.")
    files[1].write_text(text.replace("dk:actionBudget 10 .", STATED))
    out = KnowledgeStore.memory()
    load_files(out, files)
    return out


def lit_at_start(store: KnowledgeStore) -> list[int]:
    """The seeds (of the first ten) whose session starts with the bulb lit."""
    out = []
    for seed in range(10):
        assistant = KeptOpen()
        run_session("TORCH.FL", assistant, store=store, seed=seed, budget=1, record=False)
        if assistant.briefing.lights.get("bulb") == "on":
            out.append(seed)
    return out


def test_the_briefing_carries_the_report_as_data_in_process_and_to_a_plugin(store):
    assistant = KeptOpen()
    run_session("TORCH.FL", assistant, store=store, seed=0, budget=1, record=False)
    brief = assistant.briefing
    assert brief.stated == {"bulb": "Flickering", "led": "Lit"}
    message = briefing_message(brief, Limits(), {})
    assert message["stated"] == brief.stated
    assert briefing_of(message).stated == brief.stated
    assert Briefing(system="torch", description="", symptoms="", visible="", parts={}, labels={}, catalogue={},
                    budget=1, seed=0).stated == {}


def test_a_world_that_cannot_make_the_reported_lamp_come_and_go_is_no_candidate(store):
    seeds = lit_at_start(store)
    assert seeds, "no seed starts with the bulb lit"
    assistant = KeptOpen()
    run_session("TORCH.FL", assistant, store=store, seed=seeds[0], budget=1, record=False)
    space = assistant.space
    assistant.worlds.steps.clear()
    space.live.clear()
    space.begin()
    chance = [any(f.probability is not None for f in c.faults) for c, _ in space.live]
    assert chance and all(chance)
    # without the report (``stated`` off), worlds that keep the bulb lit for good agree with the lights seen
    without = KeptOpen(stated=False)
    run_session("TORCH.FL", without, store=store, seed=seeds[0], budget=1, record=False)
    assert not without.worlds.flickering
    without.worlds.steps.clear()
    without.space.live.clear()
    without.space.begin()
    assert not all(any(f.probability is not None for f in c.faults) for c, _ in without.space.live)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_loose_lead_is_found_whether_the_bulb_starts_lit_or_dark(store, seed):
    result = run_session("TORCH.FL", ModelBasedAssistant(), store=store, seed=seed, record=False)
    assert result.end in ("success", "success_no_hypothesis"), [r.outcome.intention for r in result.record.rounds]
