"""The model-based assistant and a part's own loose terminal, on the torch of tests/support/torch.py
(written in the tests, not shipped).

A component's own terminal coming off is a fallback candidate (tried once nothing else explains,
``terminal_prior`` 0): a cable's end is the likelier place. But once only loose connections explain
what was seen, the contact comes and goes, and a part's own loose terminal is as much a candidate
as a lead's loose end (``loose_terminal_prior``). Before, on the shipped 3CC-CS.I.3 (the relay's
own loose terminal) the assistant named six loose leads one by one and ran out of rounds."""

from __future__ import annotations

import pytest

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.torch import TORCH, loose_scenario
from ..support.worlds import KeptOpen


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("loose")
    files = [folder / "torch.ttl", folder / "lt.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(loose_scenario("TORCH.LT", 9150, "bulb.n", "ReplaceComponent", "The bulb's own terminal loose",
                                       "Now and then the bulb goes out; the green LED stays lit."))
    out = KnowledgeStore.memory()
    load_files(out, files)
    return out


def loose_own_terminals(assistant: ModelBasedAssistant) -> set[str]:
    """The parts whose own loose terminal is a live candidate."""
    space = assistant.space
    return {next(iter(c.faulty)) for c, _ in space.live
            if len(c.faults) == 1 and c.faults[0].probability is not None and space.own_terminal(c)}


def started(store: KnowledgeStore, **config) -> KeptOpen:
    """An assistant on TORCH.LT (seed 1: the bulb dark at the start) with the candidates of what was
    seen at the start."""
    assistant = KeptOpen(**config)
    run_session("TORCH.LT", assistant, store=store, seed=1, budget=1, record=False)
    assistant.worlds.steps.clear()
    assistant.space.live.clear()
    assistant.space.loose_in.clear()
    assistant.space.begin()
    return assistant


def chance(c) -> bool:
    return any(f.probability is not None for f in c.faults)


def test_once_only_loose_connections_explain_the_parts_own_loose_terminals_join(store):
    assistant = started(store)
    space = assistant.space
    # a dark bulb: loose leads explain it, and so do faults that do not come and go (a burnt bulb…)
    assert any(chance(c) for c, _ in space.live) and not all(chance(c) for c, _ in space.live)
    assert not loose_own_terminals(assistant)
    # once only loose connections are left (a report showed the bulb lit again), the parts' own join
    space.live = [(c, point) for c, point in space.live if chance(c)]
    leads = {next(iter(c.faulty)) for c, _ in space.live}
    space.loose_terminals()
    assert {"bulb", "sw"} <= loose_own_terminals(assistant)
    assert leads <= {next(iter(c.faulty)) for c, _ in space.live}       # beside the leads' loose ends
    # weighed below a lead's loose end
    priors = {space.own_terminal(c): c.prior for c, _ in space.live}
    assert priors[True] < priors[False]
    # not with loose_terminal_prior 0: a fallback only, as before
    without = started(store, loose_terminal_prior=0)
    without.space.live = [(c, point) for c, point in without.space.live if chance(c)]
    without.space.loose_terminals()
    assert not loose_own_terminals(without)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bulbs_own_loose_terminal_is_found(store, seed):
    result = run_session("TORCH.LT", ModelBasedAssistant(), store=store, seed=seed)
    assert result.end in ("success", "success_no_hypothesis"), [r.outcome.intention for r in result.record.rounds]
    named = {p for r in result.record.rounds if r.outcome.verdict for p in r.outcome.data.get("candidates", ())}
    assert "bulb" in named or result.end == "success_no_hypothesis"
